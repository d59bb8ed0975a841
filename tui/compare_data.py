"""The Compare view's content: every open file summarised side by side (pure).

The numbers are ``profiling.analysis.compare``'s over each tab's one
``AnalysedTrace``, cell for cell (the same ``tui.compare_table.table_rows`` the
headless ``attn-tui compare`` prints), so the TUI and the command line can never
disagree.  This module adds what only the app needs:
files that failed to load stay in the list as failed rows (one bad file must not
hide the comparison of the others), each table row keeps a handle on its
numbers (for highlighting and the detail line), and the bar chart is laid out
here, in plain strings, so the widget only colours it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import (
    RegionComparison,
    TraceComparison,
    summarize_trace,
    trace_label,
    with_ratios,
)
from tui.blocks import hbar
from tui.compare_table import COLUMNS, flops_notes, table_rows, time_cell
from tui.names import clip, fit, visible
from tui.session import error_line

DEFAULT_REGION = "attn_fwd"


@dataclass(frozen=True)
class Source:
    """One open file as the comparison sees it: its analysed trace, or why it has none.

    The analysis is the tab's (its parts are made on first use, so the worker, not
    the UI thread, pays for those the tab has not needed yet)."""

    path: str
    analysed: AnalysedTrace | None = None
    error: str = ""


@dataclass(frozen=True)
class Entry:
    """One file in the comparison: its summary, or the one line saying why not."""

    path: str
    label: str
    comparison: TraceComparison | None = None
    error: str = ""


@dataclass(frozen=True)
class Row:
    """One table row: ``COLUMNS`` cells, and the numbers behind them (None: failed)."""

    cells: tuple[str, ...]
    entry: Entry
    region: RegionComparison | None


@dataclass(frozen=True)
class CompareResult:
    region: str
    entries: tuple[Entry, ...]

    @property
    def failed(self) -> list[Entry]:
        return [e for e in self.entries if e.comparison is None]

    @property
    def warnings(self) -> list[str]:
        """The analysis's notes per file (a missing region, the fallback it used), then
        what the FLOPs count when the rows' figures do not all count alike."""
        notes = [
            f"{e.label}: {w}" for e in self.entries if e.comparison for w in e.comparison.warnings
        ]
        return notes + self.flops_warnings

    @property
    def flops_warnings(self) -> list[str]:
        """``compare``'s FLOPs notes (source and convention per row) when a row's figure
        is not the useful causal count or the rows count differently; [] when all agree."""
        items = [e.comparison for e in self.entries if e.comparison is not None]
        regions = [r for item in items for r in item.regions.values() if r.flops_detail]
        conventions = {r.flops_convention for r in regions}
        if not any(r.flops_note for r in regions) and len(conventions) <= 1:
            return []
        return flops_notes(items)[1:]  # the legend is the CLI's; the header has no room


def file_label(path: str) -> str:
    """A file's name without its trace extensions (the label of a failed file)."""
    return trace_label(path, {}) or os.path.basename(path) or path


def compare_sources(
    sources: Sequence[Source], region: str = DEFAULT_REGION
) -> CompareResult:
    """Summarise every loaded source (reusing its analysis), keep the failed ones.

    A source whose analysis raises becomes a failed entry with the error's
    line; ratios are to the first file that summarised.
    """
    summaries: list[TraceComparison] = []
    slots: list[Entry | int] = []
    for src in sources:
        if src.analysed is None:
            slots.append(Entry(src.path, file_label(src.path), error=src.error or "not loaded"))
            continue
        try:
            item = summarize_trace(src.analysed, region)
        except Exception as exc:  # noqa: BLE001 - one bad file stays one failed row
            slots.append(Entry(src.path, file_label(src.path), error=error_line(exc)))
            continue
        slots.append(len(summaries))
        summaries.append(item)
    ratioed = with_ratios(summaries)
    entries = tuple(
        s if isinstance(s, Entry) else Entry(ratioed[s].path, ratioed[s].label, ratioed[s])
        for s in slots
    )
    return CompareResult(region, entries)


def rows(result: CompareResult) -> list[Row]:
    """The table: the headless command's cells per (file, region), failed files
    as a row saying so, all in the order the files were opened."""
    out: list[Row] = []
    for entry in result.entries:
        item = entry.comparison
        if item is None:
            cells = [""] * len(COLUMNS)
            cells[0], cells[1], cells[2] = entry.label, result.region, "failed to load"
            out.append(Row(tuple(cells), entry, None))
            continue
        for cells, reg in zip(table_rows([item]), item.regions.values(), strict=True):
            out.append(Row(tuple(cells), entry, reg))
    return out


# ---- the bar chart ----


@dataclass(frozen=True)
class ChartLine:
    """One bar, as padded strings the widget styles piece by piece."""

    label: str
    bar: str
    value: str
    implementation: str
    copies: str  # "1 Memcpy/inst" when the region copies, else ''
    error: str  # for a failed file or a region without GPU time: why there is no bar


def chart_lines(result: CompareResult, width: int) -> list[ChartLine]:
    """GPU time per instance of each (file, region), as bars scaled to the longest.

    Layout in ``width`` cells: label, bar, value, then the implementation (and the
    copies the region makes, the naive story) in whatever room is left; the bar
    takes about half the width so the labels stay readable at 80 columns.
    """
    items: list[tuple[str, Entry, RegionComparison | None]] = []
    several = any(e.comparison and len(e.comparison.regions) > 1 for e in result.entries)
    for entry in result.entries:
        if entry.comparison is None:
            items.append((visible(entry.label), entry, None))
            continue
        for name, region in entry.comparison.regions.items():
            label = f"{entry.label} · {name}" if several else entry.label
            items.append((visible(label), entry, region))
    if not items:
        return []
    label_w = min(max(len(label) for label, _, _ in items), 24)
    value_w = 9
    bar_w = max(8, (width - label_w - value_w - 4) // 2)
    tail_w = max(0, width - label_w - bar_w - value_w - 4)
    top = max(
        (r.device_time_avg_us or 0.0 for _, _, r in items if r is not None), default=0.0
    )
    lines = []
    for label, entry, reg in items:
        head = fit(label, label_w)
        if reg is None:
            error = f"failed to load: {visible(entry.error)}"
            lines.append(ChartLine(head, "", "", "", "", clip(error, bar_w + value_w + tail_w)))
            continue
        gpu = reg.device_time_avg_us
        if not reg.instances or not gpu:
            why = "no instances" if not reg.instances else "no GPU time"
            lines.append(ChartLine(head, "", "", "", "", why))
            continue
        impl = visible(reg.implementation.name) or "implementation unknown"
        copies = ""
        if reg.memcpy_per_instance:
            copies = f" +{reg.memcpy_per_instance:g} Memcpy/inst"
        room = max(tail_w - len(copies), 0)
        lines.append(
            ChartLine(
                label=head,
                bar=hbar(gpu / top if top else 0.0, bar_w),
                value=time_cell(gpu).rjust(value_w),
                implementation=clip(impl, room) if room else "",
                copies=copies if tail_w >= len(copies) else "",
                error="",
            )
        )
    return lines
