"""Traces side by side: one region's cost, work and implementation in each trace.

The blog post this tool comes from is a comparison: naive against in-place
(one Memcpy less), in-place against the SDPA math backend (slower, many more
kernels), then the fused backends (one kernel each).  ``compare_traces`` turns
each trace into one ``TraceComparison`` holding, per region, the numbers that
story needs: instances, CPU and GPU time per instance, kernels/memcpys/memsets
per instance, which attention implementation ran, its FLOPs, the achieved
TFLOP/s and its share of the device's dense peak, and the time ratio to the
first trace.  Plain dataclasses of numbers: the CLI and the TUI format them
(``tui.compare_table``).  Each trace is an ``AnalysedTrace``, so the regions,
links and op table compare reads are the ones every other view reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace, as_analysed
from profiling.analysis.attention_flops import (
    attention_work,
    config_variant,
    tflops_per_second,
    work_from_ops,
)
from profiling.analysis.attention_regions import is_attention_name
from profiling.analysis.chains import instance_gpu_rows
from profiling.analysis.device_peaks import DevicePeak, match_device, trace_device_name
from profiling.analysis.implementations import UNKNOWN, Implementation, identify
from profiling.analysis.instance_ops import op_name_ids_within
from profiling.analysis.ranges import concat_ranges, distinct
from profiling.analysis.ranks import trace_rank, world_size
from profiling.analysis.regions import INSTANCE_COL as _COL
from profiling.analysis.regions import RegionInstance
from profiling.analysis.stored_regions import (
    StoredRegions,
    instance_column,
    instance_table,
)
from profiling.trace.model import Kind, Trace
from profiling.trace.op_inputs import dtype_family


@dataclass(frozen=True)
class RegionComparison:
    """One region of one trace.  Averages are per instance; None means unknown (blank).

    ``device_time_us`` lists the GPU time of every instance in order (the Regions
    view's sparkline) and ``tflops_per_instance`` the achieved rate of each;
    ``tflops`` is FLOPs over the average GPU time; ``peak_share``
    is a fraction (0.18 = 18 %) of the dense tensor-core peak for the input dtype.
    ``time_ratio_to_first`` is this region's average time over the first trace's
    (GPU time when both have it, else CPU time; ``ratio_basis`` says which).

    The FLOPs say what they count: ``flops_source`` where they were read
    (``config``, ``shapes``, ``matmul_shapes``; ``flops_detail`` in words),
    ``flops_convention`` ``causal`` (useful FLOPs, half the scores) or ``dense``
    (every score), ``causal`` whether the attention is causal (None: unknown), and
    ``flops_note`` why the figure is not the useful causal count when it may not be.
    TFLOP/s divide by the summed GPU time of the instance's events (not wall time).
    """

    region: str
    instances: int
    cpu_time_avg_us: float | None
    device_time_avg_us: float | None
    kernels_per_instance: float | None
    memcpy_per_instance: float | None
    memset_per_instance: float | None
    device_time_us: tuple[float, ...] = ()
    tflops_per_instance: tuple[float | None, ...] = ()
    implementation: Implementation = UNKNOWN
    flops_per_instance: float | None = None
    flops_source: str = ""
    flops_detail: str = ""
    flops_convention: str | None = None
    flops_note: str = ""
    dtype: str | None = None
    causal: bool | None = None
    tflops: float | None = None
    peak_tflops: float | None = None
    peak_share: float | None = None
    time_ratio_to_first: float | None = None
    ratio_basis: str = ""

    def as_json(self) -> dict[str, Any]:
        """DESIGN.md section 5 region metrics first, then this command's own fields."""
        return {
            "instances": self.instances,
            "cpu_time_avg_us": self.cpu_time_avg_us,
            "device_time_avg_us": self.device_time_avg_us,
            "kernels_per_instance": self.kernels_per_instance,
            "memcpy_per_instance": self.memcpy_per_instance,
            "memset_per_instance": self.memset_per_instance,
            "device_time_us": list(self.device_time_us),
            "tflops_per_instance": list(self.tflops_per_instance),
            "implementation": self.implementation.name or None,
            "implementation_key": self.implementation.key,
            "implementation_evidence": self.implementation.evidence or None,
            "attention_kernels_per_instance": self.implementation.attention_kernels,
            "flops_per_instance": self.flops_per_instance,
            "flops_source": self.flops_source or None,
            "flops_detail": self.flops_detail or None,
            "flops_convention": self.flops_convention,
            "causal": self.causal,
            "flops_note": self.flops_note or None,
            "tflops_time_basis": "summed GPU time per instance",
            "dtype": self.dtype,
            "tflops": self.tflops,
            "peak_tflops": self.peak_tflops,
            "peak_share": self.peak_share,
            "time_ratio_to_first": self.time_ratio_to_first,
            "ratio_basis": self.ratio_basis or None,
        }


@dataclass(frozen=True)
class TraceComparison:
    """One input file: its label, device and totals, and the compared regions by name."""

    path: str
    label: str  # the capture's variant name, else the file name without extensions
    variant: str | None
    device: str | None
    peak: DevicePeak | None
    self_cpu_time_total_us: float
    self_device_time_total_us: float
    regions: dict[str, RegionComparison] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    rank: int | None = None  # distributedInfo.rank: which trace of a multi-rank job
    world_size: int | None = None

    def as_json(self) -> dict[str, Any]:
        """The ``compare --json`` object for this file (DESIGN.md section 5, plus extras)."""
        return {
            "path": self.path,
            "label": self.label,
            "variant": self.variant,
            "rank": self.rank,
            "world_size": self.world_size,
            "device": self.device,
            "device_peak": None if self.peak is None else {
                "model": self.peak.model, "bf16_tflops": self.peak.bf16_tflops,
                "fp16_tflops": self.peak.fp16_tflops, "source": self.peak.source},
            "regions": {name: r.as_json() for name, r in self.regions.items()},
            "self_device_time_total_us": self.self_device_time_total_us,
            "self_cpu_time_total_us": self.self_cpu_time_total_us,
            "warnings": list(self.warnings),
        }


def trace_label(path: str, metadata: dict[str, Any]) -> str:
    """The capture's variant name when the trace has one, else the file's stem."""
    variant = config_variant(metadata)
    if variant:
        return variant
    base = os.path.basename(path)
    for suffix in (".gz", ".json", ".pt.trace"):
        base = base[: -len(suffix)] if base.endswith(suffix) else base
    return base


def _device_index(a: AnalysedTrace, groups: Sequence[Sequence[RegionInstance]]) -> int | None:
    """The GPU (Kineto pid of its lanes) most of the regions' GPU events ran on (a tie
    goes to the one met first, in instance and GPU order).  The counts need no order:
    the GPU order is only sorted out for a tie."""
    trace = a.trace
    lo = np.concatenate([instance_column(g, "launch_lo") for g in groups] or [_NONE])
    hi = np.concatenate([instance_column(g, "launch_hi") for g in groups] or [_NONE])
    # lanes are small numbers: counted in one pass (a sort of 300,000 rows was 10 ms)
    per_lane = np.bincount(trace.lane[a.links.by_launch[concat_ranges(lo, hi)]],
                           minlength=len(trace.lanes))
    lanes = np.flatnonzero(per_lane)
    counts = per_lane[lanes]
    pids = _pid_counts(trace, lanes, counts, counts)
    if not pids:
        return None
    top = max(n for n, _ in pids.values())
    if sum(n == top for n, _ in pids.values()) == 1:
        return next(p for p, (n, _) in pids.items() if n == top)
    _, rows = instance_gpu_rows(trace, a.links, [i for g in groups for i in g])
    lanes, first, counts = np.unique(trace.lane[rows], return_index=True, return_counts=True)
    pids = _pid_counts(trace, lanes, first, counts)
    return min(pids, key=lambda p: (-pids[p][0], pids[p][1]))


_NONE = np.zeros(0, dtype=np.int64)


def _pid_counts(trace: Trace, lanes: np.ndarray, first: np.ndarray,
                counts: np.ndarray) -> dict[int, list[int]]:
    """pid -> [GPU events, first position] over lanes (integer pids only)."""
    pids: dict[int, list[int]] = {}
    for lane, at, n in zip(lanes.tolist(), first.tolist(), counts.tolist(), strict=True):
        pid = trace.lanes[lane].pid
        if isinstance(pid, int) or (isinstance(pid, str) and pid.isascii() and pid.isdigit()):
            got = pids.setdefault(int(pid), [0, at])
            got[0] += n
            got[1] = min(got[1], at)
    return pids


def summarize_region(a: AnalysedTrace, region: str, instances: Sequence[RegionInstance],
                     peak: DevicePeak | None) -> RegionComparison:
    """The comparison numbers of one region from its instances (none: zero instances),
    read from their columns (``instance_table``), in the same arithmetic as a sum over
    the instances: integer sums, the same float per instance, summed in order."""
    trace = a.trace
    n = len(instances)
    if n == 0:
        return RegionComparison(region, 0, None, None, None, None, None)
    table = instance_table(instances)

    def total(name: str) -> int:
        return int(table[:, _COL[name]].sum())

    device_us = table[:, _COL["device_ns"]] / 1e3
    device = device_us.tolist()
    has_gpu = total("kernels") + total("memcpys") + total("memsets") > 0
    device_avg = sum(device) / n
    work = attention_work(trace, region, instances[-1].cpu_rows(trace))
    flops = work.flops if work is not None else None
    tflops = tflops_per_second(flops, device_avg) if has_gpu else None
    peak_tflops = peak.tflops(work.dtype) if (peak is not None and work is not None) else None
    return RegionComparison(
        region=region,
        instances=n,
        cpu_time_avg_us=(total("end_ns") - total("start_ns")) / n / 1e3,
        device_time_avg_us=device_avg,
        kernels_per_instance=total("kernels") / n,
        memcpy_per_instance=total("memcpys") / n,
        memset_per_instance=total("memsets") / n,
        device_time_us=tuple(device),
        tflops_per_instance=_tflops_each(flops, device_us) if has_gpu else (),
        implementation=stored_implementation(a, region, instances),
        flops_per_instance=flops,
        flops_source=work.kind if work is not None else "",
        flops_detail=work.source if work is not None else "",
        flops_convention=work.convention if work is not None else None,
        flops_note=work.note if work is not None else "",
        dtype=(dtype_family(work.dtype) or work.dtype) if work is not None else None,
        causal=work.causal if work is not None else None,
        tflops=tflops,
        peak_tflops=peak_tflops,
        peak_share=(tflops / peak_tflops) if (tflops and peak_tflops) else None,
    )


def _tflops_each(flops: float | None, device_us: np.ndarray) -> tuple[float | None, ...]:
    """``tflops_per_second(flops, d)`` of each GPU time, as one numpy expression (the
    same float operations in the same order; None where it gives None)."""
    if flops is None:
        return (None,) * device_us.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero time gives None below
        rates = (float(flops) / (device_us * 1e-6) / 1e12).tolist()
    if bool((device_us > 0).all()):
        return tuple(rates)
    return tuple(r if d > 0 else None for r, d in zip(rates, device_us.tolist(), strict=True))


def stored_implementation(a: AnalysedTrace, region: str,
                          instances: Sequence[RegionInstance]) -> Implementation:
    """``region_implementation`` of all of a region's instances, kept with the index
    (it reads every instance's ops and kernels: the costliest part of ``compare``)."""
    return a.stored(
        f"implementation:{region}",
        lambda: region_implementation(a, region, instances),
        lambda impl: ({}, [impl.key, impl.name, impl.evidence, impl.attention_kernels]),
        lambda _arrays, doc: Implementation(str(doc[0]), str(doc[1]), str(doc[2]),
                                            int(doc[3])))


def region_implementation(a: AnalysedTrace, region: str,
                          instances: Sequence[RegionInstance]) -> Implementation:
    """The attention implementation of a region's instances (for a Regions view column).

    An unfused matmul + softmax counts as attention only in a region named like
    attention or one whose ops have an attention's shapes.
    """
    trace, strings = a.trace, a.trace.strings
    _, rows = instance_gpu_rows(trace, a.links, instances)  # every instance's, in order
    kernels = [strings[i] for i in trace.name_id[rows[trace.kind[rows] == int(Kind.KERNEL)]]
               .tolist()]
    columns = (instance_column(instances, f) for f in ("lane", "start_ns", "end_ns"))
    ops = {strings[i] for i in op_name_ids_within(trace, *columns).tolist()}
    looks = is_attention_name(region) or (
        bool(instances) and work_from_ops(trace, instances[-1].cpu_rows(trace)) is not None)
    launch = a.links.launch[rows]
    calls = {strings[i] for i in distinct(trace.name_id[launch[launch >= 0]]).tolist()}
    return identify(kernels, ops, len(instances), unfused=looks, call_names=calls)


def implementations_by_region(analysed: AnalysedTrace | Trace) -> dict[str, Implementation]:
    """Every region of the trace (and attention op, when no region is named like attention)
    with the implementation it ran; regions that ran none are left out."""
    a = as_analysed(analysed)
    names = list(dict.fromkeys(a.regions.names() + list(a.attention_regions)))
    out = {}
    for name in names:
        impl = stored_implementation(a, name, a.instances(name))
        if impl.key != UNKNOWN.key:
            out[name] = impl
    return out


def summarize_trace(analysed: AnalysedTrace | Trace,
                    region: str = "attn_fwd") -> TraceComparison:
    """One trace's comparison: ``region``, or its attention regions when it has none."""
    a = as_analysed(analysed)
    trace = a.trace
    totals = a.key_averages
    regions: dict[str, Sequence[RegionInstance]] = {region: _instances(a, region)}
    warnings: list[str] = []
    if not regions[region]:
        fallback = [r for r in a.attention_regions if r != region]
        warnings.append(f"no {region!r} region in this trace"
                        + (f"; showing {', '.join(fallback)}" if fallback else ""))
        for name in fallback:
            regions[name] = _instances(a, name)
    device = trace_device_name(trace.metadata, _device_index(a, list(regions.values())))
    peak = match_device(device)
    return TraceComparison(
        path=trace.path,
        label=trace_label(trace.path, trace.metadata),
        variant=config_variant(trace.metadata),
        device=device,
        peak=peak,
        self_cpu_time_total_us=float(totals.self_cpu_time_total),
        self_device_time_total_us=float(totals.self_device_time_total),
        regions={name: summarize_region(a, name, vs, peak) for name, vs in regions.items()},
        warnings=tuple(warnings),
        rank=trace_rank(trace.metadata),
        world_size=world_size(trace.metadata),
    )


def _instances(a: AnalysedTrace, region: str) -> Sequence[RegionInstance]:
    """``a.instances(region)``; from a reopened trace's stored table, as a sequence
    making no instance object until one is asked for (compare reads columns)."""
    regions = a.regions
    if isinstance(regions, StoredRegions):
        found = regions.select_lazily(region)
        if len(found):
            return found
    return a.instances(region)


def with_ratios(items: Sequence[TraceComparison]) -> list[TraceComparison]:
    """Fill ``time_ratio_to_first`` of every region against the first trace's same region."""
    if not items:
        return []
    first = items[0].regions
    out = []
    for item in items:
        regions = {}
        for name, reg in item.regions.items():
            base = first.get(name)
            ratio, basis = None, ""
            if base is not None and reg.instances and base.instances:
                if reg.device_time_avg_us and base.device_time_avg_us:
                    ratio, basis = reg.device_time_avg_us / base.device_time_avg_us, "device"
                elif reg.cpu_time_avg_us and base.cpu_time_avg_us:
                    ratio, basis = reg.cpu_time_avg_us / base.cpu_time_avg_us, "cpu"
            regions[name] = replace(reg, time_ratio_to_first=ratio, ratio_basis=basis)
        out.append(replace(item, regions=regions))
    return out


def compare_traces(traces: Sequence[AnalysedTrace | Trace],
                   region: str = "attn_fwd") -> list[TraceComparison]:
    """Every trace summarised in the order given, with ratios to the first."""
    return with_ratios([summarize_trace(t, region) for t in traces])
