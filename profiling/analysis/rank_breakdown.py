"""Where each rank's GPU time went: communication, compute, their overlap, idle time.

Per rank, over its GPU events (kernels, memcpys, memsets), in µs:

- ``span_us``: first GPU event's start to the last one's end;
- ``comm_us``: length of the union of communication kernels' intervals (names
  containing ``nccl`` or ``rccl``, any case): time a collective was running;
- ``compute_us``: the union of every other kernel (not Memcpy, not Memset);
- ``overlap_us``: the intersection of those two unions: communication hidden
  behind compute, the thing overlap schedules are for;
- ``idle_us``: ``span_us`` minus the union of all GPU events;
- ``memcpy_us``, ``memset_us``: unions of the copies and sets.

Unions, not sums: kernels on several streams overlap, and a sum would count a
second of two-stream work twice.  Each union is one sort and a running maximum
(``union_length``), vectorised; the intersection is |A| + |B| - |A ∪ B|.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.attention_regions import is_attention_name
from profiling.analysis.job_merge import Job, JobRank
from profiling.analysis.ranges import distinct
from profiling.analysis.regions import RegionInstance, Regions
from profiling.analysis.stored_regions import StoredRegions
from profiling.trace.model import Kind, Trace

COMM_WORDS = ("nccl", "rccl")


def comm_names(strings: list[str]) -> np.ndarray:
    """Per string id: whether a kernel of that name is communication."""
    return np.fromiter((any(w in s.lower() for w in COMM_WORDS) for s in strings), dtype=bool,
                       count=len(strings))


def union_segments(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The disjoint, sorted segments whose union equals that of [start, end) intervals."""
    if start.shape[0] == 0:
        return start[:0].astype(np.int64), end[:0].astype(np.int64)
    order = np.argsort(start, kind="stable")
    s, e = start[order].astype(np.int64), end[order].astype(np.int64)
    reach = np.maximum.accumulate(e)
    new = np.ones(s.shape[0], dtype=bool)
    new[1:] = s[1:] > reach[:-1]  # starts after everything before it ended
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, s.shape[0] - 1]
    return s[first], reach[last]


