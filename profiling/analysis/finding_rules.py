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

from profiling.analysis.finding_batch import (
    any_inside,
    by_id,
    chain_ops,
    cpu_ops,
    index_of,
    names_of,
    present_ids,
)
from profiling.analysis.finding_types import EvidenceRow, Finding, RegionContext
from profiling.analysis.launch_chain import Launch
from profiling.analysis.ranges import concat_ranges, distinct, range_owner
from profiling.analysis.regions import RegionInstance
from profiling.trace.model import Kind, Trace
from profiling.trace.op_inputs import COMPUTE_OPS, FAMILIES, dtype_from_types

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


def _gpu_evidence(ctx: RegionContext, entries: list[int], note: str = "") -> list[EvidenceRow]:
    """Evidence rows of entries of ``ctx.batch`` (a GPU event and its chain each)."""
    b, owner = ctx.batch, ctx.gpu_owner
    return [ctx.evidence(int(b.rows[j]), ctx.instances[int(owner[j])], note, b.chain_of(j))
            for j in entries]


def memcpy_out_of_place(ctx: RegionContext) -> list[Finding]:
    """A Memcpy in the region; named after the out-of-place op that caused it, if any."""
    t, b = ctx.trace, ctx.batch
    pairs = np.flatnonzero(t.kind[b.rows] == int(Kind.MEMCPY))  # entries, instance order
    if not pairs.shape[0]:
        return []
    culprit, copier = _out_of_place(ctx, pairs)
    per = pairs.shape[0] / len(ctx.instances)
    instances = tuple(sorted(set(index_of(ctx, distinct(ctx.gpu_owner[pairs]).tolist()))))
    kinds = sorted(names_of(t, b.rows[pairs]))
    shown = pairs[:MAX_EVIDENCE].tolist()
    if culprit:
        how = f"copies the tensor ({copier})" if copier else "copies the tensor"
        return [Finding(
            id="memcpy-out-of-place", severity="high", region=ctx.region, instances=instances,
            title=f"{culprit} copies its input ({kinds[0]}) {_in_instances(ctx, instances)}",
            detail=f"{per:g} Memcpy per instance: {culprit} {how}, then runs {culprit}_ on "
                   "the copy",
            evidence=limit(_gpu_evidence(ctx, shown)),
            suggestion=f"if nothing reads the tensor {culprit} takes after the call (the "
                       "trace records no tensor identities: check the code), use the in-place "
                       f"{culprit}_ (under torch.no_grad() if autograd records the region): "
                       "the copy is then pure waste",
        )]
    host = any("HtoD" in k or "DtoH" in k or "Host" in k for k in kinds)
    return [Finding(
        id="memcpy-in-region", severity="medium", region=ctx.region, instances=instances,
        title=f"{per:g} Memcpy per instance inside {ctx.region} ({', '.join(kinds)})",
        detail="launched by " + (" > ".join(t.name(r) for r in b.chain_of(int(pairs[0])))
                                 or "?"),
        evidence=limit(_gpu_evidence(ctx, shown)),
        suggestion="move host tensors to the device once, outside the region" if host else
        "check that the copy is needed (a .contiguous(), .clone() or dtype change)",
    )]


def _in_instances(ctx: RegionContext, instances: tuple[int, ...]) -> str:
    """``in every instance`` or ``in 2 of 3 instances``: what the evidence covers."""
    n = len(ctx.instances)
    return "in every instance" if len(instances) == n else f"in {len(instances)} of {n} instances"


def _out_of_place(ctx: RegionContext, pairs: np.ndarray) -> tuple[str | None, str | None]:
    """(``aten::foo``, the copy op under it) for the first Memcpy entry (of ``pairs``)
    whose chain has an op ``aten::foo`` with ``aten::foo_`` running inside it in the
    instance (the outermost such op of that chain); (None, None) when none has.
    Every chain op of every entry is tested at once (``any_inside``)."""
    t = ctx.trace
    entry, level, op = chain_ops(ctx, pairs)
    inplace = by_id(t, t.name_id[op], lambda i: _inplace_id(t, t.strings[i]))
    start = np.asarray(t.ts_ns[op], dtype=np.int64)
    found = np.flatnonzero(any_inside(ctx, ctx.gpu_owner[entry], inplace, start,
                                      start + t.dur_ns[op]))
    if not found.shape[0]:
        return None, None
    j, i = int(entry[found[0]]), int(level[found[0]])
    chain = ctx.batch.chain_of(j)[:-1]
    copier = next((t.name(c) for c in chain[i + 1:] if t.name(c) in _COPY_OPS), None)
    return t.name(chain[i]), copier


