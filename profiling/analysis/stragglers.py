"""Stragglers: per step and per region instance, the rank that held the others back.

In a synchronous job every rank's step ends together (the collectives wait for
the last rank), so a step's wall time says nothing about who was slow.  What
differs is how the time was spent: the slow rank works while the others wait in
their collectives.  So a step is measured, per rank, as its length minus the
rank's wait in the collectives it launched (``collectives``): ``busy``.  A
region instance (``attn_fwd`` #k) is measured by its GPU time (the summed
durations of the GPU events it launched), or its CPU time when it has none, less
its waits in the collectives inside it the same way (a ``step_sync`` region
around an all-reduce is all waiting on the fast ranks, and no work).

Each compared item (a step present on two or more ranks, the k-th instance of a
region on every rank) names its slowest rank and that rank's excess over the
median.  A rank that is the slowest in most of the items (``CONSISTENT``), by
more than ``MIN_EXCESS`` of the median, is a finding with those items as its
evidence rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.attention_regions import is_attention_name
from profiling.analysis.collectives import Collective, wait_of_row
from profiling.analysis.finding_types import EvidenceRow, Finding
from profiling.analysis.job_merge import Job
from profiling.analysis.regions import STEP_GROUP, RegionInstance
from profiling.analysis.units import fmt_ns
from profiling.trace.model import Kind

CONSISTENT = 0.75
"""Share of the items a rank must be the slowest in to be called consistently slow."""
MIN_EXCESS = 0.05
"""Excess over the median (as a share of it) below which a rank is not called slow."""
MAX_REGIONS = 4
"""Regions other than steps compared (attention regions first)."""


@dataclass(frozen=True)
class Straggle:
    """One compared item: per rank (``Job.ranks`` order) its value in ns (-1: absent)."""

    kind: str  # "step" or "region"
    region: str  # ProfilerStep* or the region's name
    name: str  # ProfilerStep#12, or attn_fwd #3
    measure: str  # "busy" (step minus collective wait), "device" or "cpu"
    values_ns: tuple[int, ...]
    rows: tuple[int, ...]  # the instance's merged row per rank (-1: absent)
    slowest: int  # rank number
    median_ns: float

    @property
    def excess_ns(self) -> float:
        return max(self.values_ns) - self.median_ns

    @property
    def excess_share(self) -> float:
        return self.excess_ns / self.median_ns if self.median_ns > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "region": self.region, "name": self.name,
                "measure": self.measure, "slowest_rank": self.slowest,
                "median_us": self.median_ns / 1e3, "excess_us": self.excess_ns / 1e3,
                "values_us": [v / 1e3 if v >= 0 else None for v in self.values_ns]}


def _is_comm(region: str) -> bool:
    """A collective's own range (``nccl:all_reduce``, ``gloo:send``): its length is
    waiting for the other ranks, not work, so it says nothing of who is slow."""
    low = region.lower()
    return low.startswith(("nccl:", "gloo:", "rccl:", "c10d::")) or "record_param_comms" in low


def _straggle(job: Job, kind: str, region: str, name: str, measure: str,
              cells: dict[int, tuple[int, int]]) -> Straggle | None:
    """From {rank position: (value ns, row)}; None with fewer than two ranks."""
    if len(cells) < 2:
        return None
    n = len(job.ranks)
    values = tuple(cells[k][0] if k in cells else -1 for k in range(n))
    rows = tuple(cells[k][1] if k in cells else -1 for k in range(n))
    present = [v for v in values if v >= 0]
    slowest = job.ranks[int(np.argmax(values))].rank
    return Straggle(kind, region, name, measure, values, rows, slowest, float(np.median(present)))


def _host_waits(job: Job, collectives: list[Collective]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per rank position: (starts, cumulative waits) of its collectives' host ranges
    (gloo), sorted by start, for summing the waits that start inside a step."""
    kinds = job.trace.kind
    out = []
    for k in range(len(job.ranks)):
        pairs = sorted((job.trace.ts_ns[c.rows[k]], c.wait_ns[k]) for c in collectives
                       if c.rows[k] >= 0 and int(kinds[c.rows[k]]) == Kind.USER_ANNOTATION)
        starts = np.array([p[0] for p in pairs], dtype=np.int64)
        out.append((starts, np.concatenate([[0], np.cumsum([p[1] for p in pairs])])))
    return out


def _busy(a: AnalysedTrace, inst: RegionInstance, base_ns: int, waits: dict[int, int],
          host: tuple[np.ndarray, np.ndarray]) -> int:
    """``base_ns`` (the instance's CPU or GPU time) minus the waits of the collectives
    in it: the kernels it launched, and (gloo) the collectives' host ranges that start
    inside it, on any thread."""
    rows = a.links.by_launch[inst.launch_lo:inst.launch_hi].tolist()
    waited = sum(waits.get(r, 0) for r in rows)
    starts, cum = host
    lo, hi = np.searchsorted(starts, [inst.start_ns, inst.end_ns])
    waited += int(cum[hi] - cum[lo])
    return max(base_ns - waited, 0)


