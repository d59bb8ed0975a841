"""Unit tests of the TUI's pure modules (no Textual app running)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from profiling.trace import load_trace
from profiling.trace.model import Kind
from tests.fixtures.flat_trace import flat_trace
from tests.fixtures.synthetic import MEMCPY, naive_like_doc, write_doc
from tui.keymap import KEYS, keymap_text
from tui.names import clip, short_name, visible
from tui.ops_table import COLUMN_KEYS, Totals, filter_rows, prepare, sort_rows
from tui.ruler import ruler_text
from tui.search import QueryError, find, next_match, parse_query
from tui.themes import default_theme
from tui.timeline_model import TimelineModel
from tui.tracks import Cells, cells, make_track, overlay, runs, track_cells
from tui.viewport import Viewport


@pytest.fixture(scope="module")
def naive(tmp_path_factory):
    path = tmp_path_factory.mktemp("naive") / "naive.json"
    write_doc(path, naive_like_doc(3, odd_name="[bold red]evil\x1b[2J"))
    return load_trace(path)


# ---- names ----


def test_visible_escapes_control_characters():
    assert visible("a\x1b[31mb") == "a\\x1b[31mb"
    assert visible("x\ny\tz\x00") == "x\\ny\\tz\\x00"
    assert visible("[bold]not markup[/]") == "[bold]not markup[/]"
    assert visible("\u202eevil") == "\\u202eevil"
    assert visible("aten::_softmax\u200b") == "aten::_softmax\\u200b"  # invisible, no agreed width
    assert visible("a\u00adb\ufeffc\u2060d") == "a\\xadb\\ufeffc\\u2060d"
    assert visible("flag\U000e0067") == "flag\\U000e0067"
    assert visible("caf\u00e9 \u5bbd \U0001f680") == "caf\u00e9 \u5bbd \U0001f680"  # shown as is


def test_clip():
    assert clip("abcdef", 4) == "abc…"
    assert clip("abc", 4) == "abc"
    assert clip("abc", 0) == ""


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("aten::bmm", "aten::bmm"),
        ("Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)"),
        (
            "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, "
            "float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, "
            "bool const*, int, bool)",
            "softmax_warp_forward<BFloat16, BFloat16, float, 10, …>",
        ),
        (
            "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_"
            "tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::"
            "Params)",
            "Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x…>",
        ),
    ],
)
def test_short_name(name, short):
    assert short_name(name) == short
    assert len(short_name(name, 40)) <= 60


def test_short_name_of_huge_names_is_bounded():
    name = "void f<" + ", ".join(f"T{i}<int>" for i in range(2000)) + ">(int)"
    assert len(short_name(name, 50)) <= 50


# ---- viewport ----


def test_zoom_keeps_the_anchor_time_in_place():
    vp = Viewport(total=1_000_000, width=100)
    t = vp.time_at(30)
    vp.zoom_in(30)
    assert vp.time_at(30) == pytest.approx(t)
    assert vp.span < 1_000_000
    vp.zoom_out(30)
    assert vp.time_at(30) == pytest.approx(t, rel=1e-6)


def test_zoom_and_pan_limits():
    vp = Viewport(total=1_000, width=100)
    for _ in range(50):
        vp.zoom_in()
    assert vp.ns_per_cell == pytest.approx(1.0)  # one nanosecond per cell at most
    for _ in range(50):
        vp.zoom_out()
    assert vp.span <= 1_000 * 1.5 + 100
    for _ in range(100):
        vp.pan(1)
    assert vp.start <= vp.total  # never pans into nothing
    vp.fit_all()
    assert vp.start <= 0 and vp.end >= 1_000


def test_show_and_ensure_visible():
    vp = Viewport(total=10_000_000, width=100)
    vp.show(2_000_000, 3_000_000)
    assert vp.start < 2_000_000 < 3_000_000 < vp.end
    vp.ensure_visible(9_000_000, 9_100_000)
    assert vp.start <= 9_000_000 and vp.end >= 9_100_000


# ---- tracks: cells ----


def _brute(ts, end, t0, npc, width):
    """For each cell, the events overlapping it (a reference, O(n*width))."""
    out = []
    for c in range(width):
        lo, hi = t0 + c * npc, t0 + (c + 1) * npc
        out.append([i for i in range(len(ts)) if ts[i] < hi and (end[i] > lo or ts[i] >= lo)])
    return out


def test_cells_match_a_brute_force_reference_on_a_flat_lane():
    trace = flat_trace(3_000, seed=3, memcpy_every=0)
    track = make_track(trace, np.arange(len(trace)), trace.start_ns)
    rng = np.random.default_rng(0)
    total = float(track.end.max())
    for _ in range(20):
        width = int(rng.integers(5, 120))
        span = float(rng.uniform(1_000, total))
        t0 = float(rng.uniform(-span / 2, total))
        c = cells(track, t0, span / width, width)
        ref = _brute(track.ts, track.end, t0, span / width, width)
        for i in range(width):
            hits = ref[i]
            if not hits:
                assert c.owner[i] == -1, (i, t0, span)
            else:
                assert c.owner[i] in track.rows[hits]
                starts_inside = sum(1 for h in hits if track.ts[h] >= t0 + i * span / width)
                if c.dense[i]:
                    assert c.dense[i] == starts_inside >= 2


def test_nested_summary_shows_the_outermost_event():
    # parent [0, 100) with two children; the summary row shows the parent everywhere
    trace = flat_trace(3, memcpy_every=0)
    trace.ts_ns[:] = np.array([1_000_000, 1_000_010, 1_000_050])
    trace.dur_ns[:] = np.array([100, 20, 30])
    track = make_track(trace, np.arange(3), 1_000_000)
    c = cells(track, 0.0, 10.0, 10)
    assert c.owner.tolist() == [0] * 10
    assert not c.dense.any()


def test_memcpy_overlay_is_never_hidden():
    trace = flat_trace(100_000, seed=1, memcpy_every=997)
    track = make_track(trace, np.arange(len(trace)), trace.start_ns)
    assert track.special is not None
    width = 100
    npc = float(track.end.max()) / width
    base = cells(track, 0.0, npc, width)
    drawn = track_cells(track, 0.0, npc, width)
    # zoomed out, every cell is dense with kernels, but cells holding a memcpy show it
    assert (base.dense > 0).sum() > 90
    memcpy_cells = {int(x) for x in (track.special.ts // npc).tolist()}
    for c in memcpy_cells:
        if c < width:
            assert trace.kind[drawn.owner[c]] == Kind.MEMCPY


def test_overlay_and_runs():
    base = Cells(np.array([1, 1, 1, -1, 2, 2]), np.zeros(6, dtype=np.int64))
    top = Cells(np.array([-1, 9, -1, -1, -1, -1]), np.zeros(6, dtype=np.int64))
    merged = overlay(base, top)
    assert merged.owner.tolist() == [1, 9, 1, -1, 2, 2]
    assert [(r.start, r.stop, r.row) for r in runs(merged)] == [
        (0, 1, 1),
        (1, 2, 9),
        (2, 3, 1),
        (3, 4, -1),
        (4, 6, 2),
    ]


def test_frame_work_does_not_touch_every_event():
    """A frame's cells come from width+1 binary searches, never from a pass over the
    track: drawing a row of a million events allocates less than one byte per event
    (any whole-track temporary, even a boolean mask, is at least one byte per event).
    Counted with tracemalloc, so the bound does not depend on the machine's speed;
    the frame times are in bench/tui_frame.py and bench/bench_extremes.py."""
    n = 1_000_000
    trace = flat_trace(n, seed=2)
    track = make_track(trace, np.arange(n), trace.start_ns)
    assert track.special is not None  # the Memcpy overlay is drawn too
    total = float(track.end.max())
    tracemalloc.start()
    try:
        for i in range(20):
            track_cells(track, total * i / 100, total / 2 / 200, 200, selected=n // 2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n // 8, peak


# ---- search ----


def test_search_substring_and_regex(naive):
    rows = find(naive, parse_query("memcpy"))
    assert len(rows) == 6  # the Memcpy itself and its cudaMemcpyAsync, three steps
    assert {naive.name(r) for r in rows} == {MEMCPY, "cudaMemcpyAsync"}
    assert np.all(np.diff(naive.ts_ns[rows]) >= 0)
    rows = find(naive, parse_query("re:^aten::(bmm|div)$"))
    assert {naive.name(r) for r in rows} == {"aten::bmm", "aten::div"}
    assert len(find(naive, parse_query("no such name"))) == 0
    with pytest.raises(QueryError):
        parse_query("re:([")


def test_next_match_wraps(naive):
    rows = find(naive, parse_query("aten::bmm"))
    assert next_match(naive, rows, -1, 1) == 0
    assert next_match(naive, rows, int(rows[-1]), 1) == 0
    assert next_match(naive, rows, int(rows[0]), -1) == len(rows) - 1


# ---- op table ----


def _ops():
    rows = [
        {
            "key": "aten::bmm",
            "device_type": "CPU",
            "count": 6,
            "self_cpu_time_total": 300.0,
            "cpu_time_total": 440.0,
            "self_device_time_total": 0.0,
            "device_time_total": 500.0,
        },
        {
            "key": "Memcpy DtoD (Device -> Device)",
            "device_type": "CUDA",
            "count": 3,
            "self_cpu_time_total": 0.0,
            "cpu_time_total": 0.0,
            "self_device_time_total": 385.0,
            "device_time_total": 385.0,
        },
        {
            "key": "aten::masked_fill",
            "device_type": "CPU",
            "count": 3,
            "self_cpu_time_total": 47.0,
            "cpu_time_total": 339.0,
            "self_device_time_total": 0.0,
            "device_time_total": 1400.0,
        },
    ]
    return prepare(rows, Totals(sum(r["self_cpu_time_total"] for r in rows),
                                sum(r["self_device_time_total"] for r in rows)))


def test_ops_sort_filter_and_derived_columns():
    rows = _ops()
    assert rows[0]["cpu_time_avg"] == pytest.approx(440 / 6)
    assert rows[1]["self_device_pct"] == pytest.approx(100.0)
    by_dev = sort_rows(rows, "device_time_total")
    assert [r["key"] for r in by_dev][0] == "aten::masked_fill"
    assert [r["key"] for r in sort_rows(rows, "device_time_total", False)][0] == (
        "Memcpy DtoD (Device -> Device)"
    )
    assert [r["key"] for r in sort_rows(rows, "key")][0] == "Memcpy DtoD (Device -> Device)"
    assert [r["key"] for r in filter_rows(rows, "MASKED")] == ["aten::masked_fill"]
    assert len(filter_rows(rows, "re:^aten::")) == 2
    for key in COLUMN_KEYS:
        sort_rows(rows, key)
    with pytest.raises(QueryError):
        filter_rows(rows, "re:(")


# ---- timeline model ----


def test_model_fold_unfold(naive):
    m = TimelineModel(naive, width=100)
    n_open = len(m.rows)
    assert m.rows[0].kind == "group"
    # fold the CPU lane (row 1): its depth rows disappear
    m.cursor = 1
    m.toggle_fold()
    assert len(m.rows) < n_open and m.rows[1].folded
    m.toggle_fold()
    assert len(m.rows) == n_open
    # fold the whole host group
    m.cursor = 0
    m.toggle_fold()
    assert m.rows[0].folded and m.rows[1].kind == "group"
    assert m.row_cells(0) is not None  # a folded group shows the union of its lanes
    m.set_all_folds(True)
    assert len(m.rows) == n_open


def test_model_select_jump_and_back(naive):
    m = TimelineModel(naive, width=100)
    memcpy = int(np.flatnonzero(naive.kind == Kind.MEMCPY)[0])
    m.select(memcpy)
    assert m.rows[m.cursor].lane == int(naive.lane[memcpy])
    launch = m.follow_link()
    assert naive.name(launch) == "cudaMemcpyAsync"
    assert m.follow_link() == memcpy  # and back across
    assert m.back() == launch
    assert m.back() == memcpy
    # from an op: its first GPU event
    op = int(next(r for r in range(len(naive)) if naive.name(r) == "aten::masked_fill"))
    m.select(op)
    first = m.follow_link()
    assert naive.kind[first] == Kind.KERNEL and "unrolled_elementwise" in naive.name(first)
    launch, op_row, gpu = m.linked(first)
    assert naive.name(op_row) == "aten::copy_"


def test_model_zoom_pan_and_step(naive):
    m = TimelineModel(naive, width=100)
    span = m.viewport.span
    m.zoom_in()
    assert m.viewport.span < span
    start = m.viewport.start
    m.pan(1)
    assert m.viewport.start > start
    m.fit_all()
    assert m.viewport.span >= naive.end_ns_max - naive.start_ns
    gpu_row = next(i for i, s in enumerate(m.rows) if s.lane == 1 and s.depth == 1)
    m.cursor = gpu_row
    m.step(1)
    first = m.selected
    assert naive.kind[first] == Kind.KERNEL
    m.step(1)
    assert naive.ts_ns[m.selected] > naive.ts_ns[first]
    m.step(-1)
    assert m.selected == first
    assert m.zoom_to_selection()
    assert m.viewport.span < naive.dur_ns[first] * 2


def test_every_row_renders_cells(naive):
    m = TimelineModel(naive, width=120)
    for i, spec in enumerate(m.rows):
        c = m.row_cells(i)
        if spec.kind == "group":
            assert c is None
        else:
            assert c is not None and c.owner.shape == (120,)


# ---- misc ----


def test_ruler_text_width_and_labels():
    vp = Viewport(total=5_000_000, width=120)
    text = ruler_text(vp)
    assert len(text) == 120
    assert "0 ms" in text and "1 ms" in text


def test_keymap_covers_the_issue_keys():
    bound = {(k.view, name): k.action for k in KEYS for name in k.bind.split(",") if name}
    for view, key, action in [
        ("app", "1", "view('timeline')"), ("app", "2", "view('regions')"),
        ("app", "3", "view('ops')"), ("app", "slash", "search"), ("app", "n", "match(1)"),
        ("app", "N", "match(-1)"), ("app", "question_mark", "help"), ("app", "q", "quit"),
        ("app", "ctrl+c", "quit"), ("timeline", "w", "zoom_in"), ("timeline", "s", "zoom_out"),
    ]:
        assert bound.get((view, key)) == action, (view, key)
    text = keymap_text()
    assert all(k.keys in text and k.help.split("\n")[0] in text for k in KEYS if k.in_help)


def test_theme_follows_the_terminal():
    assert default_theme({"COLORFGBG": "0;15"}) == "attn-light"
    assert default_theme({"COLORFGBG": "15;0"}) == "attn-dark"
    assert default_theme({"ATTN_TUI_THEME": "light"}) == "attn-light"
    assert default_theme({}) == "attn-dark"


def test_loading_line_says_how_far():
    from tui.widgets.trace_pane import progress_text

    assert progress_text("read", 0.0, 45_600_000) == "reading 45.6 MB"
    half = 0.05 + 0.8 * 0.5
    assert progress_text("decode", half, 45_600_000) == "decoding events, 22.8 of 45.6 MB"
    assert "analysing" in progress_text("regions", 0.9, 1)
