"""Which regions are attention, and the instances of a region named either way.

``profiling.analysis.regions`` finds every ``record_function`` instance and the
GPU events launched from inside it (DESIGN.md section 3).  Traces made
elsewhere rarely have an ``attn_fwd`` annotation, but they have the attention
op itself; ``region_instances`` then treats each outermost call of an attention
op (``aten::scaled_dot_product_attention``, ...) as an instance, built by the
same rule (``regions.instances_at``), so compare and findings still have
something to say about them and every count equals ``stats``.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis import attention_names
from profiling.analysis.attention_sites import attention_kernel_sites, attention_op_names
from profiling.analysis.links import Links
from profiling.analysis.regions import RegionInstance, Regions, instances_at
from profiling.trace.model import Kind, Trace


def region_instances(trace: Trace, links: Links, regions: Regions,
                     region: str) -> list[RegionInstance]:
    """Every instance of ``region`` (an annotation or an attention op name), in start order."""
    found = regions.select(region)
    if found:
        return found
    if attention_names.is_attention_op(region):
        rows = _outermost_op_rows(trace, region)
        if rows.size:
            return instances_at(trace, links, rows)
    sites = attention_kernel_sites(trace, links)
    return instances_at(trace, links, sites[trace.name_id[sites] == trace.string_ids(region)])


def is_attention_name(name: str) -> bool:
    """A region, op or kernel named like attention (``attention_names`` says which)."""
    return attention_names.is_attention_name(name)


def attention_regions(trace: Trace, links: Links, regions: Regions) -> list[str]:
    """Regions worth explaining as attention: annotations named like attention
    (``attn_fwd``), else the attention ops the trace calls (outermost first), else
    the sites of attention kernels (``attention_sites``)."""
    names = [n for n in regions.names() if is_attention_name(n)]
    if names:
        return names
    present = attention_op_names(trace)
    # Keep only ops that are not always nested in another listed op (sdpa > its backend).
    ops = [op for op in present if _outermost_op_rows(trace, op, among=present).size]
    if ops:
        return ops
    return list(dict.fromkeys(trace.name(r) for r in attention_kernel_sites(trace, links)))


def _outermost_op_rows(trace: Trace, name: str, among: list[str] | None = None) -> np.ndarray:
    """CPU op rows named ``name`` not nested inside another attention op, by start."""
    wanted = trace.string_ids(name)
    if wanted is None:
        return np.zeros(0, dtype=np.int64)
    among = among if among is not None else attention_op_names(trace)
    others = {i for op in among if (i := trace.string_ids(op)) is not None}
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
