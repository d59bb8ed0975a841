"""The rules behind ``findings``: each reads one region and returns its findings.

Kept apart from ``findings`` (the data types and the driver) so each rule is a
short function that can be read, and tested, on its own.  Rules look only at
what the trace records: kernel and op names, ``Input type``/``Concrete Inputs``
args (``record_shapes=True``), launch chains and times.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter

import numpy as np

from profiling.analysis.attention_regions import InstanceView, Launch
from profiling.analysis.device_peaks import dtype_family
from profiling.analysis.findings import EvidenceRow, Finding, RegionContext, Rule
from profiling.trace.model import Kind, Trace

GAP_MIN_SHARE = 0.25
"""gpu-idle-gaps: average share of the region's GPU span spent idle between its events."""
GAP_MIN_US = 10.0
"""gpu-idle-gaps: ... and at least this much idle time per instance, on average."""
ODD_FRACTION = 0.25
"""odd-instance: an instance whose time is this far from the median (as a fraction) ..."""
ODD_MIN_US = 5.0
"""... and at least this many microseconds from it."""
MAX_EVIDENCE = 12
"""Evidence rows kept per finding (the first instance's, then the others')."""

_FP32_KERNEL = re.compile(r"f32f32|sgemm|s1688gemm|tf32|_fp32_|gemm_f32", re.IGNORECASE)
_COMPUTE_OPS = frozenset({"aten::bmm", "aten::mm", "aten::matmul", "aten::baddbmm",
                          "aten::_softmax", "aten::softmax", "aten::_safe_softmax"})
_MASK_BUILD = frozenset({"aten::triu", "aten::tril", "aten::triu_", "aten::tril_"})
_MASK_HELPERS = _MASK_BUILD | frozenset({
    "aten::ones", "aten::full", "aten::zeros", "aten::fill_", "aten::where", "aten::arange",
    "aten::scalar_tensor", "aten::new_full", "aten::new_ones", "aten::logical_not"})
_MASK_KERNEL = re.compile(r"triu_tril|\btri[ul]_", re.IGNORECASE)
_SYNC = re.compile(r"^(?:cuda|hip)(?:Device|Stream|Event)Synchronize$|^(?:cuda|hip)Memcpy(?:2D)?$"
                   r"|^cuCtxSynchronize$|^cuStreamSynchronize$|^cuEventSynchronize$")
_COPY_OPS = frozenset({"aten::clone", "aten::copy_", "aten::contiguous", "aten::to",
                       "aten::_to_copy", "aten::empty_like"})


def _us(ns: float) -> str:
    return f"{ns / 1e3:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms"


def dtype_from_types(types: object) -> str | None:
    """bf16/fp16/fp32 of the first tensor input in an op's ``Input type`` list."""
    if isinstance(types, list):
        for item in types:
            family = dtype_family(str(item)) if item else None
            if family:
                return family
    return None


def input_dtype_from_ops(trace: Trace, view: InstanceView) -> str | None:
    """The dtype of the first op in the instance that names one (its inputs' dtype)."""
    for row in view.op_rows(trace).tolist()[:64]:
        family = dtype_from_types(trace.args(row).get("Input type"))
        if family:
            return family
    return None


def _limit(rows: list[EvidenceRow]) -> tuple[EvidenceRow, ...]:
    return tuple(rows[:MAX_EVIDENCE])


def _gpu_evidence(ctx: RegionContext, pairs: list[tuple[InstanceView, Launch]],
                  note: str = "") -> list[EvidenceRow]:
    return [ctx.evidence(lc.gpu_row, v, note, lc.op_chain) for v, lc in pairs]


