"""Ranges (issue 11, item 3 in the TUI): ``m`` marks the selected event's span,
shift+pan grows or shrinks it, ``M`` clears it; the ruler shows it and the range
panel lists what it holds, with the numbers of ``attn-tui slices``."""

from __future__ import annotations

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.slices import slice_summary
from profiling.trace import load_trace
from profiling.trace.model import Kind
from tests.conftest import SAMPLE_TRACES
from tui.app import AttnTuiApp
from tui.links import LinkLookup
from tui.range_data import event_span, range_report
from tui.ruler import range_cells, ruler_text, span_text
from tui.timeline_model import RANGE_STEP, TimelineModel
from tui.viewport import Viewport
from tui.widgets.range_panel import RangePanel
from tui.widgets.ruler import Ruler
from tui.widgets.timeline import Timeline

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"


def _naive():
    trace = load_trace(NAIVE, use_cache=False)
    links = LinkLookup(AnalysedTrace(trace))
    return trace, links


def _attn_fwd(trace, nth: int = 0) -> int:
    rows = [r for r in range(len(trace))
            if trace.name(r) == "attn_fwd" and trace.kind[r] == Kind.USER_ANNOTATION]
    return rows[nth]


# ---- pure parts ----


def test_an_annotation_span_covers_the_gpu_work_it_launched():
    trace, links = _naive()
    row = _attn_fwd(trace)
    links.analysis  # noqa: B018 - links ready, as after the app's analysis
    lo, hi, gpu = event_span(trace, links, row)
    launched = links.gpu_of(row)
    assert gpu == launched.size > 0
    origin = trace.start_ns
    assert lo == int(trace.ts_ns[row]) - origin  # the CPU side starts first
    ends = trace.ts_ns[launched] + trace.dur_ns[launched] - origin
    assert hi == int(ends.max()) > int(trace.ts_ns[row] + trace.dur_ns[row]) - origin


def test_before_the_links_exist_the_span_is_the_cpu_side_and_nothing_is_computed():
    trace, links = _naive()
    row = _attn_fwd(trace)
    lo, hi, gpu = event_span(trace, links, row)
    assert not links.ready  # a key press never waits for the analysis
    assert (lo, hi, gpu) == (int(trace.ts_ns[row] - trace.start_ns),
                             int(trace.ts_ns[row] - trace.start_ns + trace.dur_ns[row]), 0)


def test_a_gpu_event_span_is_its_own():
    trace, links = _naive()
    k = next(r for r in range(len(trace)) if trace.kind[r] == Kind.KERNEL)
    lo, hi, gpu = event_span(trace, links, k)
    assert (lo, hi, gpu) == (int(trace.ts_ns[k] - trace.start_ns),
                             int(trace.ts_ns[k] - trace.start_ns + trace.dur_ns[k]), 0)


def test_report_rows_are_the_slices_numbers_gpu_first():
    trace, links = _naive()
    links.analysis  # noqa: B018
    lo, hi, _ = event_span(trace, links, _attn_fwd(trace))
    report = range_report(trace, lo, hi)
    s = slice_summary(trace, lo, hi)
    assert sorted(report.names) == sorted(r.name for r in s.rows)
    kinds = [row[0] for row in report.rows]
    assert kinds == sorted(kinds, key=["GPU", "CPU", "OTHER"].index)
    memcpy = [row for row, name in zip(report.rows, report.names, strict=True)
              if name.startswith("Memcpy DtoD")]
    assert len(memcpy) == 1 and memcpy[0][0] == "GPU" and memcpy[0][2] == "1"
    # brute force: the GPU events overlapping the range, by their clipped length
    origin = trace.start_ns
    ts, end = trace.ts_ns - origin, trace.ts_ns - origin + trace.dur_ns
    gpu = np.isin(trace.kind, [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET])
    inside = gpu & (ts < hi) & (end > lo)
    assert s.memcpy_count == int((inside & (trace.kind == Kind.MEMCPY)).sum()) == 1
    assert f"Memcpy {s.memcpy_count}" in report.headline and "GPU busy" in report.headline


def test_model_marks_grows_shrinks_and_clears():
    trace, links = _naive()
    model = TimelineModel(trace, links, width=100)
    assert model.mark_range() == -1 and model.range is None  # nothing selected
    assert not model.resize_range(1)
    model.select(_attn_fwd(trace))
    assert model.mark_range() >= 0
    assert model.range is not None
    lo, hi = model.range
    step = max(round(model.viewport.span * RANGE_STEP), 1)
    assert model.resize_range(1) and model.range == (lo, hi + step)
    assert model.resize_range(-1) and model.resize_range(-1) and model.range == (lo, hi - step)
    for _ in range(1000):  # never shrinks past its start
        model.resize_range(-1)
    assert model.range == (lo, lo + 1)
    model.clear_range()
    assert model.range is None


