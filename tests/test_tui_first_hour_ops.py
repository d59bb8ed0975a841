"""Issue 12's TUI points about the Ops view (a new user's first hour), driven with
Pilot at 80x24 and 140x45: its columns fit the window and keep the sort, calls and
device columns; its footer explains self CUDA over 100%; the regex filter's error
shows inline, without toasts."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.tui_first_hour import SIZES, make_app, messages, write_naive
from tui.ops_table import CELL_PAD
from tui.widgets.ops_view import OpsView

from .test_tui_pilot import wait_loaded


@pytest.fixture
def naive_path(tmp_path):
    return write_naive(tmp_path)


# ---- 9: the Ops table fits the window; device, sort and calls always show ----


def _shown_width(view: OpsView, n_shown: int) -> int:
    table = view.table
    return sum(c.get_render_width(table) for c in list(table.columns.values())[:n_shown])


@pytest.mark.parametrize("size", SIZES)
async def test_ops_columns_fit_and_keep_sort_calls_and_device(naive_path, size):
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        view = app.query_one(OpsView)
        for presses in range(len(view.columns)):  # every column in turn, by o
            keys = [c.key for c in view.columns]
            shown = next(i for i in range(len(keys), 0, -1)
                         if _shown_width(view, i) <= view.table.size.width)  # fmt: skip
            on_screen = set(keys[:shown])
            assert {"key", "device_type", "count", view.sort_key} <= on_screen, (presses, keys)
            await pilot.press("o")
        attn = [r for r in view.shown if r["key"] == "attn_fwd"]
        assert {r["device_type"] for r in attn} == {"CPU", "CUDA"}
        assert view.name_width >= 20


async def test_ops_name_column_grows_with_the_window(naive_path):
    widths = []
    for size in SIZES:
        app = make_app(naive_path)
        async with app.run_test(size=size) as pilot:
            await wait_loaded(pilot)
            await pilot.press("3")
            view = app.query_one(OpsView)
            widths.append(view.name_width)
            longest = max(len(r["key"]) for r in view.all_rows)
            assert view.name_width <= max(longest, 20)
            # every shown column fits in the table, name column included
            total = sum(c.get_render_width(view.table) for c in view.table.columns.values())
            assert total >= view.name_width + CELL_PAD
    assert widths[0] <= widths[1]


async def test_ops_footer_explains_self_cuda_over_100(naive_path):
    app = make_app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        view = app.query_one(OpsView)
        over = [r for r in view.all_rows if r["self_device_pct"] > 100]
        footer = str(app.query_one("#ops-footer").render())
        assert over, "the synthetic trace has a GPU annotation over 100%"
        assert "above 100" in footer and "annotation" in footer


# ---- 10: the regex filter: error inline once, filter applied when valid ----


@pytest.mark.parametrize("size", SIZES)
async def test_ops_regex_filter_errors_inline_without_toasts(naive_path, size):
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3", "f", *"re:^aten::m")
        view = app.query_one(OpsView)
        valid = [r["key"] for r in view.shown]
        assert valid and all(re.match("^aten::m", k) for k in valid)
        await pilot.press("(")  # re:^aten::m( does not compile
        error = app.query_one("#ops-filter-error")
        assert error.display and "regex" in str(error.render())
        assert [r["key"] for r in view.shown] == valid  # the last valid filter stays
        await pilot.press(*"ul|ask)")
        assert not error.display and view.filter_error == ""
        want = {r["key"] for r in view.all_rows if re.match("(?i)^aten::m(ul|ask)", r["key"])}
        assert {r["key"] for r in view.shown} == want and "aten::masked_fill" in want
        assert not messages(app)  # no toast on the way
        await pilot.press("escape")
        assert view.table.has_focus
