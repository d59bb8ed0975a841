"""The rules behind ``findings`` about how a region's time goes: syncs, launch cost,
idle GPU, odd instances.

Each reads one region (``finding_types.RegionContext``) and returns its
findings; the rules about what the region runs are in ``finding_rules``.
"""

from __future__ import annotations

import re

import numpy as np

from profiling.analysis.finding_batch import (
    group_by_sequence,
    index_of,
    name_flags,
    names_of,
)
from profiling.analysis.finding_graphs import graph_replays, host_late_advice, launch_text
from profiling.analysis.finding_rules import MAX_EVIDENCE, limit
from profiling.analysis.finding_types import Finding, RegionContext
from profiling.analysis.stored_regions import instance_column
from profiling.analysis.units import fmt_ns
from profiling.trace.model import Kind, Trace

GAP_MIN_SHARE = 0.25
"""gpu-idle-gaps: average share of the region's GPU span spent idle between its events."""
GAP_MIN_US = 10.0
"""gpu-idle-gaps: ... and at least this much idle time per instance, on average."""
ODD_FRACTION = 0.25
"""odd-instance: an instance whose time is this far from the median (as a fraction) ..."""
ODD_MIN_US = 5.0
"""... and at least this many microseconds from it."""

_SYNC = re.compile(r"^(?:cuda|hip)(?:Device|Stream|Event)Synchronize$|^(?:cuda|hip)Memcpy(?:2D)?$"
                   r"|^cuCtxSynchronize$|^cuStreamSynchronize$|^cuEventSynchronize$")


def sync_in_region(ctx: RegionContext) -> list[Finding]:
    """Host synchronisations (device/stream/event sync, blocking cudaMemcpy) in the region."""
    t = ctx.trace
    every, owner = ctx.cpu_flat[0], ctx.cpu_owner
    kinds = [int(Kind.RUNTIME), int(Kind.OTHER)]
    # one pass over every instance's rows; Python only for the evidence kept
    sync = np.isin(t.kind[every], kinds)
    sync[sync] = name_flags(t, np.asarray(t.name_id[every[sync]]), _SYNC.search)
    found, where = every[sync].tolist(), owner[sync].tolist()
    if not found:
        return []
    hit = set(index_of(ctx, where))
    rows = [ctx.evidence(r, ctx.instances[k], f"blocks the host {fmt_ns(int(t.dur_ns[r]))}")
            for r, k in zip(found[:MAX_EVIDENCE], where, strict=False)]
    names = sorted(names_of(t, every[sync]))
    return [Finding(
        id="sync-in-region", severity="medium", region=ctx.region, instances=tuple(sorted(hit)),
        title=f"host synchronisation inside {ctx.region} ({', '.join(names)})",
        detail=f"{len(found)} sync call(s) over {len(hit)} instance(s): the CPU waits for the "
               "GPU, and the GPU then waits for the next launch",
        evidence=limit(rows),
        suggestion="move .item(), .cpu(), printing and explicit synchronize() out of the "
                   "region; use non_blocking copies",
    )]


def launch_bound(ctx: RegionContext) -> list[Finding]:
    """CPU time per instance above its GPU time: the host cannot keep the GPU busy."""
    if not ctx.has_gpu:
        return []
    cpu, gpu = _cpu_ns(ctx).tolist(), instance_column(ctx.instances, "device_ns").tolist()
    cpu_avg, gpu_avg = sum(cpu) / len(cpu), sum(gpu) / len(gpu)
    if not gpu_avg or cpu_avg <= gpu_avg:
        return []
    index = instance_column(ctx.instances, "index").tolist()
    hit = tuple(i for i, c, g in zip(index, cpu, gpu, strict=True) if c > g)
    rows = [ctx.evidence(v.row, v, f"CPU {fmt_ns(c)}, GPU {fmt_ns(g)}")  # the evidence kept
            for v, c, g in zip(ctx.instances[:MAX_EVIDENCE], cpu, gpu, strict=False)]
    detail, suggestion = launch_text(cpu_avg / gpu_avg, graph_replays(ctx))
    return [Finding(
        id="launch-bound", severity="low", region=ctx.region, instances=hit,
        title=f"launch-bound: {fmt_ns(cpu_avg)} of CPU per instance for {fmt_ns(gpu_avg)} of GPU",
        detail=detail,
        evidence=limit(rows),
        suggestion=suggestion,
    )]


def _gaps(trace: Trace, rows: np.ndarray) -> tuple[float, float, int, float]:
    """(idle ns, span ns, row after the largest gap, largest gap ns) of one instance's
    GPU rows (the reference for ``_gap_columns``)."""
    if rows.size < 2:
        return 0.0, float(trace.dur_ns[rows].sum()) if rows.size else 0.0, -1, 0.0
    order = np.argsort(trace.ts_ns[rows], kind="stable")
    rows = rows[order]
    start = trace.ts_ns[rows]
    reach = np.maximum.accumulate(start + trace.dur_ns[rows])
    gaps = np.maximum(start[1:] - reach[:-1], 0)
    k = int(np.argmax(gaps))
    return float(gaps.sum()), float(reach[-1] - start[0]), int(rows[k + 1]), float(gaps[k])


