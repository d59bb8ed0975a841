"""The rules behind ``findings`` about what a region runs: copies, dtypes, masks.

Each rule reads one region (``finding_types.RegionContext``) and returns its
findings; kept apart from the driver (``findings``) so each is a short function
that can be read, and tested, on its own.  Rules look only at what the trace
records: kernel and op names, ``Input type``/``Concrete Inputs`` args
(``record_shapes=True``), launch chains and times.  The rules about how the
region's time goes are in ``finding_timing``.
"""

from __future__ import annotations

import re

import numpy as np

from profiling.analysis.finding_types import EvidenceRow, Finding, RegionContext
from profiling.analysis.launch_chain import Launch
from profiling.analysis.op_dtypes import COMPUTE_OPS, FAMILIES, dtype_from_types
from profiling.analysis.regions import RegionInstance
from profiling.trace.model import Kind, Trace

MAX_EVIDENCE = 12
"""Evidence rows kept per finding (the first instance's, then the others')."""

_FP32_KERNEL = re.compile(r"f32f32|sgemm|s1688gemm|tf32|_fp32_|gemm_f32", re.IGNORECASE)
_MASK_BUILD = frozenset({"aten::triu", "aten::tril", "aten::triu_", "aten::tril_"})
_MASK_HELPERS = _MASK_BUILD | frozenset({
    "aten::ones", "aten::full", "aten::zeros", "aten::fill_", "aten::where", "aten::arange",
    "aten::scalar_tensor", "aten::new_full", "aten::new_ones", "aten::logical_not"})
_MATH_BACKEND = ("aten::_scaled_dot_product_attention_math",
                 "aten::_scaled_dot_product_attention_math_for_mps")
"""The SDPA math backend's ops: named in a finding only when the evidence ran under one."""
_MASK_KERNEL = re.compile(r"triu_tril|\btri[ul]_", re.IGNORECASE)
_COPY_OPS = frozenset({"aten::clone", "aten::copy_", "aten::contiguous", "aten::to",
                       "aten::_to_copy", "aten::empty_like"})


def input_dtype_from_ops(trace: Trace, inst: RegionInstance) -> str | None:
    """The dtype of the first op in the instance that names one (its inputs' dtype)."""
    for row in inst.op_rows(trace).tolist()[:64]:
        family = dtype_from_types(trace.args(row).get("Input type"))
        if family:
            return family
    return None


def limit(rows: list[EvidenceRow]) -> tuple[EvidenceRow, ...]:
    """The evidence kept for one finding (the first ``MAX_EVIDENCE`` rows)."""
    return tuple(rows[:MAX_EVIDENCE])


def _gpu_evidence(ctx: RegionContext, pairs: list[tuple[RegionInstance, Launch]],
                  note: str = "") -> list[EvidenceRow]:
    return [ctx.evidence(lc.gpu_row, v, note, lc.chain) for v, lc in pairs]


def memcpy_out_of_place(ctx: RegionContext) -> list[Finding]:
    """A Memcpy in the region; named after the out-of-place op that caused it, if any."""
    t = ctx.trace
    pairs = [(v, lc) for v in ctx.instances for lc in ctx.launches(v)
             if int(t.kind[lc.gpu_row]) == int(Kind.MEMCPY)]
    if not pairs:
        return []
    culprit, copier = None, None
    for view, launch in pairs:
        culprit, copier = _out_of_place_op(ctx, view, launch)
        if culprit:
            break
    per = len(pairs) / len(ctx.instances)
    instances = tuple(sorted({v.index for v, _ in pairs}))
    kinds = sorted({t.name(lc.gpu_row) for _, lc in pairs})
    if culprit:
        how = f"copies the tensor ({copier})" if copier else "copies the tensor"
        return [Finding(
            id="memcpy-out-of-place", severity="high", region=ctx.region, instances=instances,
            title=f"{culprit} copies its input ({kinds[0]}) {_in_instances(ctx, instances)}",
            detail=f"{per:g} Memcpy per instance: {culprit} {how}, then runs {culprit}_ on "
                   "the copy",
            evidence=limit(_gpu_evidence(ctx, pairs[:MAX_EVIDENCE])),
            suggestion=f"if nothing reads the tensor {culprit} takes after the call (the "
                       "trace records no tensor identities: check the code), use the in-place "
                       f"{culprit}_ (under torch.no_grad() if autograd records the region): "
                       "the copy is then pure waste",
        )]
    host = any("HtoD" in k or "DtoH" in k or "Host" in k for k in kinds)
    return [Finding(
        id="memcpy-in-region", severity="medium", region=ctx.region, instances=instances,
        title=f"{per:g} Memcpy per instance inside {ctx.region} ({', '.join(kinds)})",
        detail="launched by " + (" > ".join(t.name(r) for r in pairs[0][1].chain) or "?"),
        evidence=limit(_gpu_evidence(ctx, pairs[:MAX_EVIDENCE])),
        suggestion="move host tensors to the device once, outside the region" if host else
        "check that the copy is needed (a .contiguous(), .clone() or dtype change)",
    )]