def memcpy_out_of_place(ctx: RegionContext) -> list[Finding]:
    """A Memcpy in the region; named after the out-of-place op that caused it, if any."""
    t = ctx.trace
    pairs = [(v, lc) for v in ctx.views for lc in v.launches
             if int(t.kind[lc.gpu_row]) == int(Kind.MEMCPY)]
    if not pairs:
        return []
    culprit = None
    for view, launch in pairs:
        culprit = _out_of_place_op(t, view, launch)
        if culprit:
            break
    per = len(pairs) / len(ctx.views)
    instances = tuple(sorted({v.index for v, _ in pairs}))
    kinds = sorted({t.name(lc.gpu_row) for _, lc in pairs})
    if culprit:
        return [Finding(
            id="memcpy-out-of-place", severity="high", region=ctx.region, instances=instances,
            title=f"{culprit} copies its input ({kinds[0]}) on every call",
            detail=f"{per:g} Memcpy per instance: {culprit} clones the tensor, then runs "
                   f"{culprit}_ on the copy",
            evidence=_limit(_gpu_evidence(ctx, pairs)),
            suggestion=f"use the in-place {culprit}_ under torch.no_grad(): nothing needs "
                       "the tensor before the fill, so the copy is pure waste",
        )]
    host = any("HtoD" in k or "DtoH" in k or "Host" in k for k in kinds)
    return [Finding(
        id="memcpy-in-region", severity="medium", region=ctx.region, instances=instances,
        title=f"{per:g} Memcpy per instance inside {ctx.region} ({', '.join(kinds)})",
        detail="launched by " + (" > ".join(t.name(r) for r in pairs[0][1].op_chain) or "?"),
        evidence=_limit(_gpu_evidence(ctx, pairs)),
        suggestion="move host tensors to the device once, outside the region" if host else
        "check that the copy is needed (a .contiguous(), .clone() or dtype change)",
    )]


def _out_of_place_op(trace: Trace, view: InstanceView, launch: Launch) -> str | None:
    """``aten::foo`` when the copy sits under ``aten::foo`` and ``aten::foo_`` runs inside it."""
    for op in launch.op_chain:
        name = trace.name(op)
        if name.endswith("_") or name in _COPY_OPS or not name.startswith("aten::"):
            continue
        start, end = int(trace.ts_ns[op]), int(trace.ts_ns[op] + trace.dur_ns[op])
        inplace = trace.string_ids(name + "_")
        if inplace is None:
            continue
        ops = view.op_rows(trace)
        inside = ops[(trace.name_id[ops] == inplace) & (trace.ts_ns[ops] >= start)
                     & (trace.ts_ns[ops] + trace.dur_ns[ops] <= end)]
        if inside.size:
            return name
    return None


def _ids(trace: Trace, names: frozenset[str] | tuple[str, ...]) -> set[int]:
    """Interned ids of the names that occur in the trace."""
    return {i for n in names if (i := trace.string_ids(n)) is not None}


def _matching(trace: Trace, views: list[InstanceView], pattern: re.Pattern[str]) -> set[int]:
    """Name ids of the views' GPU events that match ``pattern`` (each distinct name once)."""
    rows = [lc.gpu_row for v in views for lc in v.launches]
    if not rows:
        return set()
    ids = np.unique(trace.name_id[np.array(rows, dtype=np.int64)]).tolist()
    return {i for i in ids if pattern.search(trace.strings[i])}


def fp32_upcast(ctx: RegionContext) -> list[Finding]:
    """fp32 GEMM/softmax in a region whose attention inputs are bf16 or fp16."""
    if ctx.input_dtype not in ("bf16", "fp16"):
        return []
    t = ctx.trace
    rows: list[EvidenceRow] = []
    hit: set[int] = set()
    fp32_kernels = _matching(t, ctx.views, _FP32_KERNEL)
    compute, casting = _ids(t, _COMPUTE_OPS), _ids(t, ("aten::to", "aten::_to_copy"))
    for v in ctx.views:
        ops = v.op_rows(t)
        ids = t.name_id[ops]
        fp32_ops = {int(r) for r in ops[np.isin(ids, list(compute))].tolist()
                    if dtype_from_types(t.args(r).get("Input type")) == "fp32"}
        casts = {int(r) for r in ops[np.isin(ids, list(casting))].tolist() if _is_upcast(t, r)}
        first = not hit
        for lc in v.launches:
            cast = bool(casts.intersection(lc.op_chain))
            if int(t.name_id[lc.gpu_row]) in fp32_kernels or fp32_ops.intersection(lc.op_chain):
                hit.add(v.index)
            elif not cast:
                continue
            if first:
                note = f"cast {ctx.input_dtype} -> fp32" if cast else "fp32"
                rows.append(ctx.evidence(lc.gpu_row, v, note, lc.op_chain))
        if not v.launches and fp32_ops:  # CPU trace: the ops are the evidence
            hit.add(v.index)
            if first:
                rows += [ctx.evidence(r, v, "fp32 inputs") for r in sorted(fp32_ops)]
    if not hit:
        return []
    return [Finding(
        id="fp32-upcast", severity="high", region=ctx.region, instances=tuple(sorted(hit)),
        title=f"fp32 kernels in a {ctx.input_dtype} region (upcast)",
        detail=f"inputs are {ctx.input_dtype}, but matmul/softmax run in fp32: the SDPA math "
               "backend upcasts q, k and v and leaves the tensor cores' fast path",
        evidence=_limit(rows),
        suggestion="use a fused backend (flash, efficient or cuDNN) that keeps "
                   f"{ctx.input_dtype}, or keep the math path in {ctx.input_dtype} "
                   "(torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True))",
    )]


