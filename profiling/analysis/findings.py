"""What an expert would point out in an attention trace, each point with its evidence.

Every rule reads one region (``attn_fwd``, or the attention ops of a trace made
elsewhere) and returns ``Finding`` objects: a stable ``id``, a one-line title,
a severity, the instances it applies to, the evidence (trace rows the TUI can
jump to, with names and times) and what to try.  The rules and why:

* ``memcpy-out-of-place``: a Memcpy launched inside the region by an out-of-place
  op ``foo`` with ``foo_`` inside it (``aten::masked_fill`` clones its input, then
  fills the copy).  If nothing reads the input afterwards (the trace has no tensor
  identities, so the advice says so as a condition) the in-place op does the
  same work without the copy.  Other copies in the region are
  ``memcpy-in-region`` (host copies, ``.contiguous()``...).
* ``fp32-upcast``: fp32 kernels in a region whose inputs are bf16/fp16, named;
  the SDPA math backend (which upcasts q/k/v) is named only when they ran under it.
* ``mask-rebuilt``: triu/tril inside the region: the mask is built again on every
  call, by the ops and kernels named; under the math backend (its
  ``is_causal=True`` path) the advice is a fused backend.

Each sentence of a finding is built from what its rule found (names, counts,
times through ``units.fmt_ns``), never written for one trace.
* ``launch-bound``: CPU time per instance above its GPU time: the GPU waits on
  the host (the profiler inflates CPU time, so confirm without it).  Where the
  instances replay a CUDA graph (``cudaGraphLaunch``, serving engines' decode
  steps) the advice is about the host work around the replay, not "use CUDA
  graphs"; a mixed region gets both, with counts; ``gpu-idle-gaps`` says the
  same of its host-late gaps (``finding_graphs``).
* ``sync-in-region``: host synchronisations inside the region stall the queue.
* ``gpu-idle-gaps``: the GPU sits idle between the region's own kernels.
* ``odd-instance``: an instance with another kernel sequence, or a GPU (CPU for
  CPU-only traces) time far from the median: warm-up, recompiles, contention.

The data types are in ``finding_types``, the rules in ``finding_rules`` (what
the region runs) and ``finding_timing`` (how its time goes); this module runs
them over the regions of one ``AnalysedTrace``.  Thresholds are module
constants, chosen so that our own GPU samples raise only
what is true of them (see tests/test_findings*.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import msgspec
import numpy as np

from profiling.analysis.analysed import AnalysedTrace, as_analysed
from profiling.analysis.attention_flops import attention_work
from profiling.analysis.finding_rules import (
    fp32_upcast,
    input_dtype_from_ops,
    mask_rebuilt,
    memcpy_out_of_place,
)
from profiling.analysis.finding_timing import (
    gpu_idle_gaps,
    launch_bound,
    odd_instances,
    sync_in_region,
)
from profiling.analysis.finding_types import (
    SEVERITIES,
    EvidenceRow,
    Finding,
    RegionContext,
    Rule,
    TraceFindings,
)
from profiling.analysis.regions import STEP_GROUP, RegionInstance
from profiling.analysis.stored_regions import instance_column
from profiling.trace.model import Trace
from profiling.trace.op_inputs import dtype_family

__all__ = ["RULES", "SEVERITIES", "EvidenceRow", "Finding", "RegionContext", "Rule",
           "TraceFindings", "region_context", "region_findings", "trace_findings"]

RULES: tuple[Rule, ...] = (memcpy_out_of_place, fp32_upcast, mask_rebuilt, sync_in_region,
                           launch_bound, gpu_idle_gaps, odd_instances)
"""Every rule, in the order findings are reported (then sorted by severity)."""


def region_context(analysed: AnalysedTrace, region: str,
                   instances: Sequence[RegionInstance]) -> RegionContext:
    """The shared facts of one region: its instances, attention work and input dtype."""
    trace = analysed.trace
    last = instances[-1] if len(instances) else None
    work = attention_work(trace, region, last.cpu_rows(trace)) if last is not None else None
    dtype = dtype_family(work.dtype) if work is not None else None
    if dtype is None and last is not None:
        dtype = input_dtype_from_ops(trace, last)
    events = sum(instance_column(instances, f) for f in ("kernels", "memcpys", "memsets"))
    return RegionContext(analysed, region, instances, work, dtype,
                         has_gpu=bool(np.any(events)))


def region_findings(analysed: AnalysedTrace | Trace, region: str) -> list[Finding]:
    """Every rule's findings for one region (empty when the region has no instance)."""
    a = as_analysed(analysed)
    instances = a.lazy_instances(region)  # read by column: no object per instance
    if not len(instances):
        return []
    ctx = region_context(a, region, instances)
    ctx.prepare()
    found: list[Finding] = []
    for rule in RULES:
        found.extend(replace(f, of_instances=len(instances)) for f in rule(ctx))
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(found, key=lambda f: order.get(f.severity, len(order)))


def trace_findings(analysed: AnalysedTrace | Trace,
                   regions: Sequence[str] | None = None) -> TraceFindings:
    """Findings for the trace's attention regions (or ``regions``).

    With no attention region at all, the profiler steps are examined instead, for
    the rules that do not need attention (syncs, gaps, launch-bound, odd steps).
    """
    a = as_analysed(analysed)
    if not regions:  # the default question: its answer is kept with the index
        return a.stored("findings", lambda: _trace_findings(a, None), _encode,
                        lambda _arrays, doc: replace(msgspec.convert(doc, TraceFindings),
                                                     path=a.trace.path))
    return _trace_findings(a, regions)


def _encode(found: TraceFindings) -> tuple[dict, object]:
    """Without the path: the same file opened by another path reads the same copy."""
    return {}, msgspec.to_builtins(replace(found, path=""))


def _trace_findings(a: AnalysedTrace, regions: Sequence[str] | None) -> TraceFindings:
    notes: list[str] = []
    names = list(regions) if regions else list(a.attention_regions)
    if not names:
        steps = [n for n in a.regions.names() if n == STEP_GROUP]
        notes.append("no attention region or attention op in this trace"
                     + ("; looked at the profiler steps instead" if steps else ""))
        names = steps
    found: list[Finding] = []
    for name in names:
        found.extend(region_findings(a, name))
    counts = Counter(f.severity for f in found)
    if not found and names:
        notes.append("nothing to point out")
    elif counts:
        notes.append(", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s]))
    return TraceFindings(a.trace.path, tuple(names), tuple(found), tuple(notes))
