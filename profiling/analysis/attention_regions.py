"""Region instances with what compare and findings read: CPU ops, GPU events, launch chains.

``profiling.analysis.regions`` finds every ``record_function`` instance and the
GPU events launched from inside it (DESIGN.md section 3).  Findings need more
per instance: the CPU op rows inside it (shapes, dtypes, syncs) and, for every
GPU event, the chain of ops that launched it (``aten::masked_fill`` >
``aten::clone`` > ``aten::copy_``), which says *why* a Memcpy is there.  This
module adds those to the instances ``regions`` finds, with the same launch rule
(``Links.launch_range``), so every count here equals ``stats``.

Traces made elsewhere rarely have an ``attn_fwd`` annotation, but they have the
attention op itself; ``attention_op_regions`` treats each outermost call of an
attention op (``aten::scaled_dot_product_attention``, ...) as an instance, so
compare and findings still have something to say about them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from profiling.analysis import attention_names
from profiling.analysis.attention_flops import ATTENTION_OPS
from profiling.analysis.links import Links, link_gpu_events
from profiling.analysis.regions import Regions, find_regions
from profiling.trace.model import Kind, Trace

_ATTENTION_NAME = re.compile(r"(?i)attn|attention")


@dataclass
class Launch:
    """One GPU event of an instance and how it was launched (rows into the trace; -1 none)."""

    gpu_row: int
    runtime_row: int
    op_chain: tuple[int, ...]  # enclosing CPU ops inside the instance, outermost first

    @property
    def op_row(self) -> int:
        """The innermost CPU op around the launch (the op that launched it), -1 if none."""
        return self.op_chain[-1] if self.op_chain else -1


@dataclass
class InstanceView:
    """One region instance: its CPU range and rows, and its GPU events in GPU start order."""

    name: str
    index: int  # 0-based among instances of this region, in start order
    row: int
    lane: int
    start_ns: int
    end_ns: int
    cpu_rows: np.ndarray  # rows on its lane inside it (ops, runtime...); an op region's own row too
    launches: list[Launch] = field(default_factory=list)

    @property
    def cpu_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def gpu_rows(self) -> np.ndarray:
        return np.array([lc.gpu_row for lc in self.launches], dtype=np.int64)

    def device_ns(self, trace: Trace) -> int:
        """Summed durations of its GPU events (``stats``' device time per instance)."""
        rows = self.gpu_rows
        return int(trace.dur_ns[rows].sum()) if rows.size else 0

    def count(self, trace: Trace, kind: Kind) -> int:
        rows = self.gpu_rows
        return int((trace.kind[rows] == int(kind)).sum()) if rows.size else 0

    def op_rows(self, trace: Trace) -> np.ndarray:
        return self.cpu_rows[trace.kind[self.cpu_rows] == int(Kind.CPU_OP)]


def instance_views(trace: Trace, region: str, links: Links | None = None,
                   regions: Regions | None = None) -> list[InstanceView]:
    """Every instance of ``region`` (an annotation or an attention op name), in start order.

    Pass ``links``/``regions`` when the caller has them (they are computed otherwise).
    """
    links = links if links is not None else link_gpu_events(trace)
    regions = regions if regions is not None else find_regions(trace, links)
    found = regions.select(region)
    if found:
        rows = [(inst.row, inst.index) for inst in found]
    elif region in ATTENTION_OPS:
        rows = [(r, n) for n, r in enumerate(_outermost_op_rows(trace, region))]
    else:
        rows = []
    return [_view(trace, links, region, index, row) for row, index in rows]


def is_attention_name(name: str) -> bool:
    """A region, op or kernel named like attention (``attention_names`` says which)."""
    return attention_names.is_attention_name(name)


def attention_regions(trace: Trace, links: Links | None = None,
                      regions: Regions | None = None) -> list[str]:
    """Regions worth explaining as attention: annotations named like attention
    (``attn_fwd``), else the attention ops the trace calls (outermost first)."""
    if regions is None:
        regions = find_regions(trace, links if links is not None else link_gpu_events(trace))
    names = [n for n in regions.names() if _ATTENTION_NAME.search(n)]
    if names:
        return names
    present = [op for op in ATTENTION_OPS if trace.string_ids(op) is not None]
    # Keep only ops that are not always nested in another listed op (sdpa > its backend).
    return [op for op in present if _outermost_op_rows(trace, op, among=present).size]


def _outermost_op_rows(trace: Trace, name: str, among: list[str] | None = None) -> np.ndarray:
    """CPU op rows named ``name`` not nested inside another attention op, by start."""
    wanted = trace.string_ids(name)
    if wanted is None:
        return np.zeros(0, dtype=np.int64)
    others = {i for op in (among or list(ATTENTION_OPS)) if (i := trace.string_ids(op)) is not None}
    rows = np.flatnonzero((trace.name_id == wanted) & (trace.kind == int(Kind.CPU_OP)))
    candidates = np.flatnonzero(np.isin(trace.name_id, list(others)) &
                                (trace.kind == int(Kind.CPU_OP)))
    keep = []
    for row in rows.tolist():
        lane, ts, end = trace.lane[row], trace.ts_ns[row], trace.ts_ns[row] + trace.dur_ns[row]
        same = candidates[(trace.lane[candidates] == lane) & (candidates != row)]
        outer = (trace.ts_ns[same] <= ts) & (trace.ts_ns[same] + trace.dur_ns[same] >= end)
        outer &= trace.depth[same] < trace.depth[row]
        if not outer.any():
            keep.append(row)
    out = np.array(keep, dtype=np.int64)
    return out[np.argsort(trace.ts_ns[out], kind="stable")] if out.size else out


def _view(trace: Trace, links: Links, region: str, index: int, row: int) -> InstanceView:
    lane = int(trace.lane[row])
    start, end = int(trace.ts_ns[row]), int(trace.ts_ns[row] + trace.dur_ns[row])
    lane_slice = trace.lane_rows(lane)
    ts = trace.ts_ns[lane_slice]
    lo = int(np.searchsorted(ts, start, side="left")) + lane_slice.start
    hi = int(np.searchsorted(ts, end, side="right")) + lane_slice.start
    inside = np.arange(lo, hi, dtype=np.int64)
    own = inside == row
    if int(trace.kind[row]) != int(Kind.CPU_OP):
        inside = inside[~own]  # an op-region keeps its own row: its shapes, its launch chain
    inside = inside[trace.ts_ns[inside] + trace.dur_ns[inside] <= end]
    gpu_rows = links.launched_in(trace, row)  # GPU start order, the regions launch rule
    launchers = links.launch[gpu_rows]
    chains = _launch_chains(trace, inside, set(launchers.tolist()))
    launches = [Launch(int(g), int(r), chains.get(int(r), ()))
                for g, r in zip(gpu_rows.tolist(), launchers.tolist(), strict=True)]
    return InstanceView(region, index, row, lane, start, end, inside, launches)


def _launch_chains(trace: Trace, rows: np.ndarray, wanted: set[int]) -> dict[int, tuple[int, ...]]:
    """For each wanted runtime row, the CPU ops enclosing it (outermost first): one stack walk."""
    chains: dict[int, tuple[int, ...]] = {}
    if not wanted:
        return chains
    stack: list[tuple[int, int]] = []  # (row, end_ns)
    op = int(Kind.CPU_OP)
    columns = zip(rows.tolist(), trace.ts_ns[rows].tolist(), trace.dur_ns[rows].tolist(),
                  trace.kind[rows].tolist(), strict=True)
    for row, ts, dur, kind in columns:
        while stack and stack[-1][1] <= ts:
            stack.pop()
        if row in wanted:
            chains[row] = tuple(r for r, _ in stack)
        if kind == op:
            stack.append((row, ts + dur))
    return chains
