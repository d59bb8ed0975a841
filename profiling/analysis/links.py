"""GPU event <-> the host call that launched it <-> the CPU op around that call.

Kineto gives every kernel, memcpy and memset the CUPTI/roctracer ``correlation``
of the runtime or driver call that enqueued it (cudaLaunchKernel,
cuLaunchKernelEx, cudaMemcpyAsync, hipLaunchKernel, ...), so the launch is a
join on that id, whatever the API is called.  Flow events (``ac2g``; ``async``
and ``async_gpu`` in old traces) say the same thing and are used only for GPU
events the correlation join left unlinked.  The op that launched an event is
the innermost ``cpu_op`` / ``user_annotation`` on the launch's thread that is
open when the call starts.

A GPU event whose call is not in the trace is an *orphan*; they are reported
by cause (``profiling.analysis.orphans``: no id, id on a non-call, enqueued
before the window, call not recorded), not guessed at.

Both directions are answered: ``Links.launch``/``Links.op`` go GPU -> CPU, and
``Links.launched_by_row``/``Links.launched_in`` go from a runtime call or an op
to the GPU rows it launched, which is what the TUI uses to jump across.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from profiling.analysis.async_events import async_rows
from profiling.analysis.nesting import Nesting, innermost_containing, nest
from profiling.analysis.ranges import distinct
from profiling.analysis.step_scope import query_lanes, with_process_sections
from profiling.trace.model import GPU_KINDS, NO_ID, Kind, LaneKind, Trace

FLOW_CATEGORIES = frozenset({"ac2g", "async_gpu", "async"})
"""Flow categories that draw a launch -> GPU event arrow (not ``fwdbwd``)."""


class LinkSource(IntEnum):
    """How a GPU event was tied to its launch."""

    NONE = 0
    CORRELATION = 1
    FLOW = 2


@dataclass(frozen=True)
class Links:
    """Launch links of every GPU event (kernel, memcpy, memset) in a trace.

    Per-row columns (length ``len(trace)``, -1 where not applicable):
      ``launch[r]``: the runtime/driver row that enqueued GPU row ``r``;
      ``op[r]``: the innermost cpu_op/user_annotation row around that launch;
      ``source[r]``: a ``LinkSource``.
    ``gpu_rows`` holds every GPU row, ``orphans`` those with no launch.
    ``by_launch`` holds the linked GPU rows ordered by (launch lane, launch
    start, GPU start), so "everything launched from lane L between t0 and t1"
    is one contiguous slice of it (see ``launched_in``); then, for a process that
    launches from several lanes, its launches again under a lane number past the
    real ones, for its profiler steps (``step_scope``).
    """

    launch: np.ndarray
    op: np.ndarray
    source: np.ndarray
    gpu_rows: np.ndarray
    orphans: np.ndarray
    by_launch: np.ndarray
    by_launch_lane: np.ndarray  # lane of each by_launch entry's launch
    by_launch_ts: np.ndarray  # launch start (ns) of each by_launch entry

    def launched_by(self, row: int) -> int | None:
        """The runtime/driver row that launched GPU row ``row`` (None if unknown)."""
        r = int(self.launch[row])
        return r if r >= 0 else None

    def enclosing_op(self, row: int) -> int | None:
        """The cpu_op/user_annotation row the launch of GPU row ``row`` sat in."""
        r = int(self.op[row])
        return r if r >= 0 else None

    def launched_by_row(self, row: int) -> np.ndarray:
        """GPU rows launched by exactly this runtime/driver row, in GPU start order."""
        return self.gpu_rows[self.launch[self.gpu_rows] == row]

    def launch_range(
        self, lanes: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised ``launched_in``: [lo, hi) slices of ``by_launch`` per query.

        A GPU row belongs to a query (lane, start, end) when its launch is on
        that lane and starts in [start, end).
        """
        lanes = np.asarray(lanes, dtype=np.int64)
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        lo = np.zeros(lanes.shape[0], dtype=np.int64)
        hi = np.zeros(lanes.shape[0], dtype=np.int64)
        if lanes.shape[0] == 0 or self.by_launch.shape[0] == 0:
            return lo, hi
        lane_lo = np.searchsorted(self.by_launch_lane, lanes, side="left")
        lane_hi = np.searchsorted(self.by_launch_lane, lanes, side="right")
        for lane in distinct(lanes):
            sel = np.flatnonzero(lanes == lane)
            a, b = int(lane_lo[sel[0]]), int(lane_hi[sel[0]])
            ts = self.by_launch_ts[a:b]
            lo[sel] = a + np.searchsorted(ts, starts[sel], side="left")
            hi[sel] = a + np.searchsorted(ts, ends[sel], side="left")
        return lo, np.maximum(lo, hi)

    def launched_in(self, trace: Trace, row: int) -> np.ndarray:
        """GPU rows launched from inside CPU row ``row`` (an op, annotation or
        runtime call) on its own thread (a profiler step: on any thread of its
        process, ``step_scope``), in GPU start order."""
        lane = query_lanes(trace, self.by_launch_lane, np.array([row]))
        start = int(trace.ts_ns[row])
        end = start + max(int(trace.dur_ns[row]), 1)
        lo, hi = self.launch_range(lane, np.array([start]), np.array([end]))
        rows = self.by_launch[int(lo[0]) : int(hi[0])]
        return rows[np.argsort(trace.ts_ns[rows], kind="stable")]


