"""Per-forward counts read from the Chrome trace a capture just exported.

The manifest's "kernels per forward" and "Memcpy per forward" must be what the
trace itself says, so they are counted from the exported JSON, not from torch's
Python objects: a GPU event (kernel, Memcpy, Memset) belongs to the ``attn_fwd``
instance whose CPU range holds the runtime or driver call that launched it,
matched through ``args.correlation`` (DESIGN.md section 3).  Stdlib only, so it
runs wherever a capture runs.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

GPU_CATEGORIES = {
    "kernel": "kernel",
    "gpu_memcpy": "memcpy",
    "gpu_memset": "memset",
    # spellings of older Kineto versions
    "Kernel": "kernel",
    "Memcpy": "memcpy",
    "Memset": "memset",
}
LAUNCH_CATEGORIES = {"cuda_runtime", "cuda_driver", "Runtime", "runtime"}


@dataclass
class RegionInstance:
    """One ``attn_fwd`` instance and the GPU events it launched."""

    start_us: float
    dur_us: float
    kernels: int = 0
    memcpy: int = 0
    memset: int = 0
    device_us: float = 0.0
    memcpy_names: list[str] = field(default_factory=list)


@dataclass
class RegionCounts:
    """Counts over every instance of one region name."""

    instances: list[RegionInstance]

    def per_instance(self, attr: str) -> float | None:
        if not self.instances:
            return None
        return sum(getattr(inst, attr) for inst in self.instances) / len(self.instances)

    def as_dict(self) -> dict[str, Any]:
        return {
            "instances": len(self.instances),
            "kernels_per_instance": self.per_instance("kernels"),
            "memcpy_per_instance": self.per_instance("memcpy"),
            "memset_per_instance": self.per_instance("memset"),
            "device_us_per_instance": self.per_instance("device_us"),
            "cpu_us_per_instance": self.per_instance("dur_us"),
            "memcpy_names": sorted({n for inst in self.instances for n in inst.memcpy_names}),
        }


def _thread(event: dict[str, Any]) -> tuple[str, str]:
    return str(event.get("pid")), str(event.get("tid"))


def count_region(trace: dict[str, Any], region: str) -> RegionCounts:
    """Count the GPU events launched from inside each instance of ``region``."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    spans: dict[tuple[str, str], list[RegionInstance]] = {}
    launches: list[dict[str, Any]] = []
    gpu: list[dict[str, Any]] = []
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        if cat == "user_annotation" and ev.get("name") == region:
            inst = RegionInstance(float(ev["ts"]), float(ev.get("dur", 0.0)))
            spans.setdefault(_thread(ev), []).append(inst)
        elif cat in LAUNCH_CATEGORIES:
            launches.append(ev)
        elif cat in GPU_CATEGORIES:
            gpu.append(ev)
    for insts in spans.values():
        insts.sort(key=lambda inst: inst.start_us)
    starts = {key: [inst.start_us for inst in insts] for key, insts in spans.items()}

    owner: dict[Any, RegionInstance] = {}
    for ev in launches:
        corr = (ev.get("args") or {}).get("correlation")
        key = _thread(ev)
        if corr is None or key not in spans:
            continue
        ts = float(ev["ts"])
        i = bisect.bisect_right(starts[key], ts) - 1
        if i >= 0:
            inst = spans[key][i]
            if ts <= inst.start_us + inst.dur_us:
                owner[corr] = inst
    for ev in gpu:
        owning = owner.get((ev.get("args") or {}).get("correlation"))
        if owning is None:
            continue
        inst = owning
        kind = GPU_CATEGORIES[ev["cat"]]
        if kind == "kernel":
            inst.kernels += 1
        elif kind == "memcpy":
            inst.memcpy += 1
            inst.memcpy_names.append(str(ev.get("name")))
        else:
            inst.memset += 1
        inst.device_us += float(ev.get("dur", 0.0))

    ordered = sorted((inst for insts in spans.values() for inst in insts),
                     key=lambda inst: inst.start_us)
    return RegionCounts(ordered)
