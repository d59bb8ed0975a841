"""Regions for the regions view, over ``profiling.analysis.regions`` (pure).

Names are the analysis's group keys (``attn_fwd``, ``ProfilerStep*``...), with
per-instance CPU/GPU time; an instance's GPU events are those launched from
inside its CPU range, in GPU order (``instance_kernels``, the headless
``kernels`` listing).  This module only adds what the table shows beyond it:
each event's share of the instance's GPU time and its launch chain as text.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import KIND_NAMES, kernel_columns
from profiling.analysis.regions import STEP_GROUP, RegionInstance, RegionSummary
from profiling.analysis.stored_regions import instance_column
from profiling.trace.model import NO_ID
from tui.blocks import sparkline
from tui.links import chain_text


@dataclass
class Region:
    summary: RegionSummary
    instances: list[RegionInstance]
    annotation: bool = True  # a record_function; else an attention op or kernel site

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
    """Every region with its instances, for the Regions view: the attention regions
    first, then the other annotations (most instances first, ties in order of
    appearance), ``ProfilerStep*`` last.

    The attention regions are ``AnalysedTrace.attention_regions``, the ones
    ``kernels`` and the Findings view name: in a trace with no attention
    annotation (a server's, Hugging Face inference) they are ops such as
    ``aten::scaled_dot_product_attention`` or the Python sites that launch a flash
    kernel, which the annotations alone never showed.  The annotations' instances
    are grouped in one pass (a server's trace names 20,000 requests, and a
    ``select`` per name was 20 s there)."""
    regions = analysed.regions
    groups: dict[str, list[RegionInstance]] = {}
    for inst in regions.instances:
        groups.setdefault(inst.group, []).append(inst)
    out = [Region(s, groups[s.name]) for s in regions.summaries()]
    attention = analysed.attention_regions
    for name in attention:
        if name not in groups:
            found = list(analysed.instances(name))
            if found:
                out.append(Region(RegionSummary.of(name, found), found, annotation=False))
    first = set(attention)
    return sorted(out, key=lambda r: (r.name == STEP_GROUP, r.name not in first, -r.count))


class KernelList(Sequence[KernelRow]):
    """An instance's GPU events as the Regions view lists them (``kernels`` plus share),
    each row made when it is asked for: an annotation around a whole run holds
    every GPU event of the trace, and making all its rows (then a table of them)
    froze the app for 9 s at 59,493 events.  The columns come from
    ``kernel_columns``, all at once."""

    def __init__(self, analysed: AnalysedTrace, inst: RegionInstance) -> None:
        self._trace = analysed.trace
        self._cols = kernel_columns(analysed, [inst])
        self._total = max(inst.device_ns, 1)

    def __len__(self) -> int:
        return int(self._cols.rows.shape[0])

    @overload
    def __getitem__(self, index: int) -> KernelRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[KernelRow]: ...
    def __getitem__(self, index: int | slice) -> KernelRow | list[KernelRow]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if not -n <= index < n:
            raise IndexError(index)
        i = index % n
        t, cols = self._trace, self._cols
        row = int(cols.rows[i])
        chain = cols.chains[int(cols.chain[i])]
        stream, dur = int(t.stream[row]), int(t.dur_ns[row])
        return KernelRow(
            row=row,
            name=t.strings[int(t.name_id[row])],
            kind=_KINDS.get(int(t.kind[row]), "other"),
            offset_ns=int(cols.offset_ns[i]),
            dur_ns=dur,
            share=dur / self._total,
            stream=-1 if stream == NO_ID else stream,
            launched_by=chain_text(chain),
            launch_chain=chain,
        )


_KINDS = {int(k): v for k, v in KIND_NAMES.items()}


def kernel_rows(analysed: AnalysedTrace, inst: RegionInstance) -> KernelList:
    """The instance's GPU events as the Regions view lists them (``KernelList``)."""
    return KernelList(analysed, inst)


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


INSTANCE_WINDOW = 100
"""Rows in the Regions view's instance and GPU event tables (and the other windowed
tables) at a time, all of them up to this.  Each row costs the table a measure of its
cells when the view opens: 200 rows made the Regions view of a 1 GB trace open in
153 ms beyond the test driver's floor on the 2-core VM, 100 rows in 118 ms (Ops 129 ->
89 ms).  A hundred rows is still over twice a table's height on a 50-line terminal."""
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
