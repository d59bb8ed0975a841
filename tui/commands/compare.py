"""``attn-tui compare PATH PATH ... [--region NAME] [--json | --markdown]``: traces side by side.

The numbers come from ``profiling.analysis.compare`` (one ``TraceComparison``
per file, in the order given, each from the file's one ``AnalysedTrace``); the
cells from ``tui.compare_table``, as in the TUI's Compare view.  ``--json``
prints DESIGN.md section 5's list; ``--markdown`` a GitHub table (the README's
benchmark table is made with it); otherwise a Rich table.  Trace names are
data: cells are ``Text``, never markup, and markdown cells have their pipes and
control characters escaped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from profiling.errors import AttnTuiError

if TYPE_CHECKING:
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.analysis.compare import TraceComparison


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.compare import compare_traces
    from profiling.analysis.job import group_paths
    from tui.loading import analysed_each

    paths: list[str] = list(args.paths)
    if not paths:
        raise AttnTuiError("no trace given", "compare", "give one or more trace files")
    paths = [p for group in group_paths(paths) for p in group]  # a job's ranks in rank order
    traces = analysed_each(paths, args)
    items = _merged_ranks(traces[0], args.region) if len(traces) == 1 else None
    if items is None:
        items = compare_traces(traces, args.region)
    if args.json:
        doc = [item.as_json() for item in items]
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(doc, number_lists=True, allow_nan=False, default=str) + "\n")
    elif args.markdown:
        sys.stdout.write(markdown(items))
    else:
        _print(items)
    return 0


def _merged_ranks(analysed: AnalysedTrace, region: str) -> list[TraceComparison] | None:
    """A file that merges a job's ranks (``job_split``) compared rank by rank, as a job's
    folder is; None for any other trace.  Each rank is labelled ``<file> · rank K``."""
    from dataclasses import replace

    from profiling.analysis.analysed import AnalysedTrace
    from profiling.analysis.compare import compare_traces
    from profiling.analysis.job_split import rank_groups, rank_traces

    groups = rank_groups(analysed.trace)
    if groups is None:
        return None
    ranks = [AnalysedTrace(t) for t in rank_traces(analysed.trace, groups)]
    return [replace(item, label=f"{item.label} · rank {item.rank}")
            for item in compare_traces(ranks, region)]


def _md_cell(text: str) -> str:
    from tui.names import visible

    return visible(text).replace("\\", "\\\\").replace("|", "\\|") or " "


def _kept_columns(rows: list[list[str]]) -> list[int]:
    """Columns with something in them; the region column only when rows differ in it."""
    from tui.compare_table import COLUMNS

    keep = [i for i in range(len(COLUMNS)) if any(row[i] for row in rows)]
    if rows and all(row[1] == rows[0][1] for row in rows):
        keep = [i for i in keep if COLUMNS[i] != "region"]
    return keep


def markdown(items: Sequence[object]) -> str:
    """A GitHub table of ``table_rows`` (columns that are empty everywhere are left out)."""
    from tui.compare_table import COLUMNS, NUMERIC_COLUMNS, flops_notes, table_rows

    rows = table_rows(items)  # type: ignore[arg-type]
    keep = _kept_columns(rows)
    lines = ["| " + " | ".join(COLUMNS[i] for i in keep) + " |",
             "|" + "|".join("---:" if COLUMNS[i] in NUMERIC_COLUMNS else "---" for i in keep)
             + "|"]
    lines += ["| " + " | ".join(_md_cell(row[i]) for i in keep) + " |" for row in rows]
    notes = flops_notes(items)  # type: ignore[arg-type]
    if notes:  # under the table: what the FLOPs count and where they were read
        lines += [""] + [_md_text(notes[0])] + [f"- {_md_text(n)}" for n in notes[1:]]
    return "\n".join(lines) + "\n"


def _md_text(text: str) -> str:
    """A line of markdown prose from data: names escaped so none reads as markup."""
    from tui.names import visible

    out = visible(text).replace("\\", "\\\\")
    for ch in "|*_`[]<>#":
        out = out.replace(ch, "\\" + ch)
    return out


def _print(items: Sequence[object]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from profiling.analysis.compare import TraceComparison
    from tui.compare_table import COLUMNS, NUMERIC_COLUMNS, flops_notes, table_rows
    from tui.names import visible

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 220
    rows = table_rows(items)  # type: ignore[arg-type]
    keep = _kept_columns(rows)
    title = Text(visible(rows[0][1])) if rows and 1 not in keep else None  # never markup
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    for i in keep:
        if COLUMNS[i] in NUMERIC_COLUMNS:  # numbers are never cut
            width = max([len(COLUMNS[i])] + [len(row[i]) for row in rows])
            table.add_column(COLUMNS[i], justify="right", no_wrap=True, min_width=width)
        else:
            wide = 48 if COLUMNS[i] == "trace" else 34  # room for a rank after the label
            table.add_column(COLUMNS[i], no_wrap=True, overflow="ellipsis", max_width=wide)
    for row in rows:
        table.add_row(*(Text(visible(row[i])) for i in keep))
    console.print(table)
    for note in flops_notes(items):  # type: ignore[arg-type]
        console.print(Text(visible(note)), style="dim")
    for item in items:
        assert isinstance(item, TraceComparison)
        device = item.device or "device unknown"
        peak = f"dense peak {item.peak.model} ({item.peak.source})" if item.peak else "no peak"
        rank = f" | rank {item.rank} of {item.world_size or '?'}" if item.rank is not None else ""
        console.print(Text(visible(f"{item.label}: {item.path}{rank} | {device} | {peak}")),
                      style="dim")
        for warning in item.warnings:
            console.print(Text(visible(f"  {warning}")), style="yellow")