def union_length(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals [start, end) (ns)."""
    s, e = union_segments(start, end)
    return int((e - s).sum())


def _us(ns: int) -> float:
    return ns / 1000.0


def gpu_breakdown(trace: Trace, rows: tuple[int, int] = (0, -1),
                  comm: np.ndarray | None = None) -> dict[str, float]:
    """The time figures of one rank (the rows ``rows`` of ``trace``; all by default)."""
    lo, hi = rows
    hi = len(trace) if hi < 0 else hi
    kind = trace.kind[lo:hi]
    gpu = np.flatnonzero(np.isin(kind, [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET])) + lo
    ts, end = trace.ts_ns[gpu], trace.ts_ns[gpu] + trace.dur_ns[gpu]
    kinds = trace.kind[gpu]
    is_comm = (comm if comm is not None else comm_names(trace.strings))[trace.name_id[gpu]]
    kernel = kinds == Kind.KERNEL
    c, k = kernel & is_comm, kernel & ~is_comm
    comm_ns = union_length(ts[c], end[c])
    compute_ns = union_length(ts[k], end[k])
    both = union_length(ts[c | k], end[c | k])
    span = int(end.max() - ts.min()) if gpu.shape[0] else 0
    return {
        "span_us": _us(span),
        "comm_us": _us(comm_ns),
        "compute_us": _us(compute_ns),
        "overlap_us": _us(comm_ns + compute_ns - both),
        "idle_us": _us(span - union_length(ts, end)),
        "memcpy_us": _us(union_length(ts[kinds == Kind.MEMCPY], end[kinds == Kind.MEMCPY])),
        "memset_us": _us(union_length(ts[kinds == Kind.MEMSET], end[kinds == Kind.MEMSET])),
        "gpu_events": int(gpu.shape[0]),
    }


FIGURES_PART = "rank_figures"
"""Each rank's ``gpu_breakdown``, kept with the index (``analysis_store``): on a 1 GB
trace six unions over 300,000 GPU events and passes over 3 M rows' kinds, 45 ms of
each reopened ``ranks`` on 2 cores, mostly faulting the mapped columns in."""


def rank_figures(job: Job, comm: np.ndarray) -> list[dict[str, float]]:
    """``gpu_breakdown`` of each rank of ``job``, in its order, kept with the index of
    the rows' trace (``_kept``)."""
    trace = job.rows_of if job.rows_of is not None else job.trace  # the one with an index
    return _kept(trace, [list(r.rows) for r in job.ranks],
                 lambda: [gpu_breakdown(job.trace, r.rows, comm) for r in job.ranks])


def store_trace_figures(trace: Trace) -> None:
    """What ``rank_figures`` reads for ``ranks`` of this one trace (its one-trace job:
    one rank of every row), computed and stored by a first open (``warm``); nothing
    for a file that merges several ranks (``ranks`` splits it) or one with no index."""
    from profiling.analysis import analysis_store
    from profiling.analysis.correlation import ranks_in

    if ranks_in([g.pid for g in trace.groups]) or not analysis_store.available(trace):
        return
    _kept(trace, [[0, len(trace)]],
          lambda: [gpu_breakdown(trace, (0, len(trace)), comm_names(trace.strings))])


def _kept(trace: Trace, spans: list[list[int]],
          compute: Callable[[], list[dict[str, float]]]) -> list[dict[str, float]]:
    """The figures of the ranks whose rows are ``spans``: read from ``trace``'s index
    when a current copy of the same spans is there, else computed and stored."""
    from profiling.analysis import analysis_store

    found = analysis_store.load(trace, FIGURES_PART)
    if found is not None and _figures_fit(found[1], spans):
        return list(found[1]["figures"])
    figures = compute()
    if analysis_store.available(trace):
        analysis_store.save(trace, FIGURES_PART, {}, {"spans": spans, "figures": figures})
    return figures


_FIGURE_NAMES = ("span_us", "comm_us", "compute_us", "overlap_us", "idle_us", "memcpy_us",
                 "memset_us", "gpu_events")


def _figures_fit(doc: object, spans: list[list[int]]) -> bool:
    """Whether a stored copy is of these ranks' rows and holds every figure as a
    number of its type (else it is recomputed)."""
    if not isinstance(doc, dict) or doc.get("spans") != spans:
        return False
    figures = doc.get("figures")
    return isinstance(figures, list) and len(figures) == len(spans) and all(
        isinstance(f, dict) and tuple(f) == _FIGURE_NAMES
        and all(type(f[k]) is (int if k == "gpu_events" else float) for k in f)
        for f in figures)


def rank_regions(regions: Regions, lane_rank: np.ndarray) -> dict[int, Regions]:
    """The region instances of each rank of a merged trace (one pass over them).
    Stored regions are split as columns (no object per instance: 85,000 on a 1 GB
    trace, 0.4 s on 2 cores), and one rank's are the regions themselves."""
    if isinstance(regions, StoredRegions):
        owner = lane_rank[regions.lanes()]
        ranks = distinct(owner).tolist()
        if len(ranks) == 1:
            return {ranks[0]: regions}
        return {rank: regions.subset(np.flatnonzero(owner == rank)) for rank in ranks}
    inst = regions.instances
    lanes = np.fromiter((i.lane for i in inst), dtype=np.int64, count=len(inst))
    owner = lane_rank[lanes] if len(inst) else lanes
    out: dict[int, list[RegionInstance]] = {}
    for j, rank in enumerate(owner.tolist()):
        out.setdefault(rank, []).append(inst[j])
    return {rank: Regions(found) for rank, found in out.items()}


def region_figures(regions: Regions) -> dict[str, Any]:
    """``stats``' region objects, attention regions first (then first appearance)."""
    summaries = sorted(regions.summaries(), key=lambda s: not is_attention_name(s.name))
    return {s.name: {k: v for k, v in s.as_json().items() if k != "name"} for s in summaries}


def device_of(job: Job, r: JobRank) -> str:
    """``GPU 3`` (the rank's device groups with events, by the trace's own labels)."""
    prefix = f"rank {r.rank} · "
    names = [g.label.removeprefix(prefix) for g in job.trace.groups[r.groups[0]:r.groups[1]]
             if g.kind == "gpu"]
    return ", ".join(names) or "CPU"


def rank_breakdown(job: Job, analysed: AnalysedTrace | None = None) -> list[dict[str, Any]]:
    """``ranks --json``: one object per rank, in rank order (DESIGN.md section 5).

    ``analysed`` is the merged trace's analysis (the TUI's, shared); regions come
    from it.  Without it, a fresh one is made."""
    a = analysed or AnalysedTrace(job.trace)
    comm = comm_names(job.trace.strings)
    lane_rank = job.rank_of_lane()
    by_rank = rank_regions(a.regions, lane_rank)
    out = []
    for r, figures in zip(job.ranks, rank_figures(job, comm), strict=True):
        out.append({"rank": r.rank, "path": r.path, "device": device_of(job, r), **figures,
                    "offset_ns": r.offset_ns,
                    "regions": region_figures(by_rank.get(r.rank, Regions([])))})
    return out
