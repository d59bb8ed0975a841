"""``attn-tui slices PATH``: what is in a time range, per lane kind and name.

``--from`` / ``--to`` take times with units counted from the trace's first event,
as the timeline's ruler shows them (``profiling.analysis.slices.parse_time_ns``);
left out, the range runs from the trace's start / to its end.  ``--json`` prints
``SliceSummary.as_json()``: the range, GPU busy %, the Memcpy / Memset totals and
``rows`` (``name``, ``lane_kind``, ``count``, ``total_us``, ``avg_us``, ``min_us``,
``max_us``, ``share`` of the range).  Names are data: always ``Text``, never markup.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from profiling.errors import AttnTuiError

if TYPE_CHECKING:
    from profiling.analysis.slices import SliceSummary

DESCRIPTION = (
    "Events overlapping a time range, per lane kind (CPU, GPU) and name: count, time inside "
    "the range (each event clipped to it), avg, min, max and share of the range, with GPU "
    "busy % and the Memcpy / Memset totals on top. Times count from the trace's first "
    "event, as the timeline's ruler shows them, and take a unit: 12.5us, 1.2ms, 3s, 500ns "
    "(a bare number is microseconds)."
)


def time_arg(text: str) -> int:
    """argparse ``type=`` for ``--from`` / ``--to``: nanoseconds, or a usage error
    (one line, exit status 2) that says which units are understood."""
    from profiling.analysis.slices import parse_time_ns

    try:
        return parse_time_ns(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.slices import slice_summary, trace_span_ns
    from tui.loading import trace_for_command

    start, end = args.start, args.end
    if start is not None and end is not None:
        _check_range(start, end, "")  # before loading: a typo should not wait for a big file
    trace = trace_for_command(args.path, args)  # a first open stores the analysis
    span = trace_span_ns(trace)
    if span <= 0 and start is None and end is None:  # not the options' fault: say so
        raise AttnTuiError(f"the trace spans no time ({len(trace)} events): nothing to slice",
                           args.path, "slices needs events that last or lie apart")
    _check_range(0 if start is None else start, span if end is None else end, args.path)
    summary = slice_summary(trace, start, end, args.lanes)
    if args.json:
        out = {"path": args.path, **summary.as_json()}
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(out, allow_nan=False))
        sys.stdout.write("\n")
        return 0
    _print(args.path, summary)
    return 0


def _check_range(start: int, end: int, where: str) -> None:
    """A range must start before it ends (``--to`` left out is the trace's end)."""
    from tui.fmt import fmt_ns

    if start >= end:
        raise AttnTuiError(
            f"--from {fmt_ns(start)} is not before --to {fmt_ns(end)}", where,
            "times count from the trace's first event; left out, --to is the trace's end",
        )


TABLE_ROWS = 200
"""Names each lane kind's table (no ``--json``) lists, the longest in all first: a
trace of 20,000 python functions took 12 s of table layout."""


def _print(path: str, summary: SliceSummary) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from profiling.analysis.slices import LANE_KINDS
    from tui.fmt import fmt_ns
    from tui.names import visible

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 200
    s = summary
    console.print(Text(
        f"{visible(path)}: {fmt_ns(s.from_ns)} .. {fmt_ns(s.to_ns)} "
        f"({fmt_ns(s.range_ns)}), {s.lanes} lanes, {s.events:,} events"
    ))
    console.print(Text(
        f"GPU busy {100.0 * s.gpu_busy_share:.1f}% ({fmt_ns(s.gpu_busy_ns)}), "
        f"Memcpy {s.memcpy_count:,} ({fmt_ns(s.memcpy_ns)}), "
        f"Memset {s.memset_count:,} ({fmt_ns(s.memset_ns)})"
    ))
    for lane_kind in LANE_KINDS:
        rows = [r for r in s.rows if r.lane_kind == lane_kind]
        if not rows:
            continue
        t = Table(title=f"{lane_kind.upper()} lanes", title_justify="left", box=box.SIMPLE_HEAD)
        t.add_column("name", no_wrap=True, overflow="ellipsis", max_width=80)
        t.add_column("kind", no_wrap=True)
        for header in ("count", "total", "avg", "min", "max", "share"):
            t.add_column(header, justify="right", no_wrap=True)
        for r in rows[:TABLE_ROWS]:
            share = 100.0 * r.total_ns / s.range_ns if s.range_ns > 0 else 0.0
            t.add_row(
                Text(visible(r.name)), Text(r.kind.replace("_", " ")), Text(f"{r.count:,}"),
                Text(fmt_ns(r.total_ns)), Text(fmt_ns(r.avg_ns)), Text(fmt_ns(r.min_ns)),
                Text(fmt_ns(r.max_ns)),
                Text(f"{share:.1f}%"),
            )
        console.print(t)
        if len(rows) > TABLE_ROWS:
            rest = rows[TABLE_ROWS:]
            total = fmt_ns(sum(r.total_ns for r in rest))
            console.print(Text(f"{len(rest):,} more names with {total} in all (the "
                               f"{TABLE_ROWS} longest shown; --json lists every name)"))
    if not s.rows:
        console.print(Text("no events in this range"))
