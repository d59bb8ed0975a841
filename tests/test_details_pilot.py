"""The details panel driven with keys: expand, scroll, collapse, copy as JSON."""

from __future__ import annotations

import json

from profiling.trace.model import Kind
from tests.conftest import SAMPLE_TRACES
from tui.app import AttnTuiApp
from tui.widgets.details import Details
from tui.widgets.timeline import Timeline

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"


def _kernel(trace) -> int:
    return next(r for r in range(len(trace))
                if trace.kind[r] == Kind.KERNEL and trace.name(r).startswith("nvjet"))


async def test_expand_scroll_collapse_and_copy_a_kernel():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        trace = app.pane.model.trace
        kernel = _kernel(trace)
        timeline = app.query_one(Timeline)
        timeline.select_row(kernel)
        await pilot.pause()
        details = app.query_one(Details)
        text = str(details.render())
        for arg in ("grid", "block", "registers per thread", "shared memory", "correlation",
                    "External id", "208.2 KiB"):
            assert arg in text, arg
        small = details.size.height
        assert details.max_scroll_y > 0  # more rows than the panel shows under the timeline

        await pilot.press("i")
        assert details.expanded and app.focused is details
        assert not timeline.display and details.size.height > 2 * small
        assert details.max_scroll_y > 0  # 80x24: even the full-height pane scrolls
        await pilot.press("j", "j")
        assert details.scroll_y == 2
        await pilot.press("end")
        assert details.scroll_y == details.max_scroll_y
        await pilot.press("home")
        assert details.scroll_y == 0

        await pilot.press("y")
        copied = json.loads(app.clipboard)
        assert copied["name"] == trace.name(kernel) and copied["args"]["grid"] == [2, 66, 1]

        await pilot.press("escape")
        assert not details.expanded and timeline.display and app.focused is timeline
        assert details.size.height == small

        await pilot.press("i", "3")  # another view while expanded, then back
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        assert not details.expanded and timeline.display and app.focused is timeline


async def test_tab_focuses_the_panel_and_the_arrows_scroll_it():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        timeline = app.query_one(Timeline)
        timeline.select_row(_kernel(app.pane.model.trace))
        await pilot.pause()
        details = app.query_one(Details)
        await pilot.press("tab")
        assert app.focused is details and not details.expanded
        await pilot.press("down", "down", "down")
        assert details.scroll_y == min(3, details.max_scroll_y) > 0
        await pilot.press("escape")
        assert app.focused is timeline
        app.query_one(Timeline).select_row(_kernel(app.pane.model.trace) - 1)  # another event
        await pilot.pause()
        assert details.scroll_y == 0  # a new selection starts at its name


async def test_y_without_a_selection_copies_nothing():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("y")
        assert app.clipboard == ""
        assert any("nothing to copy" in n.message for n in app._notifications)


def test_snapshot_details_expanded(monkeypatch, snap_compare):
    # relative path: the picture says "naive.json.gz", not where the repo lives
    monkeypatch.chdir(SAMPLE_TRACES)
    app = AttnTuiApp(["naive.json.gz"], theme="attn-dark")

    async def expanded(pilot) -> None:
        await wait_loaded(pilot)
        pilot.app.query_one(Timeline).select_row(_kernel(pilot.app.pane.model.trace))
        await pilot.pause()
        await pilot.press("i")

    assert snap_compare(app, terminal_size=(80, 24), run_before=expanded)
