"""Pilot tests: drive the app with keys and assert on its state."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from profiling.trace.model import Kind
from tests.fixtures.synthetic import MEMCPY, naive_like_doc, write_doc
from tui.app import AttnTuiApp
from tui.screens.help import HelpScreen
from tui.screens.search import SearchScreen
from tui.widgets.ops_view import OpsView
from tui.widgets.regions_view import RegionsView
from tui.widgets.timeline import Timeline

SAMPLE_NAIVE = Path(__file__).resolve().parent.parent / "sample_traces" / "naive.json.gz"


async def wait_loaded(pilot, timeout: float = 30.0) -> None:
    """Until every pane is loaded and shows its analysis (``TracePane.busy``)."""
    await wait_until(pilot, lambda: not any(p.busy for p in pilot.app.panes),
                     "the load and its analysis", timeout)


async def wait_until(pilot, done, what: str, timeout: float = 30.0) -> None:
    """Let the app run until ``done()`` is true; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)
    await pilot.pause()


@pytest.fixture
def naive_path(tmp_path: Path) -> Path:
    return write_doc(tmp_path / "naive.json", naive_like_doc(3, odd_name="[bold]x\x1b[2J"))


def _app(*paths) -> AttnTuiApp:
    return AttnTuiApp([str(p) for p in paths], theme="attn-dark")


