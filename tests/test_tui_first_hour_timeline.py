"""Issue 12's TUI points about the timeline (a new user's first hour), driven with
Pilot at 80x24 and 140x45: the first h/l picks the first visible event, lane
jumps, and C folds processes too."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fixtures.tui_first_hour import SIZES, make_app, write_naive
from tui.timeline_moves import first_visible

from .test_tui_pilot import wait_loaded


@pytest.fixture
def naive_path(tmp_path):
    return write_naive(tmp_path)


# ---- 15: the first h/l picks the first visible event; lane jumps ----


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("key", ["l", "h"])
async def test_first_step_selects_the_first_visible_event(naive_path, size, key):
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        await pilot.press("G", "j")  # the GPU lane, its kernels' row (under the annotations)
        assert model.trace.lanes[model.rows[model.cursor].lane].kind == "gpu"
        track = model.track(model.rows[model.cursor])
        assert track is not None and len(track) >= 6
        # a window from the middle of the 3rd event to the end of the 6th: the 3rd
        # reaches into it, so it is the first visible, not one from the middle
        third = (track.ts[2] + track.end[2]) / 2
        model.viewport.show(third, float(track.end[5]))
        model.version += 1
        vp = model.viewport
        t0 = (model.trace.ts_ns[track.rows] - model.origin).astype(float)
        t1 = t0 + model.trace.dur_ns[track.rows]
        visible = track.rows[(t1 > vp.start) & (t0 < vp.end)]
        assert visible.size >= 3
        await pilot.press(key)
        assert model.selected == int(visible[np.argmin(model.trace.ts_ns[visible])])


@pytest.mark.parametrize("size", SIZES)
async def test_lane_jumps(naive_path, size):
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        await pilot.press("J")
        assert model.cursor > 0 and model.rows[model.cursor].kind != "depth"
        between = model.rows[1 : model.cursor]
        assert all(r.kind == "depth" for r in between)
        where = model.cursor
        await pilot.press("J", "K")
        assert model.cursor == where
        await pilot.press("G")
        gpu = model.rows[model.cursor]
        assert gpu.kind == "lane" and model.trace.lanes[gpu.lane].kind == "gpu"
        await pilot.press("C", "G")  # folded devices are unfolded to reach the GPU lane
        gpu = model.rows[model.cursor]
        assert gpu.kind == "lane" and model.trace.lanes[gpu.lane].kind == "gpu"


def test_first_visible_against_a_scan(naive_path):
    """Every track, windows over the whole trace: the first event (in start order)
    that ends after the window's start and starts before its end."""
    from profiling.trace import load_trace
    from tui.timeline_model import TimelineModel

    model = TimelineModel(load_trace(naive_path, use_cache=False))
    total = float(model.trace.end_ns_max - model.origin)
    windows = [(total * a, total * b) for a, b in ((0, 1), (0.3, 0.35), (0.5, 0.5001), (1.1, 2))]
    for spec in model.rows:
        track = model.track(spec)
        if track is None:
            continue
        for start, end in windows:
            hits = [i for i in range(len(track)) if track.end[i] > start and track.ts[i] < end]
            want = int(track.rows[hits[0]]) if hits else -1
            assert first_visible(track, start, end) == want


# ---- 16: C folds processes ----


@pytest.mark.parametrize("size", SIZES)
async def test_fold_all_folds_processes_too(naive_path, size):
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        await pilot.press("C")
        assert model.rows and all(r.kind == "group" and r.folded for r in model.rows)
        await pilot.press("E")
        assert any(r.kind == "depth" for r in model.rows)
