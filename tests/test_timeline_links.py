"""Launch links you can see (issue 11 item 2): the selection's launch call and op,
or the GPU work it launched, are marked; connectors join launch and kernel; one
launch chain everywhere; fit on an annotation takes its GPU work (item 5)."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from profiling.trace.model import Kind
from tests.conftest import SAMPLE_TRACES
from tui.app import AttnTuiApp
from tui.link_marks import (
    ARROW_RIGHT,
    DOWN_END,
    VERTICAL,
    connectors,
    link_set,
    marked_mask,
    row_of,
)
from tui.links import LinkLookup
from tui.range_data import event_span
from tui.regions_data import kernel_rows, region_list
from tui.timeline_model import TimelineModel
from tui.widgets.timeline import Timeline

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"


def _model(ready: bool = True) -> TimelineModel:
    trace = load_trace(NAIVE, use_cache=False)
    links = LinkLookup(AnalysedTrace(trace))
    if ready:
        links.analysis  # noqa: B018 - linked, as after the app's analysis
    return TimelineModel(trace, links, width=100)


def _first(trace, kind) -> int:
    return int(np.flatnonzero(trace.kind == kind)[0])


def test_a_gpu_event_marks_its_launch_call_and_op():
    m = _model()
    t = m.trace
    mc = _first(t, Kind.MEMCPY)
    ls = link_set(t, m.links, mc, m.origin)
    call, op = m.links.launch_of(mc), m.links.op_of(mc)
    assert t.name(call) == "cudaMemcpyAsync" and t.name(op) == "aten::copy_"
    assert sorted(ls.marked.tolist()) == sorted([call, op])
    assert ls.src.tolist() == [call] and ls.dst.tolist() == [mc]


def test_an_op_marks_every_gpu_event_it_launched():
    m = _model()
    t = m.trace
    fwd = next(r for r in range(len(t)) if t.name(r) == "attn_fwd"
               and t.kind[r] == Kind.USER_ANNOTATION)  # fmt: skip
    ls = link_set(t, m.links, fwd, m.origin)
    gpu = m.links.gpu_of(fwd)
    assert gpu.size >= 5
    assert set(gpu.tolist()) <= set(ls.marked.tolist())
    assert sorted(ls.dst.tolist()) == sorted(gpu.tolist())
    calls = {t.name(int(c)) for c in ls.src}
    assert "cudaMemcpyAsync" in calls and fwd not in ls.marked


def test_nothing_is_linked_before_the_analysis_and_nothing_computed():
    m = _model(ready=False)
    m.select(_first(m.trace, Kind.MEMCPY))
    assert not m.link_set and not m.links.ready  # the selection never waits for links


def test_link_set_is_computed_once_per_selection(monkeypatch):
    m = _model()
    calls = []
    import tui.timeline_model as tm

    real = tm.link_set
    monkeypatch.setattr(tm, "link_set", lambda *a: calls.append(a) or real(*a))
    m.select(_first(m.trace, Kind.MEMCPY))
    for _ in range(5):
        m.zoom_out()
        for i in range(len(m.rows)):
            m.row_cells(i)
    assert len(calls) == 1


def test_marked_cells_and_connector_glyphs():
    m = _model()
    t = m.trace
    mc = _first(t, Kind.MEMCPY)
    call = m.links.launch_of(mc)
    m.select(mc)
    m.viewport.show(*m.rel(call)[:1], m.rel(mc)[1])  # launch and copy on screen
    vp = m.viewport
    ls = m.link_set
    a, b = row_of(t, m.where, call), row_of(t, m.where, mc)
    assert 0 <= a < b
    mask = marked_mask(ls, [int(t.lane[call])], int(t.depth[call]), vp.start, vp.ns_per_cell,
                       vp.width)  # fmt: skip
    col = int((m.rel(call)[0] - vp.start) // vp.ns_per_cell)
    assert mask is not None and mask[col]
    assert m.row_cells(a).linked[col]
    conn = connectors(ls, t, m.where, vp.start, vp.ns_per_cell, vp.width, (0, len(m.rows)),
                      m.origin)  # fmt: skip
    for r in range(a + 1, b):
        assert conn[r][col] == VERTICAL
    target = conn[b]
    assert target[col] == DOWN_END and ARROW_RIGHT in target.values()
    # both ends must be on screen: scrolled past the launch row, nothing is drawn
    assert connectors(ls, t, m.where, vp.start, vp.ns_per_cell, vp.width, (a + 1, 99),
                      m.origin) == {}  # fmt: skip


def test_one_chain_everywhere_details_and_regions_agree():
    m = _model()
    t = m.trace
    analysed = m.links.analysed
    region = next(r for r in region_list(analysed) if r.name == "attn_fwd")
    for inst in region.instances:
        for k in kernel_rows(analysed, inst):
            chain = tuple(t.name(r) for r in m.links.chain_of(k.row))
            assert chain == k.launch_chain, (k.name, chain, k.launch_chain)
    mc = _first(t, Kind.MEMCPY)
    names = [t.name(r) for r in m.links.chain_of(mc)]
    assert names == ["aten::masked_fill", "aten::clone", "aten::copy_", "cudaMemcpyAsync"]
    assert [t.name(r) for r in m.links.region_of(mc)] == ["ProfilerStep#2", "attn_fwd"]


def test_fit_on_an_annotation_takes_its_gpu_work():
    m = _model()
    t = m.trace
    fwd = next(r for r in range(len(t)) if t.name(r) == "attn_fwd"
               and t.kind[r] == Kind.USER_ANNOTATION)  # fmt: skip
    m.select(fwd)
    assert m.zoom_to_selection()
    lo, hi, gpu = event_span(t, m.links, fwd)
    assert gpu > 0 and hi > m.rel(fwd)[1]  # the GPU work ends after the CPU side
    assert m.viewport.start <= lo and m.viewport.end >= hi
    op = _first(t, Kind.CPU_OP)  # an op still fits itself only
    m.select(op)
    m.zoom_to_selection()
    assert m.viewport.span < (m.rel(op)[1] - m.rel(op)[0]) * 1.2 + 200


def _lines(app) -> list[str]:
    tl = app.query_one(Timeline)
    return ["".join(s.text for s in tl.render_line(y)) for y in range(tl.size.height)]


async def test_pilot_kernel_draws_connector_and_marks(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")  # the glyphs carry it without colour
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        m = app.pane.model
        tl = app.query_one(Timeline)
        mc = _first(m.trace, Kind.MEMCPY)
        tl.select_row(mc)
        await pilot.press("f", "s", "s", "s")
        await pilot.pause()
        lines = _lines(app)
        call = m.links.launch_of(mc)
        a, b = row_of(m.trace, m.where, call), row_of(m.trace, m.where, mc)
        col = tl.label_cells + int((m.rel(call)[0] - m.viewport.start) // m.viewport.ns_per_cell)
        between = [lines[r][col] for r in range(a + 1, b)]
        assert VERTICAL in between
        # the call's row draws it in the linked style
        segs = list(tl.render_line(a))
        linked = tl._style("timeline--linked")
        assert any(s.style == linked for s in segs)
        assert "Memcpy" in lines[b]  # the copy is not hidden by the connector
        await pilot.press("g")  # to the launch: the copy is marked now
        await pilot.pause()
        assert m.selected == call and mc in m.link_set.marked


def test_a_step_marks_every_kernel_and_zoomed_out_marks_match_event_by_event(monkeypatch):
    import tui.link_marks as lm
    from tests.fixtures.linked_trace import linked_trace

    t = linked_trace(30_000)
    links = LinkLookup(AnalysedTrace(t))
    links.analysis  # noqa: B018
    m = TimelineModel(t, links, width=120)
    ls = link_set(t, links, 0, m.origin)  # ProfilerStep#1: every launch inside it
    kernels = np.flatnonzero(np.isin(t.kind, [Kind.KERNEL, Kind.MEMCPY]))
    calls = np.flatnonzero(t.kind == Kind.RUNTIME)
    assert sorted(ls.marked.tolist()) == sorted(kernels.tolist() + calls.tolist())
    assert np.all(np.diff(ls.src_ts) >= 0) and ls.src.size == kernels.size
    vp = m.viewport
    for lane, depth in ((1, None), (0, 3), (0, None)):
        merged = marked_mask(ls, [lane], depth, vp.start, vp.ns_per_cell, vp.width)
        monkeypatch.setattr(lm, "MERGED_ABOVE", 10**9)
        exact = marked_mask(ls, [lane], depth, vp.start, vp.ns_per_cell, vp.width)
        monkeypatch.setattr(lm, "MERGED_ABOVE", 4)
        assert merged is not None and np.array_equal(merged, exact), (lane, depth)
    conn = connectors(ls, t, m.where, vp.start, vp.ns_per_cell, vp.width, (0, len(m.rows)),
                      m.origin)  # fmt: skip
    assert conn and sum(len(c) for c in conn.values()) <= 4 * vp.width  # capped by columns


def _small_real_traces() -> list:
    from tests.conftest import real_trace_files

    return [p for p in real_trace_files() if p.stat().st_size < 3_000_000]


@pytest.mark.parametrize("path", _small_real_traces(), ids=lambda p: p.name[:40])
def test_links_on_real_traces(path):
    """Every real trace: a linked kernel marks its launch and op, the chain ends in that
    call, an op's marks hold what it launched, and drawing every row and the
    connectors at fit-all and zoomed in raises nothing."""
    try:
        trace = load_trace(path, use_cache=False)
    except Exception:  # noqa: BLE001 - a file the loader refuses is another test's business
        pytest.skip("not loadable")
    links = LinkLookup(AnalysedTrace(trace))
    a = links.analysis
    m = TimelineModel(trace, links, width=100)
    linked = a.gpu_rows[a.launch[a.gpu_rows] >= 0]
    picks = [int(linked[len(linked) // 2])] if linked.size else []
    if picks and links.op_of(picks[0]) >= 0:
        picks.append(links.op_of(picks[0]))
    for row in picks:
        m.select(row)
        ls = m.link_set
        if int(trace.kind[row]) in (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET):
            call = links.launch_of(row)
            assert call in ls.marked.tolist() and ls.src.tolist() == [call]
            chain = links.chain_of(row)
            assert chain[-1] == call
            assert links.region_of(row) + chain == links.full_chain_of(row)
        else:
            assert set(links.gpu_of(row).tolist()) <= set(ls.marked.tolist())
        for zoom in (False, True):
            if zoom:
                m.zoom_to_selection()
            for i in range(len(m.rows)):
                m.row_cells(i)
            vp = m.viewport
            connectors(ls, trace, m.where, vp.start, vp.ns_per_cell, vp.width,
                       (0, len(m.rows)), m.origin)  # fmt: skip


def _ancestors_walk(t, row: int) -> list[int]:
    """The row-by-row walk ``LinkLookup.ancestors`` replaced (the reference)."""
    out: list[int] = []
    lo = int(t.lane_start[int(t.lane[row])])
    want = int(t.depth[row]) - 1
    start = t.ts_ns[row]
    i = row - 1
    while i >= lo and want >= 0:
        if int(t.kind[i]) == Kind.FLOW:
            i -= 1
            continue
        d = int(t.depth[i])
        if d == want and t.ts_ns[i] + t.dur_ns[i] >= start:
            out.append(i)
            want -= 1
        elif d < want:
            want = d
            continue
        i -= 1
    return out


@pytest.mark.parametrize("path", [NAIVE, *_small_real_traces()[:8]], ids=lambda p: p.name[:40])
def test_ancestors_equal_the_row_by_row_walk(path):
    try:
        trace = load_trace(path, use_cache=False)
    except Exception:  # noqa: BLE001
        pytest.skip("not loadable")
    links = LinkLookup(AnalysedTrace(trace))
    rows = np.flatnonzero(trace.kind != Kind.FLOW)
    for row in rows[:: max(1, rows.size // 3000)].tolist():
        assert links.ancestors(row) == _ancestors_walk(trace, row), row


def test_a_launch_left_of_the_window_draws_from_the_edge():
    m = _model()
    t = m.trace
    mc = _first(t, Kind.MEMCPY)
    call = m.links.launch_of(mc)
    m.select(mc)
    t0, t1 = m.rel(mc)
    assert m.rel(call)[1] < t0  # the copy runs after its call returned
    m.viewport.show(t0 - (t1 - t0) * 0.2, t1)  # the copy on screen, its call not
    vp = m.viewport
    assert m.rel(call)[0] < vp.start
    a, b = row_of(t, m.where, call), row_of(t, m.where, mc)
    conn = connectors(m.link_set, t, m.where, vp.start, vp.ns_per_cell, vp.width,
                      (0, len(m.rows)), m.origin)  # fmt: skip
    assert all(conn[r][0] == VERTICAL for r in range(a + 1, b))  # at the left edge
    assert conn[b][0] == DOWN_END and ARROW_RIGHT in conn[b].values()


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_connector_reads_without_colour_in_a_real_terminal():
    """Under NO_COLOR=1 in tmux: search the Memcpy (selected), zoom out; the
    connector from its launch comes down by glyph (│) through the GPU's header row,
    which holds no event, and the row under it to the copy's row."""
    from tests.test_tmux_open import SAMPLE, Terminal, _command

    if not SAMPLE.exists():
        pytest.skip("needs sample_traces/naive.json.gz")
    term = Terminal("links", 140, 45)
    term.start(_command(SAMPLE, "NO_COLOR=1 TERM=xterm-256color"))
    label = 30  # label cells at 140 columns (tui.widgets.timeline.label_width)

    def connector_cols() -> list[int]:
        lines = term.screen().splitlines()
        header = next((i for i, line in enumerate(lines) if "▾ GPU 0" in line), -1)
        if header < 0 or header + 2 >= len(lines):
            return []
        below = lines[header + 1]
        return [c for c, ch in enumerate(lines[header]) if c >= label and ch == VERTICAL
                and c < len(below) and below[c] == VERTICAL]  # fmt: skip

    try:
        term.wait_for("1 Timeline", "stream", "attn_fwd", timeout=30)
        term.send("/")
        term.wait_for("Search")
        term.send("Memcpy DtoD", "Enter")
        term.wait_for("match 'Memcpy DtoD'")
        term.send("f", "s", "s", "s")
        start = time.monotonic()
        while not connector_cols():
            assert time.monotonic() - start < 20, term.screen()
            time.sleep(0.2)
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()