async def test_timeline_fold_zoom_pan_select(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        pane = app.pane
        assert pane.state == "ready" and pane.view == "timeline"
        timeline = app.query_one(Timeline)
        assert app.focused is timeline
        model = pane.model
        rows_open = len(model.rows)
        # fold the CPU lane under the cursor and unfold it again
        await pilot.press("j")
        assert model.cursor == 1 and model.rows[1].kind == "lane"
        await pilot.press("enter")
        assert len(model.rows) < rows_open and model.rows[1].folded
        await pilot.press("space")
        assert len(model.rows) == rows_open
        # zoom and pan
        span = model.viewport.span
        await pilot.press("w", "w", "+")
        assert model.viewport.span == pytest.approx(span * 0.6**3)
        start = model.viewport.start
        await pilot.press("d", "right")
        assert model.viewport.start > start
        await pilot.press("a")
        await pilot.press("s", "-", "minus")
        await pilot.press("0")
        assert model.viewport.span == pytest.approx(span)
        # select events on the GPU kernel row
        gpu = next(i for i, s in enumerate(model.rows) if s.lane == 1 and s.depth == 1)
        await pilot.press(*["j"] * (gpu - model.cursor))
        assert model.cursor == gpu
        await pilot.press("l")
        first = model.selected
        assert first >= 0 and model.trace.kind[first] == Kind.KERNEL
        await pilot.press("l", "h")
        assert model.selected == first
        await pilot.press("f")
        assert model.viewport.span < 2 * model.trace.dur_ns[first]
        await pilot.press("escape")
        assert model.selected == -1


async def test_jump_cpu_to_gpu_and_back(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        trace = model.trace
        op = next(r for r in range(len(trace)) if trace.name(r) == "aten::masked_fill")
        app.query_one(Timeline).select_row(op)
        await pilot.pause()
        await pilot.press("g")
        kernel = model.selected
        assert trace.kind[kernel] == Kind.KERNEL
        assert model.rows[model.cursor].lane == int(trace.lane[kernel])  # the GPU lane
        await pilot.press("g")  # from the kernel to its launch
        assert trace.name(model.selected) == "cudaLaunchKernel"
        await pilot.press("b", "b")
        assert model.selected == op
        details = str(app.query_one("#details").render())
        assert "aten::masked_fill" in details and "launched" in details


async def test_click_selects_an_event(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        timeline = app.query_one(Timeline)
        index = next(i for i, s in enumerate(model.rows) if s.lane == 0 and s.depth == 0)
        col = next(c for c in range(model.viewport.width) if model.event_at(index, c) >= 0)
        await pilot.click(Timeline, offset=(timeline.label_cells + col, index))
        assert model.selected >= 0
        assert model.trace.name(model.selected).startswith("ProfilerStep#")


async def test_regions_instance_to_kernels_and_zoom(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        pane = app.pane
        assert pane.view == "regions"
        view = app.query_one(RegionsView)
        assert view.current_region.name == "attn_fwd"  # user regions before ProfilerStep*
        assert view.names_table.has_focus
        await pilot.press("enter")
        assert view.instances_table.has_focus
        await pilot.press("down")
        assert view.current_instance.index == 1
        await pilot.press("enter")
        assert view.kernels_table.has_focus
        names = [k.name for k in view.kernels]
        assert len(names) == 9 and MEMCPY in names
        memcpy = next(k for k in view.kernels if k.name == MEMCPY)
        chain = memcpy.launched_by.split(" › ")  # op down to the runtime call
        assert chain[0] == "aten::masked_fill" and "aten::copy_" in chain
        offsets = [k.offset_ns for k in view.kernels]
        assert offsets == sorted(offsets) and offsets[0] == 0
        await pilot.press(*["down"] * names.index(MEMCPY))
        assert MEMCPY in str(app.query_one("#kernel-name").render())
        await pilot.press("z")
        assert pane.view == "timeline"
        model = pane.model
        assert model.trace.name(model.selected) == MEMCPY
        assert model.viewport.span < 100_000  # zoomed to a 4 µs copy
        # z on an instance zooms to the whole instance
        await pilot.press("2", "escape")
        assert view.instances_table.has_focus
        await pilot.press("z")
        assert model.trace.name(model.selected) == "attn_fwd"


async def test_ops_sort_and_filter(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        view = app.query_one(OpsView)
        assert view.table.has_focus and not view.error
        shown = [r["self_device_time_total"] for r in view.shown]
        assert shown == sorted(shown, reverse=True)
        await pilot.press("r")
        assert not view.descending
        assert [r["self_device_time_total"] for r in view.shown] == sorted(shown)
        await pilot.press("o")
        assert view.sort_key == "self_device_pct"
        await pilot.press("O", "O")
        assert view.sort_key == "cpu_time_avg"
        values = [r["cpu_time_avg"] for r in view.shown]
        assert values == sorted(values, reverse=True)
        await pilot.press("f")
        await pilot.press(*"masked")
        assert {r["key"] for r in view.shown} == {"aten::masked_fill", "aten::masked_fill_"} | {
            r["key"] for r in view.shown if "masked_fill_kernel" in r["key"]
        }
        assert view.table.row_count == len(view.shown) >= 2
        await pilot.press("enter")
        assert view.table.has_focus
        assert app.pane.view == "ops"  # typing "3"/"q" in the filter did not switch views


async def test_search_and_step_through_matches(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3", "slash")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"Memcpy", "enter")
        pane = app.pane
        assert pane.view == "timeline"
        trace = pane.model.trace
        assert len(pane.matches) == 6
        first = pane.model.selected
        assert "Memcpy" in trace.name(first)
        await pilot.press("n")
        second = pane.model.selected
        assert second != first and trace.ts_ns[second] >= trace.ts_ns[first]
        await pilot.press("N")
        assert pane.model.selected == first
        await pilot.press("N")
        assert pane.model.selected == int(pane.matches[-1])  # wraps
        await pilot.press("slash", *"re:^aten::(bmm|div)$", "enter")
        assert {trace.name(int(r)) for r in pane.matches} == {"aten::bmm", "aten::div"}
        await pilot.press("slash", *"zzz-no-such", "enter")
        assert len(pane.matches) == 0


async def test_help_and_quit(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        assert "Timeline (1)" in text and "zoom in" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
    assert app.return_code == 0


async def test_quit_while_loading(naive_path):
    """``q`` ends the app while the load is still blocked: quitting never waits for
    the loader (checked by order of events, not by a clock)."""
    import threading

    release = threading.Event()
    loader_done = threading.Event()

    def slow_loader(path, progress, no_cache=False):
        progress("read", 0.1)
        release.wait()
        loader_done.set()
        raise RuntimeError("released only after the app has quit")

    app = AttnTuiApp([str(naive_path)], loader=slow_loader, theme="attn-dark")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.1)
            assert app.pane.state == "loading"
            await pilot.press("q")
        assert not app.is_running
        assert not loader_done.is_set()  # the app ended while its loader was still blocked
    finally:
        release.set()


async def test_a_broken_file_shows_its_error_and_the_others_work(tmp_path, naive_path):
    broken = tmp_path / "broken.json"
    broken.write_text("this is not json")
    missing = tmp_path / "missing.json"
    app = _app(broken, naive_path, missing)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        panes = app.panes
        assert [p.state for p in panes] == ["error", "ready", "error"]
        assert "broken.json" in panes[0].error
        assert "missing.json" in panes[2].error
        assert "\n" not in panes[0].error
        assert app.pane is panes[0]
        await pilot.press("1", "2", "3")  # views on a failed file do nothing, no crash
        await pilot.press("right_square_bracket")
        assert app.pane is panes[1]
        await pilot.press("3")
        assert panes[1].view == "ops"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.pane is panes[2]


async def test_empty_trace(tmp_path):
    empty = write_doc(tmp_path / "empty.json", {"traceEvents": []})
    app = _app(empty)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        pane = app.pane
        assert pane.state in ("ready", "error")
        if pane.state == "ready":
            assert pane.model.rows == []
            await pilot.press("w", "s", "a", "d", "j", "k", "enter", "l", "h", "g", "f", "0")
            await pilot.press("2", "3", "1")


async def test_markup_and_escapes_in_names_show_literally(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        odd = next(r for r in range(len(model.trace)) if model.trace.name(r).startswith("[bold]"))
        app.query_one(Timeline).select_row(odd)
        await pilot.pause()
        details = str(app.query_one("#details").render())
        assert "[bold]x\\x1b[2J" in details
        svg = app.export_screenshot()
        assert "\x1b" not in svg


async def test_command_palette_lists_the_actions(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("View: timeline (1)", "Search event names (/)", "Timeline: Zoom in (w / +)"):
            assert wanted in titles
        cmd = next(c for c in app.get_system_commands(app.screen) if "Zoom in" in c.title)
        span = app.pane.model.viewport.span
        app.call_later(cmd.callback)  # as the palette runs it
        await wait_until(pilot, lambda: app.pane.model.viewport.span < span, "the zoom")


@pytest.mark.skipif(not SAMPLE_NAIVE.exists(), reason="sample_traces/naive.json.gz is absent")
async def test_sample_naive_trace_story():
    app = _app(SAMPLE_NAIVE)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        pane = app.pane
        assert pane.state == "ready"
        trace = pane.model.trace
        assert any(lane.kind == "gpu" for lane in trace.lanes)
        await pilot.press("2")
        view = app.query_one(RegionsView)
        assert view.current_region.name == "attn_fwd"
        memcpys = [k for k in view.kernels if k.kind == "memcpy"]
        assert memcpys and "masked_fill" in memcpys[0].launched_by
        await pilot.press("3")
        keys = {r["key"] for r in app.query_one(OpsView).shown}
        assert "aten::masked_fill" in keys
        assert int(np.sum(trace.kind == Kind.MEMCPY)) >= 1


async def test_ops_table_is_compact_at_80_columns(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        view = app.query_one(OpsView)
        keys = [c.key for c in view.columns]
        assert keys[:4] == ["key", "device_type", "self_device_time_total", "device_time_total"]
        await pilot.press("o")
        assert view.sort_key == "self_device_pct"