def _in_instances(ctx: RegionContext, instances: tuple[int, ...]) -> str:
    """``in every instance`` or ``in 2 of 3 instances``: what the evidence covers."""
    n = len(ctx.instances)
    return "in every instance" if len(instances) == n else f"in {len(instances)} of {n} instances"


def _out_of_place_op(ctx: RegionContext, inst: RegionInstance,
                     launch: Launch) -> tuple[str | None, str | None]:
    """(``aten::foo``, the copy op under it) when the copy sits under ``aten::foo`` and
    ``aten::foo_`` runs inside it; (None, None) otherwise."""
    trace = ctx.trace
    for i, op in enumerate(launch.op_chain):
        name = trace.name(op)
        if name.endswith("_") or name in _COPY_OPS or not name.startswith("aten::"):
            continue
        start, end = int(trace.ts_ns[op]), int(trace.ts_ns[op] + trace.dur_ns[op])
        inplace = trace.string_ids(name + "_")
        if inplace is None:
            continue
        ops = ctx.op_rows(inst)
        inside = ops[(trace.name_id[ops] == inplace) & (trace.ts_ns[ops] >= start)
                     & (trace.ts_ns[ops] + trace.dur_ns[ops] <= end)]
        if inside.size:
            copier = next((trace.name(c) for c in launch.op_chain[i + 1:]
                           if trace.name(c) in _COPY_OPS), None)
            return name, copier
    return None, None


def _ids(trace: Trace, names: frozenset[str] | tuple[str, ...]) -> set[int]:
    """Interned ids of the names that occur in the trace."""
    return {i for n in names if (i := trace.string_ids(n)) is not None}


def _matching(ctx: RegionContext, pattern: re.Pattern[str]) -> set[int]:
    """Name ids of the region's GPU events that match ``pattern`` (each distinct name once)."""
    trace = ctx.trace
    rows = [ctx.gpu_rows(v) for v in ctx.instances]
    if not any(r.size for r in rows):
        return set()
    ids = np.unique(trace.name_id[np.concatenate(rows)]).tolist()
    return {i for i in ids if pattern.search(trace.strings[i])}


def fp32_upcast(ctx: RegionContext) -> list[Finding]:
    """fp32 GEMM/softmax in a region whose inputs are bf16 or fp16.

    The ops' input dtypes come from ``AnalysedTrace.op_dtypes`` (every compute or
    cast op's args read once per trace, stored with the index), and an instance's
    compute ops are looked at through its launch chains, which lie inside it."""
    if ctx.input_dtype not in ("bf16", "fp16"):
        return []
    t = ctx.trace
    rows: list[EvidenceRow] = []
    hit: set[int] = set()
    seen: dict[str, set[str]] = {"fp32": set(), "cast": set(), "math": set()}
    fp32_kernels = _matching(ctx, _FP32_KERNEL)
    fp32_rows, cast_rows = _fp32_and_cast_ops(ctx)
    math_ids = _ids(t, _MATH_BACKEND)
    name_id = np.asarray(t.name_id)
    for v in ctx.instances:
        first = not hit
        launches = ctx.launches(v)
        for lc in launches:
            chain = lc.op_chain
            cast = cast_rows.intersection(chain)
            if int(name_id[lc.gpu_row]) in fp32_kernels or not fp32_rows.isdisjoint(chain):
                hit.add(v.index)
                seen["fp32"].add(t.name(lc.gpu_row))
            elif not cast:
                continue
            seen["cast"].update(t.name(r) for r in cast)
            seen["math"].update(t.name(r) for r in chain if int(name_id[r]) in math_ids)
            if first:
                note = f"cast {ctx.input_dtype} -> fp32" if cast else "fp32"
                rows.append(ctx.evidence(lc.gpu_row, v, note, lc.chain))
        if launches:
            continue
        ops = ctx.op_rows(v)
        fp32_ops = fp32_rows.intersection(ops.tolist())
        if fp32_ops:  # CPU trace: the ops are the evidence
            hit.add(v.index)
            seen["fp32"].update(t.name(r) for r in fp32_ops)
            seen["math"].update(t.name(r) for r in ops.tolist() if int(t.name_id[r]) in math_ids
                                and any(_encloses(t, r, f) for f in fp32_ops))
            if first:
                rows += [ctx.evidence(r, v, "fp32 inputs") for r in sorted(fp32_ops)]
    if not hit:
        return []
    return [_upcast_finding(ctx, tuple(sorted(hit)), rows, seen)]


