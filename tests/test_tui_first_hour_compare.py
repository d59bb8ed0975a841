"""Issue 12's TUI points about Compare and the instances (a new user's first hour),
driven with Pilot at 80x24 and 140x45: 4 works from every view, the Compare header
and its vs first column are on screen, the GPU events title names the instance."""

from __future__ import annotations

import pytest

from tests.fixtures.synthetic import naive_like_doc, write_doc
from tests.fixtures.tui_first_hour import SIZES, make_app, write_naive

from .test_tui_pilot import wait_loaded, wait_until


@pytest.fixture
def naive_path(tmp_path):
    return write_naive(tmp_path)


# ---- 11: 4 (Compare) works from every view ----


@pytest.mark.parametrize("size", SIZES)
async def test_compare_key_works_from_every_view(naive_path, tmp_path, size):
    other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    app = make_app(naive_path, other)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        tabs = app.query_one("#files")
        for view in ("1", "2", "3", "5", "3", "2"):
            await pilot.press(view)
            await wait_until(pilot, lambda: tabs.active == "file-0", f"view {view}'s tab")
            await pilot.press("4")
            await wait_until(pilot, lambda: app.focused is not None
                             and app.focused.id == "compare-table", f"4 from view {view}")
            assert tabs.active == "compare", f"4 from view {view}"


# ---- 13 and 16: the Compare header and its vs first column; which instance ----


@pytest.mark.parametrize("size", SIZES)
async def test_compare_header_whole_and_vs_first_on_screen(naive_path, tmp_path, size):
    from tui.widgets.compare_view import CompareView

    other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    app = make_app(naive_path, other)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("4")
        view = app.query_one(CompareView)
        for _ in range(200):
            if view.state == "ready":
                break
            await pilot.pause(0.05)
        status = str(app.query_one("#compare-status").render())
        assert "vs first = GPU time per instance over the first file's" in " ".join(status.split())
        table = view.table
        columns = list(table.columns.values())
        keys = [str(c.key.value) for c in columns]
        upto = keys.index("vs first") + 1
        assert sum(c.get_render_width(table) for c in columns[:upto]) <= table.size.width


@pytest.mark.parametrize("size", SIZES)
async def test_gpu_events_title_names_the_instance(naive_path, size):
    from tui.widgets.regions_view import RegionsView

    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2", "enter", "down")
        view = app.query_one(RegionsView)
        inst = view.current_instance
        title = str(view.kernels_table.border_title)
        n = len(view.current_region.instances)
        assert f"{inst.name} #{inst.index} (2 of {n})" in title
