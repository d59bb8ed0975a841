"""Where attention is in a trace that has no attention annotation.

Inference servers rarely annotate: vLLM calls its own ops
(``vllm::unified_attention_with_output``, ``_C::paged_attention_v2``), nano-vllm
and SGLang call kernels from Python with no op around them at all.  Two
fallbacks, in order, stand in for the missing ``attn_fwd`` region:

* ``attention_op_names``: the CPU ops of the trace that are attention
  (``attention_names.is_attention_op``: SDPA, flash-attn, server and library ops);
* ``attention_kernel_sites``: for every kernel whose name alone proves attention
  (a strong rule: ``flash::flash_fwd_splitkv_kernel``,
  ``BatchDecodeWithPagedKVCacheKernel``, ...), the host event that stands for its
  call: the innermost event around the launch on its thread that is named like
  attention (an op, an annotation, a Python frame such as
  ``flash_attn_interface.py(1464): flash_attn_with_kvcache``), else the
  innermost op around it, else the launching call itself.  A split-KV kernel and
  its combine kernel launched from one such event make one instance.

``attention_regions`` turns these into regions; the instances then follow the one
launch rule (``regions.instances_at``), so their counts equal ``stats``.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.attention_names import (
    attention_kernel,
    is_attention_name,
    is_attention_op,
    rocm_evidence,
)
from profiling.analysis.links import Links
from profiling.analysis.nesting import innermost_containing, nest
from profiling.analysis.ranges import distinct
from profiling.trace.model import Kind, Trace

_HOST_KINDS = (Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.PYTHON_FUNCTION)


def attention_op_names(trace: Trace) -> list[str]:
    """Names of the CPU ops in ``trace`` that are attention, in order of first call."""
    ops = np.flatnonzero(trace.kind == int(Kind.CPU_OP))
    if ops.shape[0] == 0:
        return []
    ids, first = np.unique(trace.name_id[ops], return_index=True)
    order = np.argsort(trace.ts_ns[ops[first]], kind="stable")
    return [name for i in ids[order].tolist() if is_attention_op(name := trace.strings[i])]


def attention_kernel_rows(trace: Trace) -> np.ndarray:
    """GPU kernel rows whose names alone prove attention (ROCm-only names need ROCm
    evidence in the trace: a ``hip*`` call or a ROCm library kernel)."""
    kernels = np.flatnonzero(trace.kind == int(Kind.KERNEL))
    if kernels.shape[0] == 0:
        return kernels
    ids = distinct(trace.name_id[kernels])
    names = [trace.strings[i] for i in ids.tolist()]
    calls = distinct(trace.name_id[trace.kind == int(Kind.RUNTIME)])
    rocm = rocm_evidence(names, [trace.strings[i] for i in calls.tolist()])
    hit = np.zeros(len(trace.strings), dtype=bool)
    for i, name in zip(ids.tolist(), names, strict=True):
        hit[i] = attention_kernel(name, rocm=rocm, in_attention=False) is not None
    return kernels[hit[trace.name_id[kernels]]]


def attention_kernel_sites(trace: Trace, links: Links) -> np.ndarray:
    """Host rows standing for the launches of attention kernels (see the module's
    text), outermost only, in start order; empty when no attention kernel ran."""
    kernels = attention_kernel_rows(trace)
    calls = distinct(links.launch[kernels]) if kernels.shape[0] else kernels
    calls = calls[calls >= 0]
    if calls.shape[0] == 0:
        return calls
    host = np.flatnonzero(np.isin(trace.kind, [int(k) for k in _HOST_KINDS]))
    start, end = trace.ts_ns[host], trace.ts_ns[host] + trace.dur_ns[host]
    lane = trace.lane[host].astype(np.int64)
    nesting = nest(start, end, lane)
    inner = innermost_containing(trace.ts_ns[calls], trace.lane[calls].astype(np.int64),
                                 start, end, lane, nesting)
    named = np.array([is_attention_name(trace.strings[i]) for i in range(len(trace.strings))],
                     dtype=bool)
    sites = []
    for call, h in zip(calls.tolist(), inner.tolist(), strict=True):
        site, op = -1, -1
        while h >= 0 and site < 0:
            row = int(host[h])
            if named[trace.name_id[row]]:
                site = row
            elif op < 0 and trace.kind[row] != int(Kind.PYTHON_FUNCTION):
                op = row
            h = int(nesting.parent[h])
        sites.append(site if site >= 0 else op if op >= 0 else call)
    return _outermost(trace, distinct(np.array(sites, dtype=np.int64)))


def _outermost(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """``rows`` without those inside another of them on the same thread, by start."""
    start, end = trace.ts_ns[rows], trace.ts_ns[rows] + trace.dur_ns[rows]
    lane = trace.lane[rows]
    index = np.arange(rows.shape[0])
    keep = []
    for i in index.tolist():
        around = (lane == lane[i]) & (start <= start[i]) & (end >= end[i]) & (index != i)
        around &= ~((start == start[i]) & (end == end[i]) & (index > i))  # twins: keep one
        if not around.any():
            keep.append(i)
    out = rows[keep]
    return out[np.argsort(trace.ts_ns[out], kind="stable")]