def _inplace_id(trace: Trace, name: str) -> int:
    """The id of ``name + "_"`` for an out-of-place aten op whose in-place form is in the
    trace (not a copy op, not in-place itself), else -1."""
    if name.endswith("_") or name in _COPY_OPS or not name.startswith("aten::"):
        return -1
    found = trace.string_ids(name + "_")
    return -1 if found is None else found


def _ids(trace: Trace, names: frozenset[str] | tuple[str, ...]) -> set[int]:
    """Interned ids of the names that occur in the trace."""
    return {i for n in names if (i := trace.string_ids(n)) is not None}


def _matching(ctx: RegionContext, pattern: re.Pattern[str]) -> set[int]:
    """Name ids of the region's GPU events that match ``pattern`` (each distinct name once)."""
    trace, rows = ctx.trace, ctx.batch.rows
    if not rows.shape[0]:
        return set()
    ids = present_ids(trace, trace.name_id[rows]).tolist()
    return {i for i in ids if pattern.search(trace.strings[i])}


def fp32_upcast(ctx: RegionContext) -> list[Finding]:
    """fp32 GEMM/softmax in a region whose inputs are bf16 or fp16.

    The ops' input dtypes come from ``AnalysedTrace.op_dtypes`` (every compute or
    cast op's args read once per trace, stored with the index), and an instance's
    compute ops are looked at through its launch chains, which lie inside it: every
    instance's at once (``finding_batch``); an instance with no GPU event (a CPU
    trace) is judged by its own ops."""
    if ctx.input_dtype not in ("bf16", "fp16"):
        return []
    t, b, owner = ctx.trace, ctx.batch, ctx.gpu_owner
    seen: dict[str, set[str]] = {"fp32": set(), "cast": set(), "math": set()}
    fp32_rows, cast_rows = _fp32_and_cast_ops(ctx)
    math_ids = list(_ids(t, _MATH_BACKEND))
    n = b.rows.shape[0]
    entry, _, op = chain_ops(ctx)
    fp32_entry = np.isin(t.name_id[b.rows], list(_matching(ctx, _FP32_KERNEL)))
    fp32_entry |= np.bincount(entry[np.isin(op, fp32_rows)], minlength=n) > 0
    cast_op = np.isin(op, cast_rows)
    cast_entry = np.bincount(entry[cast_op], minlength=n) > 0
    relevant = fp32_entry | cast_entry
    seen["fp32"] = names_of(t, b.rows[fp32_entry])
    seen["cast"] = names_of(t, op[cast_op & relevant[entry]])
    seen["math"] = names_of(t, op[relevant[entry] & np.isin(t.name_id[op], math_ids)])
    cpu_rows, cpu_owner = _cpu_fp32_ops(ctx, fp32_rows, math_ids, seen)
    hits = distinct(np.concatenate((owner[fp32_entry], cpu_owner)))
    if not hits.shape[0]:
        return []
    first = int(hits[0])  # evidence from the instances up to the first hit one
    gpu = np.flatnonzero(relevant & (owner <= first))[:MAX_EVIDENCE].tolist()
    cpu = np.flatnonzero(cpu_owner <= first)
    items = sorted([(int(owner[j]), 0, j) for j in gpu]
                   + [(int(cpu_owner[i]), int(cpu_rows[i]), -1) for i in cpu.tolist()])
    rows = [ctx.evidence(int(b.rows[j]), ctx.instances[k],
                         f"cast {ctx.input_dtype} -> fp32" if cast_entry[j] else "fp32",
                         b.chain_of(j)) if j >= 0
            else ctx.evidence(row, ctx.instances[k], "fp32 inputs")
            for k, row, j in items[:MAX_EVIDENCE]]
    hit = tuple(sorted(set(index_of(ctx, hits.tolist()))))
    return [_upcast_finding(ctx, hit, rows, seen)]