def category_strings(trace: Trace, names: frozenset[str]) -> np.ndarray:
    """Per string of the trace: True when it is one of the categories ``names``
    (case-insensitive); ``[trace.cat_id]`` of it is the rows in them."""
    return np.array([s.lower() in names for s in trace.strings], dtype=bool)


def category_mask(trace: Trace, names: frozenset[str]) -> np.ndarray:
    """Rows whose category (case-insensitive) is one of ``names``."""
    wanted = category_strings(trace, names)
    if wanted.shape[0] == 0:
        return np.zeros(len(trace), dtype=bool)
    return wanted[trace.cat_id]


def lane_kinds(trace: Trace) -> np.ndarray:
    """Per row: True when the row's lane is a CPU thread."""
    cpu = np.array([lane.kind == LaneKind.CPU for lane in trace.lanes], dtype=bool)
    if cpu.shape[0] == 0:
        return np.zeros(len(trace), dtype=bool)
    return cpu[trace.lane]


def op_nesting(trace: Trace, with_async: bool = False) -> tuple[np.ndarray, Nesting]:
    """The cpu_op / user_annotation rows (in row order) and their nesting per lane.

    Without a c10d Work's async range (``gloo:*``, ``nccl:*``) unless ``with_async``:
    torch gives those no parent and no children (``async_events``), so none is the
    op around a launch nor a link of a launch chain."""
    ops = np.flatnonzero((trace.kind == Kind.CPU_OP) | (trace.kind == Kind.USER_ANNOTATION))
    if not with_async:
        ops = ops[~async_rows(trace, ops)]
    start = trace.ts_ns[ops]
    end = start + trace.dur_ns[ops]
    return ops, nest(start, end, trace.lane[ops])


@dataclass(frozen=True)
class OpTree:
    """The ops of a trace (cpu_op and user_annotation rows, in row order) nested by
    torch's stack rule: the one answer to "which op encloses which", shared by the
    links (the op around a launch) and the launch chains (every op around it)."""

    rows: np.ndarray  # int64 trace rows, ascending
    nesting: Nesting  # indexed like ``rows``

    @classmethod
    def of(cls, trace: Trace) -> OpTree:
        rows, nesting = op_nesting(trace)
        return cls(rows.astype(np.int64), nesting)

    def parent(self, row: int) -> int:
        """The trace row of the op enclosing op ``row`` (-1: none, or not an op)."""
        i = int(np.searchsorted(self.rows, row))
        if i >= self.rows.shape[0] or int(self.rows[i]) != row:
            return -1
        p = int(self.nesting.parent[i])
        return int(self.rows[p]) if p >= 0 else -1


