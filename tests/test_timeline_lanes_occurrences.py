"""Issue 11 items 4 and 5: every occurrence of a name (list, jump, n/N), and lanes
the way people arrange them (pin, hide, restore, fold a process, the folded
summary strip)."""

from __future__ import annotations

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from profiling.trace.model import Group, Kind, Lane, LaneKind
from tests.conftest import SAMPLE_TRACES
from tests.fixtures.flat_trace import flat_trace
from tui.app import AttnTuiApp
from tui.density import BLOCKS, busy_cells, busy_of, strip_text, window_share
from tui.links import LinkLookup
from tui.occurrences import fit_chain, occurrence_list, occurrences
from tui.rows import Folds, build_rows
from tui.screens.occurrences import OccurrencesScreen
from tui.timeline_model import TimelineModel
from tui.tracks import make_track
from tui.widgets.ops_view import OpsView
from tui.widgets.range_panel import RangePanel
from tui.widgets.regions_view import RegionsView
from tui.widgets.timeline import Timeline
from tui.widgets.track_draw import short_count

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"


def _naive():
    trace = load_trace(NAIVE, use_cache=False)
    return trace, LinkLookup(AnalysedTrace(trace))


# ---- occurrences (pure) ----


def test_occurrences_equal_a_brute_force_scan_in_time_order():
    trace, _ = _naive()
    for name in {trace.name(r) for r in range(len(trace))}:
        got = occurrences(trace, name)
        want = [r for r in range(len(trace))
                if trace.name(r) == name and trace.kind[r] != Kind.FLOW]  # fmt: skip
        assert sorted(got.tolist()) == want, name
        assert np.all(np.diff(trace.ts_ns[got]) >= 0)


def test_occurrences_by_lane_kind_and_the_step_group():
    trace, _ = _naive()
    gpu = occurrences(trace, "attn_fwd", "gpu")
    cpu = occurrences(trace, "attn_fwd", "cpu")
    assert gpu.size and cpu.size
    assert all(trace.lanes[int(trace.lane[r])].kind == "gpu" for r in gpu)
    assert all(trace.kind[r] == Kind.USER_ANNOTATION for r in cpu)
    steps = occurrences(trace, "ProfilerStep*", "cpu")  # torch's table key
    assert steps.size == 3 and all(trace.name(r).startswith("ProfilerStep#") for r in steps)
    assert occurrences(trace, "no such name").size == 0


def test_the_list_shows_time_lane_and_launching_chain_and_caps():
    trace, links = _naive()
    links.analysis  # noqa: B018 - linked
    memcpy = trace.name(int(np.flatnonzero(trace.kind == Kind.MEMCPY)[0]))
    found = occurrence_list(trace, links, memcpy, "gpu")
    assert len(found.rows) == 3 and len(found.table) == 3
    n, start, dur, lane, by = found.table[0]
    assert n == "1" and start.startswith("+") and "stream 7" in lane
    assert by == "aten::masked_fill › aten::clone › aten::copy_ › cudaMemcpyAsync"
    capped = occurrence_list(trace, links, "cudaLaunchKernel", cap=2)
    assert len(capped.table) == 2 < len(capped.rows)
    assert "the first 2 listed" in capped.title


# ---- lanes (pure) ----


def _many_groups(n_groups: int = 4):
    """flat_trace's one stream copied into ``n_groups`` process groups (ranks)."""
    base = flat_trace(40, seed=2)
    lanes, groups = [], []
    for g in range(n_groups):
        lanes.append(Lane(index=g, pid=g, tid=7, kind=LaneKind.GPU, label=f"stream {g}",
                          group=g, events=10, max_depth=0))  # fmt: skip
        groups.append(Group(index=g, pid=g, kind=LaneKind.GPU, label=f"rank {g}", lanes=[g]))
    base.lanes, base.groups = lanes, groups
    base.lane = np.repeat(np.arange(n_groups, dtype=np.int32), 10)
    base.lane_start = np.arange(0, 41, 10, dtype=np.int64)
    return base


def test_pinned_lanes_first_hidden_left_out_for_any_number_of_groups():
    t = _many_groups(4)
    depths = [1] * 4
    folds = Folds(pinned=[3, 1], hidden={2})
    rows = build_rows(t, folds, depths)
    assert [r.kind for r in rows[:3]] == ["pins", "lane", "lane"]
    assert [r.lane for r in rows[1:3]] == [3, 1]  # pin order
    labels = [r.label for r in rows if r.kind == "group"]
    assert labels == ["rank 0", "rank 2 · 1 hidden (X restores)"]  # 1 and 3 are pinned
    assert all(r.lane != 2 for r in rows)