def _fp32_and_cast_ops(ctx: RegionContext) -> tuple[set[int], set[int]]:
    """The trace's compute ops with fp32 inputs, and its casts bf16/fp16 -> fp32."""
    t, dt = ctx.trace, ctx.analysed.op_dtypes
    compute = np.isin(t.name_id[dt.rows], list(_ids(t, COMPUTE_OPS)))
    fp32 = compute & (dt.family == FAMILIES.index("fp32"))
    return set(dt.rows[fp32].tolist()), set(dt.rows[dt.upcast & ~compute].tolist())


def _upcast_finding(ctx: RegionContext, hit: tuple[int, ...], rows: list[EvidenceRow],
                    seen: dict[str, set[str]]) -> Finding:
    """The fp32-upcast finding, each clause backed by what the rule saw: the fp32
    kernels (or ops) by name, the casts, and the math backend only when the fp32
    work ran under it."""
    dtype = ctx.input_dtype
    what = _names(seen["fp32"], kernels=bool(ctx.has_gpu))
    detail = f"inputs are {dtype}, but {what} run in fp32"
    if seen["math"]:
        detail += (f", under {_names(seen['math'])} (the SDPA math backend"
                   + (", which casts q, k and v to fp32)" if seen["cast"] else ")"))
        suggestion = (f"use a fused SDPA backend (flash, efficient or cuDNN) that keeps {dtype}, "
                      f"or keep the math path in {dtype} "
                      "(torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True))")
    else:
        if seen["cast"]:
            detail += f", after {_names(seen['cast'])} casts {dtype} to fp32"
        suggestion = (f"find where the tensors become fp32 (.float(), an fp32 weight or buffer, "
                      f"autocast turned off) and keep the computation in {dtype}")
    return Finding(
        id="fp32-upcast", severity="high", region=ctx.region, instances=hit,
        title=f"fp32 kernels in a {dtype} region (upcast)",
        detail=detail + ": fp32 runs at a fraction of the tensor cores' "
               f"{dtype} rate",
        evidence=limit(rows),
        suggestion=suggestion,
    )


def short_kernel(name: str) -> str:
    """A kernel's name for a sentence: no ``void``, namespaces or template arguments
    (``at::native::triu_tril_kernel``), at most 48 characters."""
    text = name.removeprefix("void ").replace("(anonymous namespace)::", "")
    cut = min((i for i in (text.find("<"), text.find("(")) if i > 0), default=len(text))
    text = text[:cut]
    return text if len(text) <= 48 else text[:47] + "…"


def _names(names: set[str], most: int = 3, kernels: bool = False) -> str:
    """Up to ``most`` names (kernels shortened), then how many more."""
    # fp32 GEMMs first: the names that show the upcast best
    unique = sorted({short_kernel(n) for n in names} if kernels else names,
                    key=lambda n: (not _FP32_KERNEL.search(n), n))
    shown = unique[:most]
    more = len(unique) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _encloses(trace: Trace, outer: int, inner: int) -> bool:
    """``outer`` spans ``inner`` on the same lane (an op around another)."""
    return (int(trace.lane[outer]) == int(trace.lane[inner])
            and int(trace.ts_ns[outer]) <= int(trace.ts_ns[inner])
            and int(trace.ts_ns[outer] + trace.dur_ns[outer])
            >= int(trace.ts_ns[inner] + trace.dur_ns[inner]) and outer != inner)


def mask_rebuilt(ctx: RegionContext) -> list[Finding]:
    """triu/tril inside the region: a (triangular) mask is built again in each instance."""
    t = ctx.trace
    rows: list[EvidenceRow] = []
    hit: set[int] = set()
    build_ids, kernel_ids = list(_ids(t, _MASK_BUILD)), _matching(ctx, _MASK_KERNEL)
    parent: tuple[int, ...] = ()
    built: set[int] = set()  # name ids of the triu/tril ops found
    helpers: set[str] = set()  # the ops that make the mask (ones, tril, where, ...)
    for k in _mask_hits(ctx, build_ids, kernel_ids):  # the instances to look at closely
        v = ctx.instances[k]
        ops = ctx.op_rows(v)
        launches = ctx.launches(v)
        builders = ops[np.isin(t.name_id[ops], build_ids)].tolist()
        kernels = [lc for lc in launches if int(t.name_id[lc.gpu_row]) in kernel_ids]
        if not builders and not kernels:
            continue
        built.update(int(t.name_id[r]) for r in builders)
        hit.add(v.index)
        if len(hit) > 1:
            continue  # evidence from the first instance is enough to jump to
        parent = _parent_chain(t, ops, builders, kernels)
        if launches:
            for lc in launches:
                chain = lc.op_chain
                if chain[: len(parent)] == parent and len(chain) > len(parent) and \
                        t.name(chain[len(parent)]) in _MASK_HELPERS:
                    rows.append(ctx.evidence(lc.gpu_row, v, "mask", lc.chain))
                    helpers.add(t.name(chain[len(parent)]))
        else:
            depth = len(parent)
            found = [r for r in ops.tolist()
                     if t.name(r) in _MASK_HELPERS and _depth_in(t, ops, r) == depth]
            rows += [ctx.evidence(r, v, "mask") for r in found]
            helpers.update(t.name(r) for r in found)
    if not hit:
        return []
    builder_names = {t.strings[i] for i in (built or kernel_ids)}
    by_math = any(t.name(op) in _MATH_BACKEND for op in parent)
    return [_mask_finding(ctx, tuple(sorted(hit)), rows, helpers | builder_names, by_math)]