def _is_upcast(trace: Trace, row: int) -> bool:
    """``aten::to``/``aten::_to_copy`` of a bf16/fp16 tensor to float32 (ScalarType 6)."""
    if trace.name(row) not in ("aten::to", "aten::_to_copy"):
        return False
    args = trace.args(row)
    concrete = args.get("Concrete Inputs")
    if dtype_from_types(args.get("Input type")) not in ("bf16", "fp16"):
        return False
    return isinstance(concrete, list) and len(concrete) > 1 and str(concrete[1]) == "6"


def mask_rebuilt(ctx: RegionContext) -> list[Finding]:
    """triu/tril inside the region: the causal mask is built again on every call."""
    t = ctx.trace
    rows: list[EvidenceRow] = []
    hit: set[int] = set()
    build_ids, kernel_ids = list(_ids(t, _MASK_BUILD)), _matching(t, ctx.views, _MASK_KERNEL)
    for v in ctx.views:
        ops = v.op_rows(t)
        builders = ops[np.isin(t.name_id[ops], build_ids)].tolist()
        kernels = [lc for lc in v.launches if int(t.name_id[lc.gpu_row]) in kernel_ids]
        if not builders and not kernels:
            continue
        hit.add(v.index)
        if len(hit) > 1:
            continue  # evidence from the first instance is enough to jump to
        parent = _parent_chain(t, v, builders, kernels)
        if v.launches:
            for lc in v.launches:
                chain = lc.op_chain
                if chain[: len(parent)] == parent and len(chain) > len(parent) and \
                        t.name(chain[len(parent)]) in _MASK_HELPERS:
                    rows.append(ctx.evidence(lc.gpu_row, v, "mask", chain))
        else:
            depth = len(parent)
            rows += [ctx.evidence(r, v, "mask") for r in ops.tolist()
                     if t.name(r) in _MASK_HELPERS and _depth_in(t, v, r) == depth]
    if not hit:
        return []
    return [Finding(
        id="mask-rebuilt", severity="medium", region=ctx.region, instances=tuple(sorted(hit)),
        title="the attention mask is rebuilt on every call (triu/tril in the region)",
        detail="ones/tril/where kernels build the same causal mask in every forward",
        evidence=_limit(rows),
        suggestion="build the mask once outside the forward, or pass is_causal=True to a "
                   "fused backend (flash, efficient, cuDNN) that needs no mask",
    )]


def _depth_in(trace: Trace, view: InstanceView, row: int) -> int:
    """How many of the instance's ops enclose ``row``."""
    ops = view.op_rows(trace)
    ts, end = int(trace.ts_ns[row]), int(trace.ts_ns[row] + trace.dur_ns[row])
    return int(((trace.ts_ns[ops] <= ts) & (trace.ts_ns[ops] + trace.dur_ns[ops] >= end)
                & (ops != row)).sum())