def test_model_pin_hide_restore_fold_process():
    t = _many_groups(3)
    m = TimelineModel(t, LinkLookup(AnalysedTrace(t)), width=60)
    m.cursor = 3  # rank 1's header? find the lane row of stream 1
    m.cursor = next(i for i, r in enumerate(m.rows) if r.lane == 1)
    assert m.toggle_pin().startswith("pinned stream 1")
    assert m.rows[0].kind == "pins" and m.rows[m.cursor].lane == 1 and m.cursor == 1
    assert m.toggle_pin().startswith("unpinned")
    assert all(r.kind != "pins" for r in m.rows)
    m.cursor = next(i for i, r in enumerate(m.rows) if r.lane == 2)
    assert m.hide_lanes().startswith("hid stream 2")
    assert all(r.lane != 2 for r in m.rows)
    # selecting a hidden lane's event shows the lane again
    m.select(int(t.lane_start[2]))
    assert any(r.lane == 2 for r in m.rows)
    m.cursor = next(i for i, r in enumerate(m.rows) if r.lane == 0)
    m.hide_lanes()
    assert m.restore_lanes() == "restored 1 hidden lane" and m.restore_lanes() == ""
    m.cursor = next(i for i, r in enumerate(m.rows) if r.lane == 0)
    assert m.fold_process() == "folded rank 0"
    spec = m.rows[m.cursor]
    assert spec.kind == "group" and spec.folded and spec.group == 0
    assert m.summary(m.cursor) is not None  # a folded row has its busy strip
    assert m.fold_process() == "unfolded rank 0"


# ---- the folded summary (pure) ----


def test_busy_strip_is_the_union_of_the_events():
    t = flat_trace(3, seed=0, memcpy_every=0)
    t.ts_ns[:] = [0, 50, 300]
    t.dur_ns[:] = [100, 100, 100]  # [0,150) [300,400): overlap merged
    track = make_track(t, np.arange(3), 0)
    b = busy_of(track)
    assert b.starts.tolist() == [0, 300] and b.ends.tolist() == [150, 400] and b.total == 250
    share = busy_cells(b, 0.0, 100.0, 4)
    assert np.allclose(share, [1.0, 0.5, 0.0, 1.0])
    assert strip_text(share) == f"{BLOCKS[-1]}{BLOCKS[3]} {BLOCKS[-1]}"
    assert strip_text(np.array([0.001])) == BLOCKS[0]  # a sliver still shows
    assert window_share(b, 0.0, 400.0) == 250 / 400


# ---- Pilot ----


async def _open_list(pilot, app) -> OccurrencesScreen:
    for _ in range(40):
        if isinstance(app.screen, OccurrencesScreen):
            return app.screen
        await pilot.pause(0.05)
    raise AssertionError(f"no occurrences list (screen: {type(app.screen).__name__})")


async def test_o_lists_occurrences_and_n_steps_through_them():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        pane, m = app.pane, app.pane.model
        mc = int(np.flatnonzero(m.trace.kind == Kind.MEMCPY)[0])
        app.query_one(Timeline).select_row(mc)
        await pilot.press("o")
        screen = await _open_list(pilot, app)
        assert len(screen.found.rows) == 3
        await pilot.press("down", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, OccurrencesScreen)
        second = int(screen.found.rows[1])
        assert m.selected == second and pane.match_index == 1
        t0, t1 = m.rel(second)
        assert m.viewport.start <= t0 and m.viewport.end >= t1
        assert m.viewport.span < 10 * (t1 - t0)  # zoomed to it, with some context
        assert "occurrences of" in str(pane.query_one("#status").render())
        await pilot.press("n")
        assert m.selected == int(screen.found.rows[2])
        await pilot.press("N", "N")
        assert m.selected == int(screen.found.rows[0])
        await pilot.press("o")
        await _open_list(pilot, app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, OccurrencesScreen) and m.selected == int(
            screen.found.rows[0]
        )


def test_occurrences_within_a_range_are_those_the_range_counts():
    trace, _ = _naive()
    fwd = occurrences(trace, "attn_fwd", "cpu")
    lo, hi = int(trace.ts_ns[fwd[1]]), int(trace.ts_ns[fwd[1]] + trace.dur_ns[fwd[1]])
    for name in {trace.name(r) for r in range(len(trace))}:
        got = occurrences(trace, name, "all", (lo, hi)).tolist()
        want = [r for r in occurrences(trace, name).tolist()  # brute force, the rule spelled out
                if (trace.dur_ns[r] > 0 and trace.ts_ns[r] < hi
                    and trace.ts_ns[r] + trace.dur_ns[r] > lo)
                or (trace.dur_ns[r] <= 0 and lo <= trace.ts_ns[r] <= hi)]  # fmt: skip
        assert got == want, name
    inside = occurrences(trace, "attn_fwd", "cpu", (lo, hi))
    assert inside.tolist() == [int(fwd[1])]  # the other instances are outside
    assert len(occurrences(trace, "attn_fwd", "cpu")) == 3