def _by_rank(job: Job, a: AnalysedTrace) -> dict[str, dict[int, list[RegionInstance]]]:
    """Region group -> rank position -> its instances (CPU start order)."""
    lane_pos = np.zeros(len(job.trace.lanes), dtype=np.int64)
    for k, r in enumerate(job.ranks):
        lane_pos[r.lanes[0]:r.lanes[1]] = k
    out: dict[str, dict[int, list[RegionInstance]]] = defaultdict(lambda: defaultdict(list))
    for inst in a.regions.instances:
        out[inst.group][int(lane_pos[inst.lane])].append(inst)
    return out


def unrecorded(job: Job) -> set[int]:
    """Rank positions with no GPU event in a job whose other ranks have some: their
    device work was not recorded (CUPTI busy or off on that rank), so neither their
    device time nor their waits in collectives can be measured, and a step of theirs,
    whole, would read as the slowest.  They are left out of the GPU comparisons."""
    gpu = np.isin(job.trace.kind, [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET])
    has = [bool(gpu[lo:hi].any()) for lo, hi in (r.rows for r in job.ranks)]
    return {k for k, h in enumerate(has) if not h} if any(has) else set()


def stragglers(job: Job, a: AnalysedTrace, collectives: list[Collective]) -> list[Straggle]:
    """Every step, then every instance of the first ``MAX_REGIONS`` regions (ranks
    whose device work was not recorded left out of steps and device times)."""
    groups = _by_rank(job, a)
    blind = unrecorded(job)
    waits = wait_of_row(collectives)
    host = _host_waits(job, collectives)
    out: list[Straggle] = []
    steps: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    for k, insts in groups.get(STEP_GROUP, {}).items():
        for inst in insts if k not in blind else []:
            busy = _busy(a, inst, inst.cpu_ns, waits, host[k])
            steps[inst.name].setdefault(k, (busy, inst.row))
    for name, cells in steps.items():
        found = _straggle(job, "step", STEP_GROUP, name, "busy", cells)
        if found:
            out.append(found)
    names = sorted((g for g in groups if g != STEP_GROUP and len(groups[g]) > 1
                    and not _is_comm(g)), key=lambda g: not is_attention_name(g))[:MAX_REGIONS]
    for region in names:
        per_rank = groups[region]
        gpu = any(i.gpu_events for insts in per_rank.values() for i in insts)
        for i in range(max(len(v) for v in per_rank.values())):
            cells = {k: (_busy(a, v[i], v[i].device_ns if gpu else v[i].cpu_ns, waits,
                               host[k]), v[i].row) for k, v in per_rank.items()
                     if i < len(v) and not (gpu and k in blind)}
            found = _straggle(job, "region", region, f"{region} #{i}",
                              "device" if gpu else "cpu", cells)
            if found:
                out.append(found)
    return out


def _evidence(job: Job, s: Straggle) -> EvidenceRow:
    t = job.trace
    k = [r.rank for r in job.ranks].index(s.slowest)
    row = s.rows[k]
    share = f" (+{s.excess_share:.0%})" if s.median_ns > 0 else ""
    return EvidenceRow(
        row=row, name=s.name, kind=Kind(int(t.kind[row])).name.lower(), lane=int(t.lane[row]),
        start_us=(int(t.ts_ns[row]) - t.start_ns) / 1e3, dur_us=int(t.dur_ns[row]) / 1e3,
        note=f"rank {s.slowest}: {s.measure} {fmt_ns(s.values_ns[k])} against a median of "
             f"{fmt_ns(s.median_ns)}, {fmt_ns(s.excess_ns)} more{share}")


def straggler_findings(job: Job, items: list[Straggle]) -> list[Finding]:
    """A finding per (item kind, region) where one rank is consistently the slowest."""
    by_region: dict[tuple[str, str], list[Straggle]] = defaultdict(list)
    for s in items:
        by_region[(s.kind, s.region)].append(s)
    out = []
    for (kind, region), group in by_region.items():
        slow = [s for s in group if s.excess_share >= MIN_EXCESS]
        counts: dict[int, int] = defaultdict(int)
        for s in slow:
            counts[s.slowest] += 1
        if not counts:
            continue
        rank, n = max(counts.items(), key=lambda kv: kv[1])
        if len(group) < 2 or n < CONSISTENT * len(group):
            continue
        mine = [s for s in slow if s.slowest == rank]
        excess = float(np.median([s.excess_ns for s in mine]))
        what = "steps" if kind == "step" else f"{region} instances"
        basis = ("busy time: step minus collective wait" if kind == "step"
                 else f"{mine[0].measure} time")
        out.append(Finding(
            id="straggler-rank",
            title=f"rank {rank} is the slowest in {n} of {len(group)} {what}",
            severity="high" if n == len(group) else "medium", region=region,
            instances=tuple(group.index(s) for s in mine),
            evidence=tuple(_evidence(job, s) for s in mine),
            detail=f"by a median {fmt_ns(excess)} over the median rank ({basis}); "
                   "the other ranks wait for it in their collectives",
            suggestion=f"look at what rank {rank} does that the others do not: more data, "
                       "a slower device or link, host work (data loading) or another process",
            of_instances=len(group)))
    return out
