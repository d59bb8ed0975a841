"""Pilot tests of the Compare view (4), the Findings view (5) and the regions sparkline.

On the GPU sample traces, so the blog's story is what is asserted: naive has one
Memcpy per instance and in-place none; naive's finding is the out-of-place
copy, and its evidence jumps to the Memcpy on the timeline.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.findings import EvidenceRow
from profiling.trace import load_trace
from profiling.trace.model import Kind
from tui.app import AttnTuiApp
from tui.blocks import hbar, sparkline
from tui.compare_data import Source, chart_lines, compare_sources, rows
from tui.findings_data import evidence_cells
from tui.links import chain_text
from tui.widgets.compare_chart import CompareChart
from tui.widgets.compare_view import CompareView
from tui.widgets.findings_view import FindingsView
from tui.widgets.regions_view import RegionsView

from .test_tui_pilot import naive_path, wait_loaded, wait_until  # noqa: F401 - a fixture

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
NAMES = ("naive", "inplace", "sdpa_flash")

needs_samples = pytest.mark.skipif(
    not all((SAMPLES / f"{n}.json.gz").exists() for n in NAMES), reason="sample traces absent"
)




def _cells(table: DataTable, row: int) -> list[str]:
    return [str(c) for c in table.get_row_at(row)]


@needs_samples
async def test_compare_view_tells_the_story(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # ctrl+s saves here
    broken = tmp_path / "broken.json"
    broken.write_text("this is not json")
    paths = [str(SAMPLES / f"{n}.json.gz") for n in NAMES] + [str(broken)]
    app = AttnTuiApp(paths, theme="attn-dark")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("4")
        view = app.query_one(CompareView)
        await wait_until(pilot, lambda: view.state == "ready", "the comparison")
        assert app.pane is None and view.table.has_focus  # the Compare tab is active
        table = view.table
        assert table.row_count == 4
        header = [str(c.label).strip() for c in table.columns.values()]
        memcpy, impl = header.index("memcpy"), header.index("implementation")
        rows = [_cells(table, i) for i in range(4)]
        assert [r[0] for r in rows] == ["naive", "inplace", "sdpa_flash", "broken"]
        assert rows[0][memcpy] == "1" and rows[1][memcpy] == "0"
        assert "flash" in rows[2][impl].lower()
        assert rows[3][impl] == "failed to load"
        assert "broken.json" in view.rows[3].entry.error
        # the chart: one bar per file, labelled with its implementation
        chart = app.query_one(CompareChart)
        lines = str(chart.chart_text(120)).splitlines()[1:]
        assert len(lines) == 4
        assert "█" in lines[0] and "unfused" in lines[0] and "Memcpy" in lines[0]
        assert "Memcpy" not in lines[1]
        assert "FlashAttention" in lines[2] and "failed to load" in lines[3]
        # ctrl+s saves the Compare view
        await pilot.press("ctrl+s")
        await pilot.pause()
        svgs = list(tmp_path.glob("*.svg"))
        assert len(svgs) == 1 and "sdpa_flash" in svgs[0].read_text(encoding="utf-8")
        # a view key goes back to the file it came from
        await pilot.press("5")
        await pilot.pause()
        assert app.pane is app.panes[0] and app.pane.view == "findings"


async def test_compare_needs_two_traces(naive_path):  # noqa: F811 - the fixture
    app = AttnTuiApp([str(naive_path)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("4")
        await pilot.pause()
        assert not app.query(CompareView)
        messages = [str(n.message) for n in app._notifications]
        assert any("two or more" in m and "attn-tui open" in m for m in messages)
        assert app.pane is not None and app.pane.view == "timeline"
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "View: compare (4)" in titles and "View: findings (5)" in titles


@needs_samples
async def test_findings_jump_to_the_memcpy_and_regions_sparkline():
    app = AttnTuiApp([str(SAMPLES / "naive.json.gz")], theme="attn-dark")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        pane = app.pane
        # the sparkline of GPU time per instance, per region and for the chosen one
        await pilot.press("2")
        regions = app.query_one(RegionsView)
        spark = str(regions.names_table.get_row_at(0)[-1]).strip()
        assert len(spark) == 3 and set(spark) <= set("▁▂▃▄▅▆▇█")
        assert "GPU" in str(regions.instances_table.border_title)
        # findings: the out-of-place copy, with what to try, and its evidence
        await pilot.press("5")
        view = app.query_one(FindingsView)
        await wait_until(pilot, lambda: view.result is not None, "the findings")
        assert pane.view == "findings"
        ids = [f.id for f in view.findings]
        assert ids[0] == "memcpy-out-of-place"
        assert "masked_fill" in str(view.findings_table.get_row_at(0)[1])
        detail = str(app.query_one("#finding-detail").render())
        assert "Try:" in detail and "in-place" in detail
        assert view.evidence_table.row_count == 3
        await pilot.press("enter")
        assert view.evidence_table.has_focus
        await pilot.press("down", "z")
        assert pane.view == "timeline"
        trace = pane.model.trace
        selected = pane.model.selected
        assert selected == view.findings[0].evidence[1].row
        assert int(trace.kind[selected]) == Kind.MEMCPY
        assert trace.name(selected).startswith("Memcpy")
        assert pane.model.viewport.span < 1_000_000  # zoomed in on a ~130 µs copy
        # and back: 5 again shows the same finding, z on the finding shows its first evidence
        await pilot.press("5", "escape", "z")
        assert pane.model.selected == view.findings[0].evidence[0].row


# ---- the pure parts ----


def test_bars_and_sparklines():
    assert hbar(0.5, 4) == "██  " and hbar(1.0, 3) == "███"
    assert hbar(1e-9, 4) == "▏   "  # above zero is never drawn as nothing
    assert hbar(0.0, 3) == "   " and hbar(float("nan"), 2) == "  " and hbar(2.0, 2) == "██"
    assert hbar(0.3, 0) == ""
    assert sparkline([1.0, 1.0, 1.0]) == "███"  # level: noise is not blown up
    assert sparkline([3.0, 1.5, 1.5]) == "█▅▅"  # from zero: a 2x instance stands out
    assert sparkline([]) == "" and sparkline([0.0, 0.0]) == ""
    assert sparkline([1.0, float("nan"), -1.0]) == "█  "
    many = [1.0] * 1000
    many[500] = 5.0
    line = sparkline(many, 16)
    assert len(line) == 16 and line.count("█") == 1  # a spike survives bucketing


def test_compare_keeps_a_failed_file_and_escapes_names(tmp_path):
    from tests.fixtures.synthetic import naive_like_doc, write_doc

    trace = load_trace(write_doc(tmp_path / "[bold]x.json", naive_like_doc(2)))
    result = compare_sources(
        [Source("gone.json", error="gone.json: no such file"),
         Source(trace.path, AnalysedTrace(trace))]
    )  # fmt: skip
    table = rows(result)
    assert [r.cells[0] for r in table] == ["gone", "[bold]x"]
    assert table[0].region is None and table[0].cells[2] == "failed to load"
    assert table[1].cells[8] == "1"  # one memcpy per instance
    lines = chart_lines(result, 100)
    assert lines[0].error.startswith("failed to load: gone.json")
    assert lines[1].label.startswith("[bold]x") and "█" in lines[1].bar
    assert "Memcpy" in lines[1].copies
    assert all(len(line.bar) == len(lines[1].bar) for line in lines[1:])


def test_evidence_cells():
    e = EvidenceRow(row=3, name="Memcpy DtoD\x1b", kind="memcpy", lane=1, start_us=731.0,
                    dur_us=128.0, instance=0, launch_chain=("aten::masked_fill", "aten::clone",
                                                            "aten::copy_", "cudaMemcpyAsync"))
    cells = evidence_cells(e)
    assert cells[:5] == ("Memcpy DtoD\\x1b", "memcpy", "#0", "731 µs", "128 µs")
    assert cells[5] == "aten::masked_fill › aten::clone › aten::copy_ › cudaMemcpyAsync"
    narrow = evidence_cells(e, chain_limit=56)[5]
    assert narrow == "aten::masked_fill › … › aten::copy_ › cudaMemcpyAsync"
    assert chain_text(["a", "b"]) == "a › b" and chain_text([]) == ""
    assert chain_text(["x\x1b"]) == "x\\x1b"  # names are data: control characters shown
