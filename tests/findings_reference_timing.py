"""The timing rules as they were before ``finding_batch`` (see ``findings_reference``)."""
# ruff: noqa: E501

from __future__ import annotations

from collections import Counter

import numpy as np

from profiling.analysis.finding_graphs import (
    GRAPH_LAUNCH,
    GraphReplays,
    host_late_advice,
    launch_text,
)
from profiling.analysis.finding_rules import MAX_EVIDENCE, limit
from profiling.analysis.finding_timing import (
    _SYNC,
    GAP_MIN_SHARE,
    GAP_MIN_US,
    ODD_FRACTION,
    ODD_MIN_US,
    _gaps,
)
from profiling.analysis.finding_types import EvidenceRow, Finding, RegionContext
from profiling.analysis.units import fmt_ns
from profiling.trace.model import Kind


def sync_in_region(ctx: RegionContext) -> list[Finding]:
    """Host synchronisations (device/stream/event sync, blocking cudaMemcpy) in the region."""
    t = ctx.trace
    rows: list[EvidenceRow] = []
    hit: set[int] = set()
    is_sync = np.array([bool(_SYNC.search(name)) for name in t.strings], dtype=bool)
    kinds = [int(Kind.RUNTIME), int(Kind.OTHER)]
    cpu = [ctx.cpu_rows(v) for v in ctx.instances]
    every = np.concatenate(cpu) if cpu else np.zeros(0, dtype=np.int64)
    sync = (is_sync[t.name_id[every]] & np.isin(t.kind[every], kinds)) if is_sync.size else \
        np.zeros(every.shape[0], dtype=bool)
    # one pass over every instance's rows; Python only for the syncs found
    ends = np.cumsum([c.shape[0] for c in cpu]).tolist()
    for k in np.unique(np.searchsorted(ends, np.flatnonzero(sync), side="right")).tolist():
        v, mine = ctx.instances[k], cpu[k]
        for r in mine[sync[ends[k] - mine.shape[0]:ends[k]]].tolist():
            hit.add(v.index)
            rows.append(ctx.evidence(r, v, f"blocks the host {fmt_ns(int(t.dur_ns[r]))}"))
    if not hit:
        return []
    names = sorted({e.name for e in rows})
    return [Finding(
        id="sync-in-region", severity="medium", region=ctx.region, instances=tuple(sorted(hit)),
        title=f"host synchronisation inside {ctx.region} ({', '.join(names)})",
        detail=f"{len(rows)} sync call(s) over {len(hit)} instance(s): the CPU waits for the "
               "GPU, and the GPU then waits for the next launch",
        evidence=limit(rows),
        suggestion="move .item(), .cpu(), printing and explicit synchronize() out of the "
                   "region; use non_blocking copies",
    )]


def launch_bound(ctx: RegionContext) -> list[Finding]:
    """CPU time per instance above its GPU time: the host cannot keep the GPU busy."""
    if not ctx.has_gpu:
        return []
    cpu = [v.cpu_ns for v in ctx.instances]
    gpu = [v.device_ns for v in ctx.instances]
    cpu_avg, gpu_avg = sum(cpu) / len(cpu), sum(gpu) / len(gpu)
    if not gpu_avg or cpu_avg <= gpu_avg:
        return []
    hit = tuple(v.index for v, c, g in zip(ctx.instances, cpu, gpu, strict=True) if c > g)
    rows = [ctx.evidence(v.row, v, f"CPU {fmt_ns(c)}, GPU {fmt_ns(g)}")  # the evidence kept
            for v, c, g in zip(ctx.instances[:MAX_EVIDENCE], cpu, gpu, strict=False)]
    detail, suggestion = launch_text(cpu_avg / gpu_avg, _graph_replays(ctx))
    return [Finding(
        id="launch-bound", severity="low", region=ctx.region, instances=hit,
        title=f"launch-bound: {fmt_ns(cpu_avg)} of CPU per instance for {fmt_ns(gpu_avg)} of GPU",
        detail=detail,
        evidence=limit(rows),
        suggestion=suggestion,
    )]


def gpu_idle_gaps(ctx: RegionContext) -> list[Finding]:
    """The GPU idles between the region's own events for a large share of its span."""
    if not ctx.has_gpu:
        return []
    t = ctx.trace
    gaps = [_gaps(t, ctx.gpu_rows(v)) for v in ctx.instances]
    stats = [(v, *g) for v, g in zip(ctx.instances, gaps, strict=True)]
    idle = sum(s[1] for s in stats) / len(stats)
    share = sum(s[1] / s[2] for s in stats if s[2]) / len(stats)
    if share < GAP_MIN_SHARE or idle < GAP_MIN_US * 1e3:
        return []
    after_gaps = [(v, row, gap) for v, _, _, row, gap in stats if row >= 0]
    rows = [ctx.evidence(row, v, f"GPU idle {fmt_ns(gap)} before this")
            for v, row, gap in after_gaps[:MAX_EVIDENCE]]  # the evidence kept
    late_at, known = _late_launches(ctx, [(k, row, gap) for k, (_, _, _, row, gap)
                                          in enumerate(stats) if row >= 0])
    late = len(late_at)
    if known and late == known:
        detail = ("after the longest gap of each instance, the next event's launch call began "
                  "once the GPU was already idle: the GPU waits for the host to launch it")
        suggestion = host_late_advice(_graph_replays(ctx), np.array(late_at, dtype=np.int64), (
            "fuse the small kernels (torch.compile) or capture the region in a CUDA graph; "
            "look for host work between launches"))
    elif known and late == 0:
        detail = ("the launch calls were issued before the gaps: the GPU waits on something "
                  "other than the host (another stream, an event, a dependency)")
        suggestion = "look at what the stream waits on in the timeline (other streams, events)"
    else:
        detail = (f"in {late} of {len(after_gaps)} instances the next event's launch call "
                  "began once the GPU was idle (the host was late); the other gaps' launches "
                  "were issued earlier or are not in the trace")
        suggestion = host_late_advice(
            _graph_replays(ctx), np.array(late_at, dtype=np.int64),
            "fuse the small kernels (torch.compile) or use a CUDA graph",
            "look at what the stream waits on")
    return [Finding(
        id="gpu-idle-gaps", severity="low", region=ctx.region,
        instances=tuple(v.index for v, i, s, _, _ in stats if s and i / s >= GAP_MIN_SHARE),
        title=f"GPU idle {100 * share:.0f}% of the region's GPU span "
              f"({fmt_ns(idle)} per instance)",
        detail=detail,
        evidence=limit(rows),
        suggestion=suggestion,
    )]