def _cpu_fp32_ops(ctx: RegionContext, fp32_rows: np.ndarray, math_ids: list[int],
                  seen: dict[str, set[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, instance position) of the fp32 compute ops of the instances with no GPU
    event (a CPU trace: the ops are the evidence), sorted; their names go into
    ``seen["fp32"]``, and the math-backend ops around them into ``seen["math"]``."""
    t = ctx.trace
    no_gpu = np.diff(ctx.batch.inst_ptr) == 0
    rows, owner = cpu_ops(ctx, distinct(t.name_id[fp32_rows]))
    keep = no_gpu[owner] & np.isin(rows, fp32_rows)
    rows, owner = rows[keep], owner[keep]
    order = np.lexsort((rows, owner))
    rows, owner = rows[order], owner[order]
    seen["fp32"] |= names_of(t, rows)
    math, math_owner = cpu_ops(ctx, math_ids)
    keep = np.isin(math_owner, owner)
    math, math_owner = math[keep], math_owner[keep]
    if math.shape[0]:  # each math op against each fp32 op of its instance
        lo = np.searchsorted(owner, math_owner, side="left")
        hi = np.searchsorted(owner, math_owner, side="right")
        outer, inner = math[range_owner(lo, hi)], rows[concat_ranges(lo, hi)]
        around = ((t.lane[outer] == t.lane[inner]) & (t.ts_ns[outer] <= t.ts_ns[inner])
                  & (t.ts_ns[outer] + t.dur_ns[outer] >= t.ts_ns[inner] + t.dur_ns[inner])
                  & (outer != inner))
        seen["math"] |= names_of(t, outer[around])
    return rows, owner


def _fp32_and_cast_ops(ctx: RegionContext) -> tuple[np.ndarray, np.ndarray]:
    """The trace's compute ops with fp32 inputs, and its casts bf16/fp16 -> fp32 (rows)."""
    t, dt = ctx.trace, ctx.analysed.op_dtypes
    compute = np.isin(t.name_id[dt.rows], list(_ids(t, COMPUTE_OPS)))
    fp32 = compute & (dt.family == FAMILIES.index("fp32"))
    return np.asarray(dt.rows[fp32], dtype=np.int64), np.asarray(dt.rows[dt.upcast & ~compute],
                                                                 dtype=np.int64)


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


def mask_rebuilt(ctx: RegionContext) -> list[Finding]:
    """triu/tril inside the region: a (triangular) mask is built again in each instance.

    The instances with a triu/tril op or kernel are found for all at once; only the
    first is read closely, for the evidence (enough to jump to)."""
    t = ctx.trace
    rows: list[EvidenceRow] = []
    build_ids, kernel_ids = list(_ids(t, _MASK_BUILD)), _matching(ctx, _MASK_KERNEL)
    builders_all, builder_owner = cpu_ops(ctx, build_ids)
    kernel_owner = ctx.gpu_owner[np.isin(t.name_id[ctx.batch.rows], list(kernel_ids))]
    hits = distinct(np.concatenate((builder_owner, kernel_owner))).tolist()
    if not hits:
        return []
    built = set(t.name_id[builders_all].tolist())  # name ids of the triu/tril ops found
    helpers: set[str] = set()  # the ops that make the mask (ones, tril, where, ...)
    v = ctx.instances[hits[0]]
    ops = ctx.op_rows(v)
    launches = ctx.launches(v)
    builders = ops[np.isin(t.name_id[ops], build_ids)].tolist()
    kernels = [lc for lc in launches if int(t.name_id[lc.gpu_row]) in kernel_ids]
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
    builder_names = {t.strings[i] for i in (built or kernel_ids)}
    by_math = any(t.name(op) in _MATH_BACKEND for op in parent)
    hit = tuple(sorted(set(index_of(ctx, hits))))
    return [_mask_finding(ctx, hit, rows, helpers | builder_names, by_math)]


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
