"""The Ranks view's data: a job's report as table cells (pure; no Textual).

A job's session has its ``Job``; a plain trace's has none, and the view then
shows that trace alone as one rank (its breakdown, no stragglers), with a line
saying how to open a job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.collectives import Collective, row_collective
from profiling.analysis.finding_types import Finding
from profiling.analysis.job_report import job_report
from profiling.analysis.rank_breakdown import gpu_breakdown
from profiling.analysis.ranks import trace_rank
from profiling.analysis.stragglers import Straggle
from profiling.trace.model import GPU_KINDS
from tui.fmt import fmt_time
from tui.job_session import job_of

RANK_COLUMNS = ("rank", "device", "span", "comm", "compute", "overlap", "idle", "memcpy",
                "memset", "coll. wait", "slowest in", "where the time went")
RANK_FIELDS = ("span_us", "comm_us", "compute_us", "overlap_us", "idle_us", "memcpy_us",
               "memset_us", "collective_wait_us")
STRAGGLER_COLUMNS = ("item", "measure", "slowest", "its time", "median", "excess")


@dataclass
class RanksData:
    """What the view shows; ``jump_rows[i]``: the merged row a rank row jumps to."""

    header: str
    ranks: list[dict[str, Any]]
    jump_rows: list[int]
    stragglers: list[Straggle] = field(default_factory=list)
    collectives: list[Collective] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    worst: list[Collective] = field(default_factory=list)
    warning: str = ""  # JobReport.alignment_warning: the alignment contradicts the collectives


def _first_gpu_row(a: AnalysedTrace, rows: tuple[int, int]) -> int:
    lo, hi = rows
    found = np.flatnonzero(np.isin(a.trace.kind[lo:hi], list(GPU_KINDS)))
    if not found.shape[0]:
        return lo if hi > lo else -1
    gpu = found + lo
    return int(gpu[np.argmin(a.trace.ts_ns[gpu])])


def ranks_data(session: Any) -> RanksData:
    """The report of the session's job, or its one trace as one rank."""
    a: AnalysedTrace = session.analysis
    job = job_of(session)
    if job is None:
        rank = trace_rank(a.trace.metadata)  # as attn-tui ranks: rank 0 without one
        devices = ", ".join(g.label for g in a.trace.groups if g.kind == "gpu") or "CPU"
        row = {"rank": 0 if rank is None else rank, "device": devices,
               **gpu_breakdown(a.trace), "collective_wait_us": 0.0}
        return RanksData("one trace, not a job: open a job's folder (or its rank traces) to "
                         "see its ranks side by side", [row],
                         [_first_gpu_row(a, (0, len(a.trace)))])
    report = job_report(job, a)
    jumps = [_first_gpu_row(a, r.rows) for r in job.ranks]
    return RanksData(job.header(), report.ranks, jumps, report.stragglers, report.collectives,
                     report.findings, report.worst_collectives(),
                     report.alignment_warning(fmt_time))


def rank_cells(row: dict[str, Any]) -> list[str]:
    rank = "" if row["rank"] is None else str(row["rank"])
    slowest = row.get("slowest_in", 0)
    return ([rank, row["device"]] + [fmt_time(row[f], "us") for f in RANK_FIELDS]
            + [str(slowest) if slowest else ""])


def straggler_cells(s: Straggle) -> list[str]:
    return [s.name, s.measure, str(s.slowest), fmt_time(max(s.values_ns)),
            fmt_time(s.median_ns), excess_cell(s)]


def excess_cell(s: Straggle) -> str:
    """The slowest rank's excess over the median, and as a share of the median when
    there is one (a median of 0 has no share: it is not +0 %)."""
    share = f" ({s.excess_share:+.0%})" if s.median_ns > 0 else ""
    return fmt_time(s.excess_ns) + share


def collective_lines(data: RanksData, rank_numbers: list[int]) -> list[str]:
    """The collectives whose ranks arrived furthest apart, one line each."""
    out = []
    for c in data.worst:
        waits = ", ".join(f"{r}: {fmt_time(w)}" for r, w in zip(rank_numbers, c.wait_ns,
                                                                 strict=True) if w)
        last = rank_numbers[c.last_rank_index]
        out.append(f"{c.name} #{c.index}: skew {fmt_time(c.skew_ns)}, last rank {last}"
                   + (f"; waits {waits}" if waits else ""))
    return out


def collective_rows(trace: Any, row: int) -> list[tuple[str, str]]:
    """Details rows for a communication kernel of a job: the same collective on the
    other ranks, when each arrived and how long each waited in it (``tui.details``)."""
    found = row_collective(trace, row)
    if found is None:
        return []
    job, c = found
    ranks = [r.rank for r in job.ranks]
    here = ranks[[i for i, r in enumerate(c.rows) if r == row][0]]
    on = sum(1 for r in c.rows if r >= 0)
    how = "sequence number" if c.by_seq else "order"
    waits = "  ".join(f"{rank}: {fmt_time(w)}" for rank, w, r in
                      zip(ranks, c.wait_ns, c.rows, strict=True) if r >= 0)
    return [
        ("collective", f"{c.name} #{c.index} on {on} ranks (by {how}); rank {here} waited "
                       f"{fmt_time(c.wait_ns[ranks.index(here)])}"),
        ("arrivals", f"skew {fmt_time(c.skew_ns)}, last to arrive: rank "
                     f"{ranks[c.last_rank_index]} (a rank's wait: the last start minus its own)"),
        ("rank waits", waits),
    ]


BAR_PARTS = (("compute", "█", "green"), ("overlap", "▓", "cyan"), ("comm", "▒", "magenta"),
             ("copies", "░", "red"), ("idle", "·", "dim"))
"""The bar's parts, in order: compute only, compute with communication under it,
communication only, Memcpy/Memset alone, idle.  Glyphs differ as well as colours,
so the bar reads under ``NO_COLOR`` and in an SVG."""


def bar_parts(row: dict[str, Any]) -> list[float]:
    """µs of each ``BAR_PARTS`` part of a rank's span (they add up to the span)."""
    compute, comm, overlap = row["compute_us"], row["comm_us"], row["overlap_us"]
    busy = row["span_us"] - row["idle_us"]
    copies = max(busy - (compute + comm - overlap), 0.0)
    return [compute - overlap, overlap, comm - overlap, copies, row["idle_us"]]


def time_bar(row: dict[str, Any], scale_us: float, width: int) -> list[tuple[str, str]]:
    """The rank's span as ``width * span / scale_us`` cells split into its parts
    (largest remainders, so the cells add up), as (text, style) pieces."""
    parts = bar_parts(row)
    cells = round(width * row["span_us"] / scale_us) if scale_us > 0 else 0
    total = sum(parts)
    if cells <= 0 or total <= 0:
        return []
    exact = [cells * p / total for p in parts]
    counts = [int(e) for e in exact]
    order = sorted(range(len(parts)), key=lambda i: exact[i] - counts[i], reverse=True)
    for i in order[: cells - sum(counts)]:
        counts[i] += 1
    return [(glyph * n, style) for (_, glyph, style), n in zip(BAR_PARTS, counts, strict=True)
            if n]


def bar_legend() -> list[tuple[str, str]]:
    """``█ compute ▓ overlap ▒ comm ░ copies · idle`` as (text, style) pieces."""
    out: list[tuple[str, str]] = []
    for name, glyph, style in BAR_PARTS:
        out += [(glyph, style), (f" {name}  ", "")]
    return out