def _parent_chain(trace: Trace, view: InstanceView, builders: list[int],
                  kernels: list[Launch]) -> tuple[int, ...]:
    """The ops around the mask builder (e.g. sdpa > _scaled_dot_product_attention_math)."""
    if kernels:
        chain = kernels[0].op_chain
        for i, op in enumerate(chain):
            if trace.name(op) in _MASK_BUILD:
                return chain[:i]
        return chain[:-1]
    row = builders[0]
    ops = view.op_rows(trace)
    ts, end = int(trace.ts_ns[row]), int(trace.ts_ns[row] + trace.dur_ns[row])
    around = ops[(trace.ts_ns[ops] <= ts) & (trace.ts_ns[ops] + trace.dur_ns[ops] >= end)
                 & (ops != row)]
    return tuple(int(r) for r in around[np.argsort(trace.ts_ns[around], kind="stable")])


def sync_in_region(ctx: RegionContext) -> list[Finding]:
    """Host synchronisations (device/stream/event sync, blocking cudaMemcpy) in the region."""
    t = ctx.trace
    rows: list[EvidenceRow] = []
    hit: set[int] = set()
    sync_ids = [i for i, name in enumerate(t.strings) if _SYNC.search(name)]
    kinds = [int(Kind.RUNTIME), int(Kind.OTHER)]
    for v in ctx.views:
        cpu = v.cpu_rows
        found = cpu[np.isin(t.name_id[cpu], sync_ids) & np.isin(t.kind[cpu], kinds)]
        for r in found.tolist():
            hit.add(v.index)
            rows.append(ctx.evidence(r, v, f"blocks the host {_us(int(t.dur_ns[r]))}"))
    if not hit:
        return []
    names = sorted({e.name for e in rows})
    return [Finding(
        id="sync-in-region", severity="medium", region=ctx.region, instances=tuple(sorted(hit)),
        title=f"host synchronisation inside {ctx.region} ({', '.join(names)})",
        detail=f"{len(rows)} sync call(s) over {len(hit)} instance(s): the CPU waits for the "
               "GPU, and the GPU then waits for the next launch",
        evidence=_limit(rows),
        suggestion="move .item(), .cpu(), printing and explicit synchronize() out of the "
                   "region; use non_blocking copies",
    )]


def launch_bound(ctx: RegionContext) -> list[Finding]:
    """CPU time per instance above its GPU time: the host cannot keep the GPU busy."""
    if not ctx.has_gpu:
        return []
    t = ctx.trace
    cpu = [v.cpu_ns for v in ctx.views]
    gpu = [v.device_ns(t) for v in ctx.views]
    cpu_avg, gpu_avg = sum(cpu) / len(cpu), sum(gpu) / len(gpu)
    if not gpu_avg or cpu_avg <= gpu_avg:
        return []
    hit = tuple(v.index for v, c, g in zip(ctx.views, cpu, gpu, strict=True) if c > g)
    rows = [ctx.evidence(v.row, v, f"CPU {_us(c)}, GPU {_us(g)}")
            for v, c, g in zip(ctx.views, cpu, gpu, strict=True)]
    return [Finding(
        id="launch-bound", severity="low", region=ctx.region, instances=hit,
        title=f"launch-bound: {_us(cpu_avg)} of CPU per instance for {_us(gpu_avg)} of GPU",
        detail=f"the host spends {cpu_avg / gpu_avg:.1f}x the GPU time issuing this region "
               "(the profiler inflates CPU time: confirm without it)",
        evidence=_limit(rows),
        suggestion="batch more work per call, or cut launch overhead with CUDA graphs "
                   "(torch.compile mode='reduce-overhead')",
    )]


def _gaps(trace: Trace, view: InstanceView) -> tuple[float, float, int, float]:
    """(idle ns, span ns, row after the largest gap, largest gap ns) of one instance."""
    rows = view.gpu_rows
    if rows.size < 2:
        return 0.0, float(trace.dur_ns[rows].sum()) if rows.size else 0.0, -1, 0.0
    order = np.argsort(trace.ts_ns[rows], kind="stable")
    rows = rows[order]
    start = trace.ts_ns[rows]
    reach = np.maximum.accumulate(start + trace.dur_ns[rows])
    gaps = np.maximum(start[1:] - reach[:-1], 0)
    k = int(np.argmax(gaps))
    return float(gaps.sum()), float(reach[-1] - start[0]), int(rows[k + 1]), float(gaps[k])