def link_gpu_events(trace: Trace, ops: OpTree | Callable[[], OpTree] | None = None) -> Links:
    """Link every GPU event to its launch (correlation first, flows second).

    ``ops`` reuses an ``OpTree`` already made (``AnalysedTrace`` shares one), or
    one asked for (a call) only once the launches are joined, so that it can be
    built meanwhile; without it the ops are nested here, and only when some GPU
    event is linked.
    """
    n = len(trace)
    kind = trace.kind
    is_gpu = np.isin(kind, np.array([int(k) for k in GPU_KINDS], dtype=kind.dtype))
    gpu_rows = np.flatnonzero(is_gpu)
    gpu_rows = gpu_rows[np.argsort(trace.ts_ns[gpu_rows], kind="stable")]
    launch = np.full(n, -1, dtype=np.int64)
    source = np.zeros(n, dtype=np.uint8)

    runtime = np.flatnonzero(kind == Kind.RUNTIME)
    _link_by_correlation(trace, gpu_rows, runtime, launch, source)
    unlinked = gpu_rows[launch[gpu_rows] < 0]
    if unlinked.shape[0]:
        _link_by_flows(trace, unlinked, runtime, launch, source)

    op = np.full(n, -1, dtype=np.int64)
    linked = gpu_rows[launch[gpu_rows] >= 0]
    if ops is not None:
        tree = ops() if callable(ops) else ops
        op_rows, nesting = tree.rows, tree.nesting
    elif linked.shape[0]:
        op_rows, nesting = op_nesting(trace)
    else:
        op_rows, nesting = np.empty(0, np.int64), None
    if linked.shape[0] and op_rows.shape[0] and nesting is not None:
        calls = launch[linked]
        inner = innermost_containing(
            trace.ts_ns[calls],
            trace.lane[calls].astype(np.int64),
            trace.ts_ns[op_rows],
            trace.ts_ns[op_rows] + trace.dur_ns[op_rows],
            trace.lane[op_rows].astype(np.int64),
            nesting,
        )
        op[linked] = np.where(inner >= 0, op_rows[np.maximum(inner, 0)], -1)

    calls = launch[linked]
    order = np.lexsort((trace.ts_ns[linked], trace.ts_ns[calls], trace.lane[calls]))
    by_launch, by_lane, by_ts = with_process_sections(trace, linked[order], launch)
    return Links(
        launch=launch,
        op=op,
        source=source,
        gpu_rows=gpu_rows,
        orphans=gpu_rows[launch[gpu_rows] < 0],
        by_launch=by_launch,
        by_launch_lane=by_lane,
        by_launch_ts=by_ts,
    )


def _link_by_correlation(
    trace: Trace,
    gpu_rows: np.ndarray,
    runtime: np.ndarray,
    launch: np.ndarray,
    source: np.ndarray,
) -> None:
    """Join GPU rows to runtime rows on ``correlation``, in the process that drives
    each GPU event's device (``correlation.launch_by_correlation``: ids are per
    process, so an id another process also uses links nothing it should not)."""
    from profiling.analysis.correlation import launch_by_correlation

    found = launch_by_correlation(trace, gpu_rows, runtime)
    ok = found >= 0
    launch[gpu_rows[ok]] = found[ok]
    source[gpu_rows[ok]] = LinkSource.CORRELATION


