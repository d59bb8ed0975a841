"""The findings rules as they were before ``finding_batch``: one Python pass per
instance, over ``Launch`` tuples each walked by ``launch_chain`` (``BruteContext``).
The oracle of ``tests/test_findings_batch.py``: the vectorised rules must give the
same findings, evidence and text."""
# ruff: noqa: E501

from __future__ import annotations

import re

import numpy as np

from profiling.analysis.finding_rules import (
    _COPY_OPS,
    _FP32_KERNEL,
    _MASK_BUILD,
    _MASK_HELPERS,
    _MASK_KERNEL,
    _MATH_BACKEND,
    MAX_EVIDENCE,
    _depth_in,
    _ids,
    _in_instances,
    _mask_finding,
    _parent_chain,
    _upcast_finding,
    limit,
)
from profiling.analysis.finding_types import EvidenceRow, Finding, RegionContext
from profiling.analysis.launch_chain import Launch, launch_chain
from profiling.analysis.regions import RegionInstance
from profiling.trace.model import Kind, Trace
from profiling.trace.op_inputs import COMPUTE_OPS, FAMILIES


class BruteContext(RegionContext):
    """A ``RegionContext`` that answers each instance on its own: its rows from the
    instance, each GPU event's chain walked up the op tree by ``launch_chain``."""

    def cpu_rows(self, inst: RegionInstance) -> np.ndarray:
        return inst.cpu_rows(self.trace)

    def gpu_rows(self, inst: RegionInstance) -> np.ndarray:
        return inst.gpu_rows(self.trace, self.analysed.links)

    def launches(self, inst: RegionInstance) -> tuple[Launch, ...]:
        a = self.analysed
        return tuple(Launch(r, launch_chain(a.trace, a.links, a.ops, r, inst.row))
                     for r in self.gpu_rows(inst).tolist())


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