def _gap_columns(trace: Trace, rows: np.ndarray, ptr: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_gaps`` of every instance at once, as four columns (instance ``k``'s rows are
    ``rows[ptr[k]:ptr[k+1]]``, in GPU start order): a running maximum per instance is
    one ``maximum.accumulate`` once each instance's ends are lifted above the
    previous instance's."""
    n = ptr.shape[0] - 1
    lengths = np.diff(ptr)
    rows = np.asarray(rows, dtype=np.int64)
    if rows.shape[0] == 0:
        return np.zeros(n), np.zeros(n), np.full(n, -1, dtype=np.int64), np.zeros(n)
    seg = np.repeat(np.arange(n, dtype=np.int64), lengths)
    first = ptr[:-1]
    start = trace.ts_ns[rows].astype(np.int64)
    end = start + trace.dur_ns[rows]
    base = int(start.min())
    width = int((end - base).max()) + 1
    if np.any((np.diff(start) < 0) & (seg[1:] == seg[:-1])) or n * width >= 1 << 62:
        cols = list(zip(*[_gaps(trace, rows[a:b]) for a, b in  # not in start order
                          zip(ptr[:-1].tolist(), ptr[1:].tolist(), strict=True)], strict=True))
        return (np.array(cols[0], dtype=np.float64), np.array(cols[1], dtype=np.float64),
                np.array(cols[2], dtype=np.int64), np.array(cols[3], dtype=np.float64))
    lift = seg * width
    reach = np.maximum.accumulate(end - base + lift) - lift + base
    inner = np.flatnonzero(np.arange(rows.shape[0]) != first[seg])  # positions 1.. of each
    gap = np.maximum(start[inner] - reach[inner - 1], 0)
    owner = seg[inner]
    idle = np.zeros(n, dtype=np.int64)
    np.add.at(idle, owner, gap)
    biggest = np.full(n, -1, dtype=np.int64)
    np.maximum.at(biggest, owner, gap)
    at_max = np.flatnonzero(gap == biggest[owner])
    owners, firsts = np.unique(owner[at_max], return_index=True)
    after = np.full(n, -1, dtype=np.int64)
    after[owners] = rows[inner[at_max[firsts]]]
    last = first + lengths - 1
    top = len(rows) - 1
    span = np.where(lengths > 1, reach[np.clip(last, 0, top)] - start[np.clip(first, 0, top)], 0)
    single = lengths == 1  # one event: its own time, no gap
    span[single] = trace.dur_ns[rows[first[single]]]
    few = lengths < 2
    idle[few], after[few], biggest[few] = 0, -1, 0
    return (idle.astype(np.float64), span.astype(np.float64), after,
            biggest.astype(np.float64))


def gpu_idle_gaps(ctx: RegionContext) -> list[Finding]:
    """The GPU idles between the region's own events for a large share of its span."""
    if not ctx.has_gpu:
        return []
    t, n = ctx.trace, len(ctx.instances)
    idle_k, span_k, after_k, gap_k = _gap_columns(t, ctx.batch.rows, ctx.batch.inst_ptr)
    idles, spans = idle_k.tolist(), span_k.tolist()
    idle = sum(idles) / n
    share = sum(i / s for i, s in zip(idles, spans, strict=True) if s) / n
    if share < GAP_MIN_SHARE or idle < GAP_MIN_US * 1e3:
        return []
    has = np.flatnonzero(after_k >= 0)
    rows = [ctx.evidence(row, ctx.instances[k], f"GPU idle {fmt_ns(gap)} before this")
            for k, row, gap in zip(has[:MAX_EVIDENCE].tolist(), after_k[has].tolist(),
                                   gap_k[has].tolist(), strict=False)]  # the evidence kept
    is_late, known = _late_launches(ctx, after_k[has], gap_k[has])
    late = int(is_late.sum())
    if known and late == known:
        detail = ("after the longest gap of each instance, the next event's launch call began "
                  "once the GPU was already idle: the GPU waits for the host to launch it")
        suggestion = host_late_advice(graph_replays(ctx), has[is_late], (
            "fuse the small kernels (torch.compile) or capture the region in a CUDA graph; "
            "look for host work between launches"))
    elif known and late == 0:
        detail = ("the launch calls were issued before the gaps: the GPU waits on something "
                  "other than the host (another stream, an event, a dependency)")
        suggestion = "look at what the stream waits on in the timeline (other streams, events)"
    else:
        detail = (f"in {late} of {has.shape[0]} instances the next event's launch call "
                  "began once the GPU was idle (the host was late); the other gaps' launches "
                  "were issued earlier or are not in the trace")
        suggestion = host_late_advice(
            graph_replays(ctx), has[is_late],
            "fuse the small kernels (torch.compile) or use a CUDA graph",
            "look at what the stream waits on")
    index = index_of(ctx, range(n))
    return [Finding(
        id="gpu-idle-gaps", severity="low", region=ctx.region,
        instances=tuple(v for v, i, s in zip(index, idles, spans, strict=True)
                        if s and i / s >= GAP_MIN_SHARE),
        title=f"GPU idle {100 * share:.0f}% of the region's GPU span "
              f"({fmt_ns(idle)} per instance)",
        detail=detail,
        evidence=limit(rows),
        suggestion=suggestion,
    )]


def _late_launches(ctx: RegionContext, rows: np.ndarray, gaps: np.ndarray
                   ) -> tuple[np.ndarray, int]:
    """(which, how many have a known launch call) of the GPU ``rows`` after a gap
    (``gaps``, ns) were launched by a call that began after the gap began: the host
    was late.  ``call_ts >= row_ts - gap`` is decided as Python decides it for an int
    and a float (exactly): the float difference, rounded up, against the integer."""
    t = ctx.trace
    call = np.asarray(ctx.analysed.links.launch[rows], dtype=np.int64)
    known = call >= 0
    began = t.ts_ns[rows[known]].astype(np.float64) - gaps[known]
    late = np.zeros(rows.shape[0], dtype=bool)
    late[known] = t.ts_ns[call[known]].astype(np.int64) >= np.ceil(began).astype(np.int64)
    return late, int(known.sum())


def odd_instances(ctx: RegionContext) -> list[Finding]:
    """Instances with another GPU event sequence, or a time far from the median."""
    if len(ctx.instances) < 3:
        return []
    found: list[Finding] = []
    if ctx.has_gpu:
        odd = _odd_sequences(ctx)
        if odd is not None:
            found.append(odd)
    basis = "GPU" if ctx.has_gpu else "CPU"
    column = instance_column(ctx.instances, "device_ns") if ctx.has_gpu else _cpu_ns(ctx)
    times = column.tolist()
    import statistics  # here: a reopen reads its findings from the index (findings.py)

    median = statistics.median(times)
    # int - float and int > float as Python does them (exact below 2**53 ns: 104 days)
    far = np.flatnonzero(np.abs(column - median)
                         > max(ODD_FRACTION * median, ODD_MIN_US * 1e3)).tolist()
    if far:
        index = instance_column(ctx.instances, "index")[far].tolist()
        found.append(Finding(
            id="odd-instance", severity="medium", region=ctx.region,
            instances=tuple(index),
            title=f"{len(far)} instance(s) with a {basis} time far from the median "
                  f"({fmt_ns(median)})",
            detail=", ".join(f"#{i}: {fmt_ns(times[k])}" for i, k in zip(index, far,
                                                                          strict=True)),
            evidence=limit([ctx.evidence(v.row, v,
                                         f"{basis} {fmt_ns(times[k])} vs median {fmt_ns(median)}")
                            for k in far[:MAX_EVIDENCE] for v in (ctx.instances[k],)]),
            suggestion="exclude warm-up instances (profiler schedule warmup) and check for "
                       "contention or clock changes",
        ))
    return found


def _cpu_ns(ctx: RegionContext) -> np.ndarray:
    """``RegionInstance.cpu_ns`` of every instance (from the columns)."""
    return instance_column(ctx.instances, "end_ns") - instance_column(ctx.instances, "start_ns")


def _odd_sequences(ctx: RegionContext) -> Finding | None:
    """The instances whose GPU events' names are not the most common sequence (the one
    most instances have; of equally common ones, the first seen), compared for all
    instances at once (``finding_batch.group_by_sequence``)."""
    t, b = ctx.trace, ctx.batch
    ptr = b.inst_ptr
    code = group_by_sequence(t, b.rows, ptr)
    counts = np.bincount(code)
    uniq, first_seen = np.unique(code, return_index=True)
    top = counts[uniq]
    best = uniq[top == top.max()]
    common = int(best[np.argmin(first_seen[top == top.max()])])
    odd = np.flatnonzero(code != common).tolist()
    if not odd:
        return None
    model = int(np.flatnonzero(code == common)[0])
    sig = t.name_id[b.rows[ptr[model] : ptr[model + 1]]].tolist()
    common_names = [t.strings[i] for i in sig]
    rows = []
    for k in odd[:MAX_EVIDENCE]:  # the evidence kept
        v, gpu = ctx.instances[k], b.rows[ptr[k] : ptr[k + 1]]
        names = [t.name(r) for r in gpu.tolist()]
        at = next((i for i, (x, y) in enumerate(zip(names, common_names, strict=False))
                   if x != y), min(len(names), len(common_names)))
        row = int(gpu[at]) if at < gpu.shape[0] else v.row
        rows.append(ctx.evidence(row, v, f"{len(names)} GPU events, most instances have "
                                         f"{len(common_names)}"))
    return Finding(
        id="odd-instance", severity="medium", region=ctx.region,
        instances=tuple(index_of(ctx, odd)),
        title=f"{len(odd)} instance(s) ran another kernel sequence",
        detail="most instances launch the same GPU events; these differ (warm-up, "
               "autotuning, a recompile or a data-dependent path)",
        evidence=limit(rows),
        suggestion="profile after more warm-up steps, or look at what differs",
    )
