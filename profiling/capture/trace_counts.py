"""Per-forward counts of the trace a capture just exported, read by the trace engine.

The manifest's "kernels per forward" and "Memcpy per forward" must be what the
trace itself says, so they are counted from the exported file, not from torch's
Python objects, and through the same loader and analysis as ``attn-tui stats``
(``profiling.trace`` + ``AnalysedTrace``): a GPU event (kernel, Memcpy, Memset)
belongs to the ``attn_fwd`` instance whose CPU range holds the runtime or driver
call that launched it (DESIGN.md section 3).  The capture table and ``stats``
therefore can never disagree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from profiling.analysis.analysed import AnalysedTrace, as_analysed
from profiling.analysis.regions import RegionInstance
from profiling.trace import Kind, Trace, load_trace

PER_INSTANCE = ("kernels", "memcpys", "memsets", "device_ns", "cpu_ns")
"""The ``RegionInstance`` figures ``RegionCounts.per_instance`` averages."""


@dataclass(frozen=True)
class RegionCounts:
    """The instances of one region name, and the names of the copies they launched."""

    instances: tuple[RegionInstance, ...]
    memcpy_names: tuple[str, ...]  # distinct, sorted

    def per_instance(self, figure: str) -> float | None:
        """The average of one ``PER_INSTANCE`` figure over the instances (None: none)."""
        if figure not in PER_INSTANCE:
            raise ValueError(f"not a per-instance figure: {figure!r}")
        if not self.instances:
            return None
        return sum(getattr(inst, figure) for inst in self.instances) / len(self.instances)


def count_region(trace: Trace | AnalysedTrace, region: str) -> RegionCounts:
    """Count the GPU events launched from inside each instance of ``region``."""
    a = as_analysed(trace)
    instances = tuple(a.regions.select(region))
    names: set[str] = set()
    for inst in instances:
        rows = a.gpu_rows(inst)
        copies = rows[a.trace.kind[rows] == int(Kind.MEMCPY)]
        names.update(a.trace.name(int(r)) for r in copies.tolist())
    return RegionCounts(instances, tuple(sorted(names)))


def count_file(path: str | os.PathLike[str], region: str) -> RegionCounts:
    """``count_region`` of a trace file, loaded without a sidecar index and in this
    process (no decoding workers forked from a process that holds a GPU context)."""
    return count_region(load_trace(path, use_cache=False, workers=1), region)
