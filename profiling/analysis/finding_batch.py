"""The findings rules' questions, asked of every instance of a region at once.

A rule used to walk each instance's launches in Python (``Launch`` tuples, a
name look-up per op): about 50 microseconds an instance, seconds for the 38,400
``attn_fwd`` instances of a 1 GB trace.  Here the same questions are asked of the
region's launch batch (``RegionContext.batch``: every instance's GPU rows and
their chains, one CSR table) and its CPU rows (``RegionContext.cpu_flat``) with
numpy, and Python runs only for what a finding shows (its first evidence rows,
the names it lists).  Each function gives what the per-instance loop it replaced
gave, in the same order; ``tests/test_findings_batch.py`` checks them against
those loops on handmade, sample and real traces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from profiling.analysis.finding_types import RegionContext
from profiling.analysis.ranges import concat_ranges, distinct, range_owner, unique_rows
from profiling.trace.model import Kind, Trace


def chain_ops(ctx: RegionContext, entries: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entry, level, op) of every op of every entry's ``Launch.op_chain`` (its chain
    without the last element, the call), in entry order, outermost op first; of
    ``entries`` only (ascending), when given."""
    b = ctx.batch
    if entries is None:
        entries = np.arange(b.rows.shape[0], dtype=np.int64)
    lo = b.chain_ptr[entries]
    hi = np.maximum(b.chain_ptr[entries + 1] - 1, lo)  # the call left out
    pos = concat_ranges(lo, hi)
    which = range_owner(lo, hi)
    return entries[which], pos - lo[which], np.asarray(b.chain[pos], dtype=np.int64)


def present_ids(trace: Trace, ids: np.ndarray) -> np.ndarray:
    """The distinct name ids among ``ids``, ascending: a presence table over the trace's
    strings (ids are small), one pass, no sort."""
    seen = np.zeros(len(trace.strings), dtype=bool)
    seen[np.asarray(ids, dtype=np.int64)] = True
    return np.flatnonzero(seen)


def by_id(trace: Trace, ids: np.ndarray, value: Callable[[int], object],
          dtype: type = np.int64) -> np.ndarray:
    """``value(id)`` of each of ``ids``, worked out once per distinct id and spread
    back through a table indexed by id."""
    ids = np.asarray(ids, dtype=np.int64)
    table: np.ndarray = np.zeros(len(trace.strings), dtype=dtype)
    for i in present_ids(trace, ids).tolist():
        table[i] = value(i)
    return table[ids]


def names_of(trace: Trace, rows: np.ndarray) -> set[str]:
    """The distinct names of ``rows`` (each distinct id looked up once)."""
    if rows.shape[0] == 0:
        return set()
    strings = trace.strings
    return {strings[i] for i in present_ids(trace, trace.name_id[rows]).tolist()}


def index_of(ctx: RegionContext, positions: Iterable[int]) -> list[int]:
    """``RegionInstance.index`` of the instances at ``positions`` of ``ctx.instances``."""
    from profiling.analysis.stored_regions import instance_column

    index = instance_column(ctx.instances, "index")
    return index[np.asarray(list(positions), dtype=np.int64)].tolist()


def name_flags(trace: Trace, ids: np.ndarray, test: Callable[[str], object]) -> np.ndarray:
    """``test(name)`` of each id in ``ids`` (each distinct id tested once)."""
    strings = trace.strings
    return by_id(trace, ids, lambda i: bool(test(strings[i])), np.bool_)


def cpu_ops(ctx: RegionContext, ids: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, instance position) of the instances' ``cpu_op`` rows named one of ``ids``."""
    t = ctx.trace
    rows, owner = ctx.cpu_flat[0], ctx.cpu_owner
    if not len(ids) or rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keep = np.isin(t.name_id[rows], np.asarray(ids, dtype=np.int64)) & (
        t.kind[rows] == int(Kind.CPU_OP))
    return np.asarray(rows[keep], dtype=np.int64), owner[keep]


def any_inside(ctx: RegionContext, owner: np.ndarray, name: np.ndarray, start: np.ndarray,
               end: np.ndarray) -> np.ndarray:
    """For each query (instance position, name id, [start, end]): whether an op of the
    instance (``RegionContext.op_rows``) with that name id lies within [start, end]."""
    t = ctx.trace
    out = np.zeros(owner.shape[0], dtype=bool)
    wanted = distinct(name[name >= 0])
    if owner.shape[0] == 0 or wanted.shape[0] == 0:
        return out
    rows, where = cpu_ops(ctx, wanted)
    if rows.shape[0] == 0:
        return out
    width = int(wanted.shape[0])
    group = where * width + np.searchsorted(wanted, t.name_id[rows])
    order = np.argsort(group, kind="stable")
    rows, group = rows[order], group[order]
    ok = name >= 0
    q = np.flatnonzero(ok)
    qgroup = owner[q] * width + np.searchsorted(wanted, name[q])
    lo = np.searchsorted(group, qgroup, side="left")
    hi = np.searchsorted(group, qgroup, side="right")
    cand = rows[concat_ranges(lo, hi)]
    which = q[range_owner(lo, hi)]
    inside = (t.ts_ns[cand] >= start[which]) & (t.ts_ns[cand] + t.dur_ns[cand] <= end[which])
    out[which[inside]] = True
    return out


def group_by_sequence(trace: Trace, rows: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """A code per instance such that two instances have the same code exactly when
    their GPU rows' names are the same sequence (instances grouped by length, each
    length's sequences compared as one matrix, so memory stays the rows' own)."""
    n = ptr.shape[0] - 1
    lengths = np.diff(ptr)
    ids = np.asarray(trace.name_id[rows], dtype=np.int64)
    if ids.shape[0]:  # one id per distinct name (a name interned twice is one name)
        first: dict[str, int] = {}
        strings = trace.strings
        ids = by_id(trace, ids, lambda i: first.setdefault(strings[i], i))
    code = np.zeros(n, dtype=np.int64)
    base = 0
    for length in distinct(lengths).tolist():
        members = np.flatnonzero(lengths == length)
        if length == 0:
            code[members] = base
            base += 1
            continue
        matrix = ids[concat_ranges(ptr[members], ptr[members] + length)].reshape(-1, length)
        inverse = unique_rows(matrix)[1]
        code[members] = base + inverse
        base += int(inverse.max()) + 1
    return code