def _late_launches(ctx: RegionContext, gaps: list[tuple[int, int, float]]
                   ) -> tuple[list[int], int]:
    """(the instance positions whose, how many with a known launch call) GPU row after
    its longest gap was launched by a call that began after the gap began: the host
    was late."""
    t = ctx.trace
    launch = ctx.analysed.links.launch
    late, known = [], 0
    for k, row, gap in gaps:
        call = int(launch[row])
        if call < 0:
            continue
        known += 1
        if int(t.ts_ns[call]) >= int(t.ts_ns[row]) - gap:
            late.append(k)
    return late, known


def _graph_replays(ctx: RegionContext) -> GraphReplays:
    """``finding_graphs.graph_replays`` one instance at a time: the names of its GPU
    rows' launch calls and of its own runtime rows, each tested by the regex."""
    t = ctx.trace
    launch = ctx.analysed.links.launch
    replays, work, outside, names = [], [], [], set()
    for v in ctx.instances:
        gpu = ctx.gpu_rows(v).tolist()
        calls = [int(launch[r]) for r in gpu if int(launch[r]) >= 0]
        runtime = [r for r in ctx.cpu_rows(v).tolist() if int(t.kind[r]) == int(Kind.RUNTIME)]
        mine = {t.name(r) for r in calls + runtime if GRAPH_LAUNCH.search(t.name(r))}
        names |= mine
        replays.append(bool(mine))
        work.append(bool(mine) or bool(gpu))
        outside.append(sum(not GRAPH_LAUNCH.search(t.name(c)) for c in calls))
    return GraphReplays(np.array(replays, dtype=bool), np.array(work, dtype=bool),
                        np.array(outside, dtype=np.int64), tuple(sorted(names)))


def odd_instances(ctx: RegionContext) -> list[Finding]:
    """Instances with another GPU event sequence, or a time far from the median."""
    if len(ctx.instances) < 3:
        return []
    t = ctx.trace
    found: list[Finding] = []
    if ctx.has_gpu:
        sigs = [tuple(t.name(r) for r in ctx.gpu_rows(v).tolist()) for v in ctx.instances]
        common, _ = Counter(sigs).most_common(1)[0]
        rows, hit = [], []
        for v, sig in zip(ctx.instances, sigs, strict=True):
            if sig == common:
                continue
            hit.append(v.index)
            k = next((i for i, (a, b) in enumerate(zip(sig, common, strict=False)) if a != b),
                     min(len(sig), len(common)))
            gpu = ctx.gpu_rows(v)
            row = int(gpu[k]) if k < gpu.shape[0] else v.row
            rows.append(ctx.evidence(row, v, f"{len(sig)} GPU events, most instances have "
                                               f"{len(common)}"))
        if hit:
            found.append(Finding(
                id="odd-instance", severity="medium", region=ctx.region, instances=tuple(hit),
                title=f"{len(hit)} instance(s) ran another kernel sequence",
                detail="most instances launch the same GPU events; these differ (warm-up, "
                       "autotuning, a recompile or a data-dependent path)",
                evidence=limit(rows),
                suggestion="profile after more warm-up steps, or look at what differs",
            ))
    basis = "GPU" if ctx.has_gpu else "CPU"
    times = [v.device_ns if ctx.has_gpu else v.cpu_ns for v in ctx.instances]
    import statistics  # here: a reopen reads its findings from the index (findings.py)

    median = statistics.median(times)
    far = [(v, x) for v, x in zip(ctx.instances, times, strict=True)
           if abs(x - median) > max(ODD_FRACTION * median, ODD_MIN_US * 1e3)]
    if far:
        found.append(Finding(
            id="odd-instance", severity="medium", region=ctx.region,
            instances=tuple(v.index for v, _ in far),
            title=f"{len(far)} instance(s) with a {basis} time far from the median "
                  f"({fmt_ns(median)})",
            detail=", ".join(f"#{v.index}: {fmt_ns(x)}" for v, x in far),
            evidence=limit([ctx.evidence(v.row, v,
                                         f"{basis} {fmt_ns(x)} vs median {fmt_ns(median)}")
                            for v, x in far[:MAX_EVIDENCE]]),
            suggestion="exclude warm-up instances (profiler schedule warmup) and check for "
                       "contention or clock changes",
        ))
    return found
