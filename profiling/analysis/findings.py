"""What an expert would point out in an attention trace, each point with its evidence.

Every rule reads one region (``attn_fwd``, or the attention ops of a trace made
elsewhere) and returns ``Finding`` objects: a stable ``id``, a one-line title,
a severity, the instances it applies to, the evidence (trace rows the TUI can
jump to, with names and times) and what to try.  The rules and why:

* ``memcpy-out-of-place``: a Memcpy launched inside the region by an out-of-place
  op (``aten::masked_fill`` clones its input, then fills the copy).  Under
  ``no_grad`` the in-place op does the same work without the copy.  Other copies
  in the region are ``memcpy-in-region`` (host copies, ``.contiguous()``...).
* ``fp32-upcast``: fp32 kernels in a region whose inputs are bf16/fp16: the SDPA
  math backend upcasts q/k/v to fp32 and runs fp32 GEMMs off the tensor cores.
* ``mask-rebuilt``: triu/tril inside the region: the causal mask is built again
  on every call (the math backend does this for ``is_causal=True``).
* ``launch-bound``: CPU time per instance above its GPU time: the GPU waits on
  the host (the profiler inflates CPU time, so confirm without it).
* ``sync-in-region``: host synchronisations inside the region stall the queue.
* ``gpu-idle-gaps``: the GPU sits idle between the region's own kernels.
* ``odd-instance``: an instance with another kernel sequence, or a GPU (CPU for
  CPU-only traces) time far from the median: warm-up, recompiles, contention.

Thresholds are module constants, chosen so that our own GPU samples raise only
what is true of them (see tests/test_findings*.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from profiling.analysis.attention_flops import AttentionWork, attention_work
from profiling.analysis.attention_regions import InstanceView, attention_regions, instance_views
from profiling.analysis.device_peaks import dtype_family
from profiling.analysis.links import Links, link_gpu_events
from profiling.analysis.regions import STEP_GROUP, Regions, find_regions
from profiling.trace.model import Kind, Trace

SEVERITIES = ("high", "medium", "low")
"""high: clear waste with a known fix; medium: worth a look; low: context for the numbers."""


@dataclass(frozen=True)
class EvidenceRow:
    """One event behind a finding; ``row`` is the trace row the TUI jumps to.

    ``start_us`` is relative to the trace's first event; ``launched_by`` is the
    op chain that launched a GPU event (outermost first), empty for CPU rows.
    """

    row: int
    name: str
    kind: str
    lane: int
    start_us: float
    dur_us: float
    instance: int | None = None
    launched_by: str = ""
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"row": self.row, "name": self.name, "kind": self.kind, "lane": self.lane,
                "start_us": self.start_us, "dur_us": self.dur_us, "instance": self.instance,
                "launched_by": self.launched_by or None, "note": self.note or None}


@dataclass(frozen=True)
class Finding:
    """One point an expert would make about a region, with its evidence and a suggestion."""

    id: str
    title: str
    severity: str  # one of SEVERITIES
    region: str
    instances: tuple[int, ...]
    evidence: tuple[EvidenceRow, ...]
    suggestion: str
    detail: str = ""
    of_instances: int = 0  # instances of the region examined (filled in by region_findings)

    def instances_text(self, limit: int = 6) -> str:
        """``all 3 instances``, ``#2 of 5``, ``#0, #1, #4, … (7 of 40)``: short, for a column."""
        n, total = len(self.instances), self.of_instances
        if total and n == total:
            return f"all {total} instance" + ("s" if total != 1 else "")
        shown = ", ".join(f"#{i}" for i in self.instances[:limit])
        if n > limit:
            shown += ", …"
        return f"{shown} ({n} of {total})" if total else shown

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "severity": self.severity,
                "region": self.region, "instances": list(self.instances),
                "of_instances": self.of_instances,
                "detail": self.detail or None, "suggestion": self.suggestion,
                "evidence": [e.as_json() for e in self.evidence]}


@dataclass
class RegionContext:
    """What every rule reads about one region; built once per region."""

    trace: Trace
    region: str
    views: list[InstanceView]
    work: AttentionWork | None
    input_dtype: str | None  # bf16 / fp16 / fp32 / None, of the attention inputs
    has_gpu: bool

    def evidence(self, row: int, view: InstanceView | None = None, note: str = "",
                 chain: Sequence[int] = ()) -> EvidenceRow:
        t = self.trace
        return EvidenceRow(
            row=int(row), name=t.name(row), kind=Kind(int(t.kind[row])).name.lower(),
            lane=int(t.lane[row]), start_us=(int(t.ts_ns[row]) - t.start_ns) / 1e3,
            dur_us=int(t.dur_ns[row]) / 1e3, instance=None if view is None else view.index,
            launched_by=" > ".join(t.name(r) for r in chain), note=note,
        )


@dataclass(frozen=True)
class TraceFindings:
    """Findings of one trace, and which regions were examined (the TUI's panel header)."""

    path: str
    regions: tuple[str, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "regions": list(self.regions),
                "findings": [f.as_json() for f in self.findings], "notes": list(self.notes)}


Rule = Callable[[RegionContext], list[Finding]]
"""A rule reads one region's context and returns its findings (``finding_rules.RULES``)."""


def region_context(trace: Trace, region: str, views: list[InstanceView]) -> RegionContext:
    """The shared facts of one region: its instances, attention work and input dtype."""
    from profiling.analysis.finding_rules import input_dtype_from_ops

    work = attention_work(trace, region, views[-1].cpu_rows) if views else None
    dtype = dtype_family(work.dtype) if work is not None else None
    if dtype is None and views:
        dtype = input_dtype_from_ops(trace, views[-1])
    return RegionContext(trace, region, views, work, dtype,
                         has_gpu=any(v.launches for v in views))


def region_findings(trace: Trace, region: str, links: Links | None = None,
                    regions: Regions | None = None) -> list[Finding]:
    """Every rule's findings for one region (empty when the region has no instance)."""
    from profiling.analysis.finding_rules import RULES  # the rules build this module's types

    views = instance_views(trace, region, links, regions)
    if not views:
        return []
    ctx = region_context(trace, region, views)
    found: list[Finding] = []
    for rule in RULES:
        found.extend(replace(f, of_instances=len(views)) for f in rule(ctx))
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(found, key=lambda f: order.get(f.severity, len(order)))


def trace_findings(trace: Trace, regions: Sequence[str] | None = None,
                   links: Links | None = None) -> TraceFindings:
    """Findings for the trace's attention regions (or ``regions``).

    With no attention region at all, the profiler steps are examined instead, for
    the rules that do not need attention (syncs, gaps, launch-bound, odd steps).
    ``links`` reuses links already made (the TUI has them from loading).
    """
    links = links if links is not None else link_gpu_events(trace)
    found_regions = find_regions(trace, links)
    notes: list[str] = []
    names = list(regions) if regions else attention_regions(trace, links, found_regions)
    if not names:
        steps = [n for n in found_regions.names() if n == STEP_GROUP]
        notes.append("no attention region or attention op in this trace"
                     + ("; looked at the profiler steps instead" if steps else ""))
        names = steps
    found: list[Finding] = []
    for name in names:
        found.extend(region_findings(trace, name, links, found_regions))
    counts = Counter(f.severity for f in found)
    if not found and names:
        notes.append("nothing to point out")
    elif counts:
        notes.append(", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s]))
    return TraceFindings(trace.path, tuple(names), tuple(found), tuple(notes))
