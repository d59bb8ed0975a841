"""The Regions view on many instances: the instance table holds a window of them,
which follows the cursor, so opening it costs the same at 38,400 instances as at 40."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.synthetic import naive_like_doc, whole_run_doc, write_doc
from tests.test_tui_pilot import wait_loaded
from tui import regions_data
from tui.app import AttnTuiApp
from tui.regions_data import needs_move, window_of
from tui.widgets.regions_view import RegionsView


def test_window_of_and_needs_move():
    assert window_of(5, 3, 10) == (0, 5)
    assert window_of(100, 0, 10) == (0, 10)
    assert window_of(100, 50, 10) == (45, 55)
    assert window_of(100, 99, 10) == (90, 100)
    assert not needs_move(0, 10, 100, 1, 2) and needs_move(0, 10, 100, 8, 2)
    assert needs_move(45, 55, 100, 46, 2) and not needs_move(90, 100, 100, 99, 2)


@pytest.fixture
def many(tmp_path: Path) -> Path:
    return write_doc(tmp_path / "many.json", naive_like_doc(40))


@pytest.fixture
def whole_run(tmp_path: Path) -> Path:
    """Six steps inside one annotation ``whole``: an instance with dozens of GPU events."""
    return write_doc(tmp_path / "whole.json", whole_run_doc(6))


async def test_instance_window_follows_the_cursor(many, monkeypatch):
    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 10)
    app = AttnTuiApp([str(many)], theme="attn-dark")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        view = app.query_one(RegionsView)
        assert view.current_region.name == "attn_fwd" and view.current_region.count == 40
        table = view.instances_table
        assert table.row_count == 10
        await pilot.press("enter")
        for _ in range(25):
            await pilot.press("down")
        await pilot.pause()
        assert view.current_instance.index == 25
        assert table.row_count == 10
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        assert key == "25"  # the cursor is on instance 25 in the moved window
        for _ in range(25):
            await pilot.press("up")
        await pilot.pause()
        assert view.current_instance.index == 0 and table.cursor_row == 0
        await pilot.press("down", "enter")
        assert view.kernels_table.has_focus and view.kernels


async def test_gpu_event_window_follows_the_cursor(whole_run, monkeypatch):
    """An instance holding many GPU events lists a window of them (not a table of
    all), and the window moves with the cursor; zoom and occurrences read the row
    under the cursor, not its place in the window."""
    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 10)
    app = AttnTuiApp([str(whole_run)], theme="attn-dark")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        view = app.query_one(RegionsView)
        view.choose_region(next(i for i, r in enumerate(view.regions) if r.name == "whole"))
        await pilot.pause()
        n = len(view.kernels)
        assert n == view.current_instance.gpu_events > 30 and view.kernels_table.row_count == 10
        assert f"· {n} GPU events" in str(view.kernels_table.border_title)
        view.kernels_table.focus()
        for _ in range(25):
            await pilot.press("down")
        await pilot.pause()
        table = view.kernels_table
        assert table.row_count == 10
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "25"
        k = view.kernels[25]
        assert str(app.query_one("#kernel-name").render()).startswith(f"{k.kind} 25: {k.name}")
        await pilot.press("z")
        await pilot.pause()
        assert app.pane.model.selected == k.row