def test_ruler_counts_from_the_range_start_and_marks_its_cells():
    vp = Viewport(total=5_000_000, width=100)
    vp.start, vp.span = 0.0, 5_000_000.0
    assert span_text(vp, (1_000_000, 2_250_000)) == "range 1.25 ms"
    assert span_text(vp).startswith("window ")
    text = ruler_text(vp, zero=1_000_000)
    assert text[20] == "┊" and text[21:25] == "0 ms"  # a tick at the range start
    assert "-1 ms" in text  # before it, negative
    assert range_cells(vp, (1_000_000, 2_250_000)) == (20, 45)
    assert range_cells(vp, (6_000_000, 7_000_000)) is None
    assert range_cells(vp, (1_000_000, 1_000_001)) == (20, 21)  # at least one cell
    assert range_cells(vp, None) is None


# ---- the app ----


def _panel_rows(panel: RangePanel) -> dict[str, tuple[str, ...]]:
    assert panel.report is not None
    return dict(zip(panel.report.names, panel.report.rows, strict=True))


async def test_m_over_one_attn_fwd_lists_memcpy_dtod_once():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        panel = app.query_one(RangePanel)
        assert panel.has_class("-none") and panel.size.height == 0
        app.query_one(Timeline).select_row(_attn_fwd(model.trace, 1))
        await pilot.press("m")
        await pilot.pause()
        assert model.range is not None and not panel.has_class("-none")
        assert panel.size.height > 3
        rows = _panel_rows(panel)
        memcpy = [row for name, row in rows.items() if name.startswith("Memcpy DtoD")]
        assert len(memcpy) == 1 and memcpy[0][2] == "1"
        # the table on screen holds the same row
        table = panel.query_one("#range-table")
        shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert any(r[1].startswith("Memcpy DtoD") and r[2] == "1" for r in shown)
        ruler = app.query_one(Ruler)
        assert "range " in ruler.render_line(0).text

        lo, hi = model.range
        await pilot.press("D", "shift+right")  # grow twice
        assert model.range[0] == lo and model.range[1] > hi
        await pilot.press("A", "shift+left")  # and back
        assert model.range == (lo, hi)
        await pilot.press("M")
        await pilot.pause()
        assert model.range is None and panel.has_class("-none")
        assert "window " in ruler.render_line(0).text


async def test_m_without_a_selection_says_what_to_do():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("m", "D")
        await pilot.pause()
        assert app.pane.model.range is None
        messages = [n.message for n in app._notifications]
        assert any("m marks" in m for m in messages)


async def test_tab_into_the_range_table_and_esc_back():
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        timeline = app.query_one(Timeline)
        timeline.select_row(_attn_fwd(app.pane.model.trace))
        await pilot.press("m")
        await pilot.pause()
        table = app.query_one(RangePanel).query_one("#range-table")
        for _ in range(3):
            if app.focused is table:
                break
            await pilot.press("tab")
        assert app.focused is table
        await pilot.press("down", "down")
        assert table.cursor_row == 2
        await pilot.press("escape")
        assert app.focused is timeline and app.pane.model.range is not None
        await pilot.press("M", "tab", "tab", "tab")  # no range: the table takes no focus
        assert app.focused is not table


async def test_the_range_table_holds_a_window_of_its_rows(monkeypatch):
    """A range of many names: the table holds a window of them that follows the cursor,
    and ⏎ asks for the occurrences of the row under the cursor."""
    from tui import regions_data
    from tui.screens.occurrences import OccurrencesScreen

    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 4)
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        app.query_one(Timeline).select_row(_attn_fwd(app.pane.model.trace, 1))
        await pilot.press("m")
        await pilot.pause()
        panel = app.query_one(RangePanel)
        table = panel.query_one("#range-table")
        n = len(panel.report.rows)
        assert n > 6 and table.row_count == 4
        table.focus()
        for _ in range(5):
            await pilot.press("down")
        await pilot.pause()
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "5"
        await pilot.press("enter")
        for _ in range(40):
            if isinstance(app.screen, OccurrencesScreen):
                break
            await pilot.pause(0.05)
        assert app.screen.found.name == panel.report.names[5]