def _mask_hits(ctx: RegionContext, build_ids: list[int], kernel_ids: set[int]) -> list[int]:
    """Positions of the instances with a mask-building op or kernel, found with one
    mask over every instance's rows (the rule then reads only those)."""
    t = ctx.trace
    cpu = [ctx.cpu_rows(v) for v in ctx.instances]
    gpu = [ctx.gpu_rows(v) for v in ctx.instances]
    hits = np.zeros(len(ctx.instances), dtype=bool)
    for lists, ids, kind in ((cpu, build_ids, int(Kind.CPU_OP)), (gpu, list(kernel_ids), -1)):
        if not ids or not lists:
            continue
        rows = np.concatenate(lists).astype(np.int64)
        owner = np.repeat(np.arange(len(lists)), [r.shape[0] for r in lists])
        found = np.isin(t.name_id[rows], ids)
        if kind >= 0:
            found &= t.kind[rows] == kind
        hits[owner[found]] = True
    return np.flatnonzero(hits).tolist()


def _mask_finding(ctx: RegionContext, hit: tuple[int, ...], rows: list[EvidenceRow],
                  ops: set[str], by_math: bool) -> Finding:
    """The mask-rebuilt finding, naming the ops and kernels the rule found; the math
    backend is named only when the mask is built under it."""
    kernels = {e.name for e in rows if e.kind == "kernel"}
    detail = f"{_names(ops, most=5)} build the mask {_in_instances(ctx, hit)}"
    if kernels:
        detail += f" (kernels: {_names(kernels, kernels=True)})"
    if by_math:
        detail += ", inside the SDPA math backend (its is_causal=True path)"
        suggestion = ("a fused SDPA backend (flash, efficient, cuDNN) applies is_causal=True "
                      "with no mask tensor")
    else:
        suggestion = ("build the mask once outside the forward; if it is the causal mask, "
                      "pass is_causal=True to a fused SDPA backend (flash, efficient, cuDNN), "
                      "which needs no mask")
    return Finding(
        id="mask-rebuilt", severity="medium", region=ctx.region, instances=hit,
        title=f"a triangular mask is built inside the region "
              f"({_names({o for o in ops if o in _MASK_BUILD} or ops)}) "
              f"{_in_instances(ctx, hit)}",
        detail=detail,
        evidence=limit(rows),
        suggestion=suggestion,
    )


def _depth_in(trace: Trace, ops: np.ndarray, row: int) -> int:
    """How many of the instance's ops (``ops``) enclose ``row``."""
    ts, end = int(trace.ts_ns[row]), int(trace.ts_ns[row] + trace.dur_ns[row])
    return int(((trace.ts_ns[ops] <= ts) & (trace.ts_ns[ops] + trace.dur_ns[ops] >= end)
                & (ops != row)).sum())


def _parent_chain(trace: Trace, ops: np.ndarray, builders: list[int],
                  kernels: list[Launch]) -> tuple[int, ...]:
    """The ops around the mask builder (e.g. sdpa > _scaled_dot_product_attention_math)."""
    if kernels:
        chain = kernels[0].op_chain
        for i, op in enumerate(chain):
            if trace.name(op) in _MASK_BUILD:
                return chain[:i]
        return chain[:-1]
    row = builders[0]
    ts, end = int(trace.ts_ns[row]), int(trace.ts_ns[row] + trace.dur_ns[row])
    around = ops[(trace.ts_ns[ops] <= ts) & (trace.ts_ns[ops] + trace.dur_ns[ops] >= end)
                 & (ops != row)]
    return tuple(int(r) for r in around[np.argsort(trace.ts_ns[around], kind="stable")])
