"""The data of ``findings``: a finding, its evidence, and what every rule reads.

Apart from the driver (``findings``) and the rules (``finding_rules``,
``finding_timing``) so that the rules import these types and the driver imports
the rules, with no import going back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.attention_flops import AttentionWork
from profiling.analysis.chains import InstanceLaunches
from profiling.analysis.launch_chain import Launch, chain_names
from profiling.analysis.regions import RegionInstance, cpu_rows_flat
from profiling.analysis.stored_regions import instance_column
from profiling.trace.model import Kind, Trace

SEVERITIES = ("high", "medium", "low")
"""high: clear waste with a known fix; medium: worth a look; low: context for the numbers."""


@dataclass(frozen=True)
class EvidenceRow:
    """One event behind a finding; ``row`` is the trace row the TUI jumps to.

    ``start_us`` is relative to the trace's first event; ``launch_chain`` names the
    ops that launched a GPU event (outermost first) and then the runtime call,
    empty for CPU rows.
    """

    row: int
    name: str
    kind: str
    lane: int
    start_us: float
    dur_us: float
    instance: int | None = None
    launch_chain: tuple[str, ...] = ()
    note: str = ""

    @property
    def launched_by(self) -> str:
        """The chain as one line, ``op > op > call`` (the JSON ``launched_by``)."""
        return " > ".join(self.launch_chain)

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
    """What every rule reads about one region; built once per region.

    The instances are the analysis's ``RegionInstance``s; their launch chains and
    rows come from the shared ``AnalysedTrace`` (computed once per instance).
    """

    analysed: AnalysedTrace
    region: str
    instances: Sequence[RegionInstance]  # a list, or a stored table's ``InstanceRange``
    work: AttentionWork | None
    input_dtype: str | None  # bf16 / fp16 / fp32 / None, of the attention inputs
    has_gpu: bool

    @property
    def trace(self) -> Trace:
        return self.analysed.trace

    @functools.cached_property
    def origin_ns(self) -> int:
        """The trace's first event (``Trace.start_ns`` is a pass over every row)."""
        return self.trace.start_ns

    def prepare(self) -> None:
        """Compute every instance's CPU rows and launches in a few vectorised passes
        (instead of one small pass per instance per rule: seconds at 38,400 instances).
        The CPU rows first: on a first open the launches are being built by the
        warm-up's other thread (``warm``), and the CPU rows need none of them."""
        _ = self.cpu_flat, self.batch

    @functools.cached_property
    def batch(self) -> InstanceLaunches:
        """Every instance's GPU rows and launch chains (in ``instances`` order), as the
        arrays the rules read for all instances at once."""
        return self.analysed.launch_batch(self.instances)

    @functools.cached_property
    def gpu_owner(self) -> np.ndarray:
        """The position (in ``instances``) of the instance of each entry of ``batch.rows``."""
        return self.batch.owner()

    @functools.cached_property
    def _cpu(self) -> tuple[np.ndarray, np.ndarray]:
        rows, owner = cpu_rows_flat(self.trace, self.instances)
        return rows, owner.astype(np.int64, copy=False)

    @functools.cached_property
    def cpu_flat(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, ptr): every instance's CPU rows (``RegionInstance.cpu_rows``) one after
        another; instance ``k``'s are ``rows[ptr[k]:ptr[k+1]]``."""
        rows, owner = self._cpu
        counts = np.bincount(owner, minlength=len(self.instances))
        return rows, np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    @functools.cached_property
    def cpu_owner(self) -> np.ndarray:
        """The position of the instance of each entry of ``cpu_flat``'s rows."""
        return self._cpu[1]

    @functools.cached_property
    def _position(self) -> dict[int, int]:
        return {row: k for k, row in enumerate(instance_column(self.instances, "row").tolist())}

    def cpu_rows(self, inst: RegionInstance) -> np.ndarray:
        """``RegionInstance.cpu_rows``, cut from ``cpu_flat``."""
        k = self._position.get(inst.row)
        if k is None:
            return inst.cpu_rows(self.trace)
        rows, ptr = self.cpu_flat
        return rows[int(ptr[k]) : int(ptr[k + 1])]

    def op_rows(self, inst: RegionInstance) -> np.ndarray:
        """The instance's ``cpu_op`` rows (``RegionInstance.op_rows``)."""
        rows = self.cpu_rows(inst)
        return rows[self.trace.kind[rows] == int(Kind.CPU_OP)]

    def launches(self, inst: RegionInstance) -> tuple[Launch, ...]:
        """The instance's GPU events and their launch chains, in GPU start order (from
        ``batch``, which ``launch_batch`` remembers)."""
        return self.analysed.launches(inst)

    def gpu_rows(self, inst: RegionInstance) -> np.ndarray:
        return self.analysed.gpu_rows(inst)

    def evidence(self, row: int, inst: RegionInstance | None = None, note: str = "",
                 chain: Sequence[int] = ()) -> EvidenceRow:
        t = self.trace
        return EvidenceRow(
            row=int(row), name=t.name(row), kind=Kind(int(t.kind[row])).name.lower(),
            lane=int(t.lane[row]), start_us=(int(t.ts_ns[row]) - self.origin_ns) / 1e3,
            dur_us=int(t.dur_ns[row]) / 1e3, instance=None if inst is None else inst.index,
            launch_chain=chain_names(t, tuple(chain)), note=note,
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
"""A rule reads one region's context and returns its findings (``findings.RULES``)."""