async def test_enter_on_ops_regions_and_range_rows_lists_occurrences():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        ops = app.query_one(OpsView)
        await pilot.pause()
        key = ops.shown[0]["key"]
        await pilot.press("enter")
        screen = await _open_list(pilot, app)
        assert screen.found.name == key and len(screen.found.rows) >= 1
        await pilot.press("z")
        await pilot.pause()
        assert app.pane.view == "timeline"
        assert app.pane.model.trace.name(app.pane.model.selected) == key
        # Regions: the GPU events of an instance
        await pilot.press("2", "enter", "enter")
        regions = app.query_one(RegionsView)
        assert regions.kernels_table.has_focus
        await pilot.press("enter")
        screen = await _open_list(pilot, app)
        assert screen.found.name == regions.kernels[0].name
        await pilot.press("escape")
        await pilot.pause()
        # the range panel: m over an attn_fwd instance, tab into the table, enter
        await pilot.press("1")
        m = app.pane.model
        fwd = int(occurrences(m.trace, "attn_fwd", "cpu")[0])
        app.query_one(Timeline).select_row(fwd)
        await pilot.press("m")
        for _ in range(40):
            if app.query_one(RangePanel).report is not None:
                break
            await pilot.pause(0.05)
        panel = app.query_one(RangePanel)
        panel.query_one("#range-table").focus()
        await pilot.pause()
        await pilot.press("enter")
        screen = await _open_list(pilot, app)
        assert screen.found.name == panel.report.names[0]
        # only what the range counted: its row's count, and the title says so
        assert len(screen.found.rows) == int(panel.report.rows[0][2].replace(",", ""))
        assert "in the range" in screen.found.title


async def test_lane_keys_pin_hide_restore_and_fold_process():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        m = app.pane.model
        await pilot.press("G")  # the GPU lane
        lane = m.rows[m.cursor].lane
        await pilot.press("p")
        assert m.rows[0].kind == "pins" and m.rows[1].lane == lane
        await pilot.press("p")
        assert m.rows[0].kind != "pins"
        await pilot.press("G", "x")
        assert all(r.lane != lane for r in m.rows)
        await pilot.press("X")
        assert any(r.lane == lane for r in m.rows)
        await pilot.press("G", "c")
        spec = m.rows[m.cursor]
        assert spec.kind == "group" and spec.folded
        tl = app.query_one(Timeline)
        line = "".join(s.text for s in tl.render_line(m.cursor - int(tl.scroll_y)))
        assert any(b in line for b in BLOCKS)  # the busy strip
        track = m.track(spec)
        assert short_count(len(track)) in line[: tl.label_cells]  # the event count


def test_short_count_fits_five_cells():
    got = [short_count(n) for n in (0, 999, 1000, 12_345, 999_999, 3_400_000, 2 * 10**9)]
    assert got == ["0", "999", "1.0k", "12k", "1.0M", "3.4M", "2.0G"]


def test_snapshot_occurrences_list(monkeypatch, snap_compare):
    """o on the first Memcpy DtoD of naive: its three occurrences with their chains."""
    monkeypatch.chdir(SAMPLE_TRACES)  # the picture says "naive.json.gz", not where we are
    app = AttnTuiApp(["naive.json.gz"], theme="attn-dark")

    async def listed(pilot) -> None:
        await wait_loaded(pilot)
        m = pilot.app.pane.model
        pilot.app.query_one(Timeline).select_row(
            int(np.flatnonzero(m.trace.kind == Kind.MEMCPY)[0])
        )
        await pilot.press("o")
        await _open_list(pilot, pilot.app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=listed)


def test_a_chain_that_does_not_fit_keeps_what_launched_it():
    names = ["aten::masked_fill", "aten::clone", "aten::copy_", "cudaMemcpyAsync"]
    assert fit_chain(names, None) == " › ".join(names)
    assert fit_chain(names, 53) == "aten::masked_fill › … › aten::copy_ › cudaMemcpyAsync"
    assert fit_chain(names, 40) == "… › aten::copy_ › cudaMemcpyAsync"
    assert fit_chain(names, 20) == "… › cudaMemcpyAsync"
    assert len(fit_chain(names, 10)) == 10


async def test_g_with_the_gpu_lane_hidden_and_o_without_a_selection_say_what_to_do():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("G", "x", "G", "o")
        messages = [n.message for n in app._notifications]
        assert any("X restores" in m for m in messages)
        assert any("Select an event first" in m for m in messages)
        assert not isinstance(app.screen, OccurrencesScreen)