def _link_by_flows(
    trace: Trace,
    unlinked: np.ndarray,
    runtime: np.ndarray,
    launch: np.ndarray,
    source: np.ndarray,
) -> None:
    """Use launch flows (start on the runtime call, finish on the GPU event).

    A flow is taken only where nothing contradicts it: the call and the GPU event
    do not carry two different correlations, and the call's process drives the
    GPU event's device (as far as the correlation links already made say).
    """
    from profiling.analysis.correlation import drives, process_affinity

    flows = np.flatnonzero((trace.kind == Kind.FLOW) & category_mask(trace, FLOW_CATEGORIES))
    if flows.shape[0] == 0:
        return
    ph = trace.ph[flows]
    starts = flows[ph == ord("s")]
    finishes = flows[ph == ord("f")]
    if starts.shape[0] == 0 or finishes.shape[0] == 0:
        return
    # Flow ids that start exactly once: pair each finish with that start.
    sid, first, counts = np.unique(
        trace.correlation[starts], return_index=True, return_counts=True
    )
    keep = counts == 1
    sid, first = sid[keep], first[keep]
    if sid.shape[0] == 0:  # every start id repeats (e.g. ids that are not numbers)
        return
    pos = np.searchsorted(sid, trace.correlation[finishes])
    pos = np.minimum(pos, max(sid.shape[0] - 1, 0))
    paired = (sid.shape[0] > 0) & (sid[pos] == trace.correlation[finishes])
    if not paired.any():
        return
    f_rows = finishes[paired]
    s_rows = starts[first[pos[paired]]]
    call = _slice_at(trace, runtime, s_rows)
    is_gpu = np.zeros(len(trace), dtype=bool)
    is_gpu[unlinked] = True
    gpu_candidates = np.flatnonzero(np.isin(trace.kind, [int(k) for k in GPU_KINDS]))
    target = _slice_at(trace, gpu_candidates, f_rows)
    target[_held_by_other_slice(trace, f_rows, target)] = -1
    ok = (call >= 0) & (target >= 0)
    call, target = call[ok], target[ok]
    corr = trace.correlation
    agree = (corr[call] == NO_ID) | (corr[target] == NO_ID) | (corr[call] == corr[target])
    known = gpu_candidates[launch[gpu_candidates] >= 0]
    affinity = process_affinity(trace, known, launch[known])
    ok = is_gpu[target] & (launch[target] < 0) & agree & drives(trace, affinity, target, call)
    launch[target[ok]] = call[ok]
    source[target[ok]] = LinkSource.FLOW


def _held_by_other_slice(trace: Trace, f_rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per flow finish: True where the innermost slice open at its time on its lane is
    not the GPU event found for it but a device slice that is no GPU event.

    A finish binds to its enclosing slice, the innermost one.  Kineto ends flows on
    ``cuda_sync`` slices too ("Stream Sync", "Event Sync"), which run on the stream's
    lane while a kernel or copy there is still open: that flow is the sync's, and
    taking it for the copy's would tie the copy to the sync's runtime call.
    """
    held = np.zeros(f_rows.shape[0], dtype=bool)
    lanes = distinct(trace.lane[f_rows])
    slices = (trace.ph == ord("X")) | (trace.ph == ord("B"))
    not_gpu = ~np.isin(trace.kind, [int(k) for k in GPU_KINDS])
    others = np.flatnonzero(slices & not_gpu & np.isin(trace.lane, lanes))
    if others.shape[0] == 0:
        return held
    inner = _slice_at(trace, others, f_rows)
    both = (inner >= 0) & (target >= 0)
    ts = trace.ts_ns
    held[both] = ts[inner[both]] > ts[target[both]]
    return held


def _slice_at(trace: Trace, candidates: np.ndarray, points: np.ndarray) -> np.ndarray:
    """For each flow row, the candidate slice on its lane that is open at its time."""
    out = np.full(points.shape[0], -1, dtype=np.int64)
    if candidates.shape[0] == 0:
        return out
    lane = trace.lane
    cand_lane = lane[candidates]
    for ln in distinct(lane[points]):
        sel = np.flatnonzero(lane[points] == ln)
        mine = candidates[cand_lane == ln]
        if mine.shape[0] == 0:
            continue
        ts = trace.ts_ns[mine]
        t = trace.ts_ns[points[sel]]
        pos = np.searchsorted(ts, t, side="right") - 1
        found = pos >= 0
        rows = mine[np.maximum(pos, 0)]
        open_ = found & (trace.ts_ns[rows] + trace.dur_ns[rows] >= t)
        out[sel[open_]] = rows[open_]
    return out
