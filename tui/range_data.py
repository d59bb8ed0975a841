"""The range panel's content (pure; no Textual): what is in the marked range.

The numbers are ``profiling.analysis.slices.slice_summary``'s, the same as
``attn-tui slices --from T --to T`` prints, so the panel and the command never
disagree; this module only decides a range from the selected event and turns
the summary into a headline and table rows of display text.

Times are nanoseconds relative to the trace's first event, as the ruler shows
them (the timeline model's ``origin``).
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling.analysis.slices import SliceSummary, slice_summary
from profiling.trace.model import GPU_KINDS, Trace
from tui.fmt import fmt_count, fmt_ns, fmt_pct
from tui.links import LinkLookup
from tui.names import short_name

COLUMNS = ("Lane", "Name", "Count", "Total", "Avg", "Min", "Max", "Share")
"""The range table's columns (Total, Avg, Min and Max are clipped to the range)."""
NAME_CELLS = 32
"""Cells a name gets in the table: long kernel names are shortened like the timeline's."""
LANE_ORDER = {"gpu": 0, "cpu": 1}
"""GPU rows first (a range over attention is mostly asked about its GPU work), then
CPU, then other lanes; inside each, ``slice_summary``'s order (longest total first)."""


def event_span(trace: Trace, links: LinkLookup, row: int) -> tuple[int, int, int]:
    """``(start, end, gpu_events)`` of what ``row`` stands for, relative ns.

    A GPU event is its own span.  A CPU op, annotation (``attn_fwd``) or runtime
    call covers its CPU span and the GPU work launched from inside it, which
    usually runs after the CPU side has returned; ``gpu_events`` counts that
    work.  The links are asked only when computed already, so a key press never
    waits for the analysis (the CPU span alone is the range until then)."""
    origin = trace.start_ns
    lo = int(trace.ts_ns[row]) - origin
    hi = lo + int(trace.dur_ns[row])
    if int(trace.kind[row]) in GPU_KINDS or not links.ready:
        return lo, hi, 0
    gpu = links.launched_rows(row)  # unsorted: only the span and the count are needed
    if gpu.size:
        starts = trace.ts_ns[gpu] - origin
        ends = starts + trace.dur_ns[gpu]
        lo, hi = min(lo, int(starts.min())), max(hi, int(ends.max()))
    return lo, hi, int(gpu.size)


@dataclass(frozen=True)
class RangeReport:
    """The panel's headline and rows for one range (display text; ``summary``
    holds the numbers, rows in ``slice_summary``'s order, the table's GPU first)."""

    headline: str
    rows: list[tuple[str, ...]]
    names: list[str]  # each row's full name (the table shows a short one)
    summary: SliceSummary


def range_report(trace: Trace, from_ns: int, to_ns: int) -> RangeReport:
    """What ``[from_ns, to_ns]`` holds, per lane kind and name: count, total time
    inside the range, average, min, max and share of the range; on top the
    range, its length, GPU busy % and the Memcpy / Memset totals."""
    s = slice_summary(trace, from_ns, to_ns)
    ordered = sorted(s.rows, key=lambda r: LANE_ORDER.get(r.lane_kind, 2))  # stable
    length = float(s.range_ns)
    headline = (
        f"range +{fmt_ns(from_ns)} → +{fmt_ns(to_ns)} ({fmt_ns(length)}) · "
        f"GPU busy {fmt_pct(s.gpu_busy_ns, length)} · "
        f"Memcpy {fmt_count(s.memcpy_count)} ({fmt_ns(s.memcpy_ns)}) · "
        f"Memset {fmt_count(s.memset_count)} ({fmt_ns(s.memset_ns)}) · "
        f"{fmt_count(s.events)} events"
    )
    rows: list[tuple[str, ...]] = [
        (
            r.lane_kind.upper(),
            short_name(r.name, NAME_CELLS),
            fmt_count(r.count),
            fmt_ns(r.total_ns),
            fmt_ns(r.avg_ns),
            fmt_ns(r.min_ns),
            fmt_ns(r.max_ns),
            fmt_pct(r.total_ns, length),
        )
        for r in ordered
    ]
    return RangeReport(headline, rows, [r.name for r in ordered], s)
