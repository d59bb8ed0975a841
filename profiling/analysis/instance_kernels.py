"""The GPU events of each region instance, as a list (``kernels --json``).

Offsets are measured from the instance's first GPU event (``start_offset_us``
of the first one is 0), so one instance reads as a GPU timeline: gaps between
kernels, overlaps across streams.  ``gpu_start_us`` says where that origin is,
and all absolute figures (``start_us``, ``gpu_start_us``) count microseconds
from the trace's first event, so instances of one trace line up.

Each event says who launched it twice: ``launched_by`` is the innermost op
around the launching call (``Links.op``; the region's own annotation when the
call sits directly in it), ``launch_chain`` the whole chain inside the instance
from its outermost op down to the runtime call (``launch_chain``), and
``attribution`` says whether that op is the one torch's table credits
(``external_id``), only the innermost op around the call (``nesting``: ``table``
shows no device time for it there), or absent (``none``).
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.launch_chain import ATTRIBUTIONS, attribution, chain_names
from profiling.analysis.regions import RegionInstance
from profiling.trace.model import NO_ID, Kind

KIND_NAMES = {Kind.KERNEL: "kernel", Kind.MEMCPY: "memcpy", Kind.MEMSET: "memset"}


@dataclass(frozen=True)
class KernelEntry:
    """One GPU event of an instance."""

    row: int
    name: str
    kind: str  # kernel | memcpy | memset
    start_offset_us: float  # from the instance's first GPU event start
    dur_us: float
    stream: int | None
    launched_by: str | None  # innermost op around the launch; None for no op
    launch_chain: tuple[str, ...] = ()  # outermost op inside the instance ... runtime call
    attribution: str = "none"  # external_id | nesting | none (launch_chain.attribution)

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "start_offset_us": self.start_offset_us,
            "dur_us": self.dur_us,
            "stream": self.stream,
            "launched_by": self.launched_by,
            "launch_chain": list(self.launch_chain),
            "attribution": self.attribution,
        }


@dataclass(frozen=True)
class InstanceKernels:
    """A region instance and its GPU events in GPU start order."""

    region: str  # the instance's own name (ProfilerStep#3 stays ProfilerStep#3)
    instance: int  # index within its group, 0-based
    start_us: float  # CPU start, from the trace's first event
    cpu_time_us: float
    device_time_us: float
    gpu_start_us: float | None  # first GPU event start, from the trace's first event
    kernels: list[KernelEntry]

    def as_json(self) -> dict:
        return {
            "region": self.region,
            "instance": self.instance,
            "start_us": self.start_us,
            "cpu_time_us": self.cpu_time_us,
            "device_time_us": self.device_time_us,
            "gpu_start_us": self.gpu_start_us,
            "kernels": [k.as_json() for k in self.kernels],
        }


def instance_kernels(analysed: AnalysedTrace, inst: RegionInstance) -> InstanceKernels:
    """The GPU events of one instance (see the module doc for the offsets)."""
    trace, links = analysed.trace, analysed.links
    origin = trace.start_ns
    rows = analysed.gpu_rows(inst)
    chains = {lc.gpu_row: lc.chain for lc in analysed.launches(inst)}
    first = int(trace.ts_ns[rows].min()) if rows.shape[0] else None
    how = attribution(trace, links, rows).tolist()
    entries = []
    for r, a in zip(rows.tolist(), how, strict=True):
        op = int(links.op[r])
        stream = int(trace.stream[r])
        entries.append(
            KernelEntry(
                row=r,
                name=trace.strings[int(trace.name_id[r])],
                kind=KIND_NAMES.get(Kind(int(trace.kind[r])), "other"),
                start_offset_us=(int(trace.ts_ns[r]) - (first or 0)) / 1000.0,
                dur_us=int(trace.dur_ns[r]) / 1000.0,
                stream=None if stream == NO_ID else stream,
                launched_by=trace.strings[int(trace.name_id[op])] if op >= 0 else None,
                launch_chain=chain_names(trace, chains.get(r, ())),
                attribution=ATTRIBUTIONS[a],
            )
        )
    return InstanceKernels(
        region=inst.name,
        instance=inst.index,
        start_us=(inst.start_ns - origin) / 1000.0,
        cpu_time_us=inst.cpu_ns / 1000.0,
        device_time_us=inst.device_ns / 1000.0,
        gpu_start_us=None if first is None else (first - origin) / 1000.0,
        kernels=entries,
    )
