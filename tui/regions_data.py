"""Regions for the regions view, over ``profiling.analysis.regions`` (pure).

Names are the analysis's group keys (``attn_fwd``, ``ProfilerStep*``...), with
per-instance CPU/GPU time; an instance's GPU events are those launched from
inside its CPU range, in GPU order (``instance_kernels``).  This module only
adds what the table shows beyond the headless output: each event's share of the
instance's GPU time and the op chain that launched it.
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling.analysis.instance_kernels import instance_kernels
from profiling.analysis.regions import STEP_GROUP, RegionInstance, Regions, RegionSummary
from profiling.analysis.regions import find_regions as analysis_regions
from profiling.trace.model import Kind, Trace
from tui.blocks import sparkline
from tui.links import Links


@dataclass
class Region:
    summary: RegionSummary
    instances: list[RegionInstance]

    @property
    def name(self) -> str:
        return self.summary.name

    @property
    def count(self) -> int:
        return self.summary.instances


@dataclass
class KernelRow:
    row: int
    name: str
    kind: str  # kernel | memcpy | memset
    offset_ns: int  # start relative to the instance's first GPU event
    dur_ns: int
    share: float  # of the instance's GPU time
    stream: int  # -1 when unknown
    launched_by: str  # "outermost op › innermost op" inside the region ('' if unknown)


def find_regions(trace: Trace, links: Links) -> list[Region]:
    """Every region name with its instances: user regions first (most instances
    first, ties in order of appearance), ``ProfilerStep*`` last."""
    regions: Regions = analysis_regions(trace, links.analysis)
    out = [Region(s, regions.select(s.name)) for s in regions.summaries()]
    return sorted(out, key=lambda r: (r.name == STEP_GROUP, -r.count))


def launch_chain(trace: Trace, links: Links, row: int, region_row: int) -> str:
    """'outer › inner' ops (inside the region) around the launch of GPU ``row``."""
    launch = links.launch_of(row)
    if launch < 0:
        return ""
    depth = int(trace.depth[region_row]) if region_row >= 0 else -1
    same_lane = region_row >= 0 and int(trace.lane[region_row]) == int(trace.lane[launch])
    ops = [
        a
        for a in links.ancestors(launch)
        if int(trace.kind[a]) == Kind.CPU_OP and (not same_lane or int(trace.depth[a]) > depth)
    ]
    if not ops:
        op = links.op_of(row)
        return trace.name(op) if op >= 0 and op != region_row else ""
    if len(ops) == 1:
        return trace.name(ops[0])
    return f"{trace.name(ops[-1])} › {trace.name(ops[0])}"


def kernel_rows(trace: Trace, links: Links, inst: RegionInstance) -> list[KernelRow]:
    entries = instance_kernels(trace, links.analysis, inst).kernels
    total = max(inst.device_ns, 1)
    return [
        KernelRow(
            row=e.row,
            name=e.name,
            kind=e.kind,
            offset_ns=int(round(e.start_offset_us * 1000)),
            dur_ns=int(round(e.dur_us * 1000)),
            share=float(trace.dur_ns[e.row]) / total,
            stream=-1 if e.stream is None else int(e.stream),
            launched_by=launch_chain(trace, links, e.row, inst.row),
        )
        for e in entries
    ]


def instance_span(inst: RegionInstance) -> tuple[int, int]:
    """Absolute ns range covering the instance's CPU range and its GPU events."""
    t0, t1 = inst.start_ns, inst.end_ns
    if inst.gpu_start_ns >= 0:
        t0 = min(t0, inst.gpu_start_ns)
        t1 = max(t1, inst.gpu_end_ns)
    return t0, t1


SPARK_CELLS = 16
"""Width of a region's GPU-time sparkline in the names table (more instances are
bucketed by their maximum)."""


def gpu_sparkline(region: Region, width: int = SPARK_CELLS) -> str:
    """GPU time of each instance, in order, as ▁▂▃▄▅▆▇█ ('' when the region has no
    GPU time): a warm-up instance or a slow step shows without opening the region."""
    times = [float(inst.device_ns) for inst in region.instances]
    return sparkline(times, width) if any(times) else ""
