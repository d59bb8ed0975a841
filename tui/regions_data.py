"""Regions for the regions view, over ``profiling.analysis.regions`` (pure).

Names are the analysis's group keys (``attn_fwd``, ``ProfilerStep*``...), with
per-instance CPU/GPU time; an instance's GPU events are those launched from
inside its CPU range, in GPU order (``instance_kernels``, the headless
``kernels`` listing).  This module only adds what the table shows beyond it:
each event's share of the instance's GPU time and its launch chain as text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import instance_kernels
from profiling.analysis.regions import STEP_GROUP, RegionInstance, RegionSummary
from profiling.analysis.stored_regions import instance_column
from tui.blocks import sparkline
from tui.links import chain_text


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

    @functools.cached_property
    def device_ns(self) -> np.ndarray:
        """Each instance's GPU time, in order: read once for the sparklines and the
        instances' title (an attribute read per instance costs ~8 ms per 38,400)."""
        return instance_column(self.instances, "device_ns")


@dataclass
class KernelRow:
    row: int
    name: str
    kind: str  # kernel | memcpy | memset
    offset_ns: int  # start relative to the instance's first GPU event
    dur_ns: int
    share: float  # of the instance's GPU time
    stream: int  # -1 when unknown
    launched_by: str  # the launch chain inside the region, "op › op › call" ('' if unknown)
    launch_chain: tuple[str, ...] = ()  # its names, for a narrower rendering (``chain_text``)


def region_list(analysed: AnalysedTrace) -> list[Region]:
    """Every region name with its instances, for the Regions view: user regions
    first (most instances first, ties in order of appearance), ``ProfilerStep*`` last."""
    regions = analysed.regions
    out = [Region(s, regions.select(s.name)) for s in regions.summaries()]
    return sorted(out, key=lambda r: (r.name == STEP_GROUP, -r.count))


def kernel_rows(analysed: AnalysedTrace, inst: RegionInstance) -> list[KernelRow]:
    """The instance's GPU events as the Regions view lists them (``kernels`` plus share)."""
    entries = instance_kernels(analysed, inst).kernels
    total = max(inst.device_ns, 1)
    dur = analysed.trace.dur_ns
    return [
        KernelRow(
            row=e.row,
            name=e.name,
            kind=e.kind,
            offset_ns=int(round(e.start_offset_us * 1000)),
            dur_ns=int(round(e.dur_us * 1000)),
            share=float(dur[e.row]) / total,
            stream=-1 if e.stream is None else int(e.stream),
            launched_by=chain_text(e.launch_chain),
            launch_chain=e.launch_chain,
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
    times = region.device_ns
    return sparkline(times.tolist(), width) if times.any() else ""


INSTANCE_WINDOW = 200
"""Instances in the Regions view's instance table at a time (all of them up to this)."""
_MARGIN = 40
"""The window moves when the cursor comes this close to one of its ends."""


def window_of(n: int, around: int, size: int | None = None) -> tuple[int, int]:
    """The [lo, hi) window of ``size`` rows (``INSTANCE_WINDOW``) out of ``n`` with
    ``around`` near its middle."""
    size = INSTANCE_WINDOW if size is None else size
    if n <= size:
        return 0, n
    lo = min(max(around - size // 2, 0), n - size)
    return lo, lo + size


def needs_move(lo: int, hi: int, n: int, index: int, margin: int | None = None) -> bool:
    """Whether the cursor at ``index`` is near an end of [lo, hi) that is not ``n``'s."""
    margin = min(_MARGIN, max((hi - lo) // 4, 1)) if margin is None else margin
    return (index < lo + margin and lo > 0) or (index >= hi - margin and hi < n)