def gpu_idle_gaps(ctx: RegionContext) -> list[Finding]:
    """The GPU idles between the region's own events for a large share of its span."""
    if not ctx.has_gpu:
        return []
    t = ctx.trace
    stats = [(v, *_gaps(t, v)) for v in ctx.views]
    idle = sum(s[1] for s in stats) / len(stats)
    share = sum(s[1] / s[2] for s in stats if s[2]) / len(stats)
    if share < GAP_MIN_SHARE or idle < GAP_MIN_US * 1e3:
        return []
    rows = [ctx.evidence(row, v, f"GPU idle {_us(gap)} before this")
            for v, _, _, row, gap in stats if row >= 0]
    return [Finding(
        id="gpu-idle-gaps", severity="low", region=ctx.region,
        instances=tuple(v.index for v, i, s, _, _ in stats if s and i / s >= GAP_MIN_SHARE),
        title=f"GPU idle {100 * share:.0f}% of the region's GPU span ({_us(idle)} per instance)",
        detail="the GPU waits between this region's kernels for the host to launch the next",
        evidence=_limit(rows),
        suggestion="fuse the small kernels (torch.compile) or capture the region in a CUDA "
                   "graph; look for host work between launches",
    )]


def odd_instances(ctx: RegionContext) -> list[Finding]:
    """Instances with another GPU event sequence, or a time far from the median."""
    if len(ctx.views) < 3:
        return []
    t = ctx.trace
    found: list[Finding] = []
    if ctx.has_gpu:
        sigs = [tuple(t.name(lc.gpu_row) for lc in v.launches) for v in ctx.views]
        common, _ = Counter(sigs).most_common(1)[0]
        rows, hit = [], []
        for v, sig in zip(ctx.views, sigs, strict=True):
            if sig == common:
                continue
            hit.append(v.index)
            k = next((i for i, (a, b) in enumerate(zip(sig, common, strict=False)) if a != b),
                     min(len(sig), len(common)))
            row = v.launches[k].gpu_row if k < len(v.launches) else v.row
            rows.append(ctx.evidence(row, v, f"{len(sig)} GPU events, most instances have "
                                               f"{len(common)}"))
        if hit:
            found.append(Finding(
                id="odd-instance", severity="medium", region=ctx.region, instances=tuple(hit),
                title=f"{len(hit)} instance(s) ran another kernel sequence",
                detail="most instances launch the same GPU events; these differ (warm-up, "
                       "autotuning, a recompile or a data-dependent path)",
                evidence=_limit(rows),
                suggestion="profile after more warm-up steps, or look at what differs",
            ))
    basis = "GPU" if ctx.has_gpu else "CPU"
    times = [v.device_ns(t) if ctx.has_gpu else v.cpu_ns for v in ctx.views]
    median = statistics.median(times)
    far = [(v, x) for v, x in zip(ctx.views, times, strict=True)
           if abs(x - median) > max(ODD_FRACTION * median, ODD_MIN_US * 1e3)]
    if far:
        found.append(Finding(
            id="odd-instance", severity="medium", region=ctx.region,
            instances=tuple(v.index for v, _ in far),
            title=f"{len(far)} instance(s) with a {basis} time far from the median "
                  f"({_us(median)})",
            detail=", ".join(f"#{v.index}: {_us(x)}" for v, x in far),
            evidence=_limit([ctx.evidence(v.row, v, f"{basis} {_us(x)} vs median {_us(median)}")
                             for v, x in far]),
            suggestion="exclude warm-up instances (profiler schedule warmup) and check for "
                       "contention or clock changes",
        ))
    return found


RULES: tuple[Rule, ...] = (memcpy_out_of_place, fp32_upcast, mask_rebuilt, sync_in_region,
                           launch_bound, gpu_idle_gaps, odd_instances)
"""Every rule, in the order findings are reported (then sorted by severity)."""
