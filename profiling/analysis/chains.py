"""Launch chains of every GPU event at once, and of every instance of a region at once.

``launch_chain.launch_chain`` walks one GPU event's ops up the ``OpTree`` in
Python: a millisecond per region instance, 50 s for the 38,400 instances of a
1 GB trace.  Here the same chains are built with numpy over all events:

* ``launch_chains``: for every linked GPU event, all the ops around its launching
  call, innermost first (``Links.op``, then its parents), as one CSR table
  (``LaunchChains``).  It does not depend on any region, so it is computed once
  per trace and stored with the index (``analysis_store``).
* ``instance_launches``: for many region instances at once, each instance's GPU
  rows in GPU start order and each row's chain *inside* that instance, cut
  exactly where ``launch_chain(..., within=instance.row)`` stops: at the first op
  that is not inside the instance's CPU range on its thread (a profiler step's:
  on a thread of its process, ``step_scope``), or at the
  instance's own row (kept only for an op region, not an annotation or a step).

Both give the rows ``launch_chain`` gives, in its order (outermost op first,
then the runtime call); tests check them against it on every sample and real
trace.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from profiling.analysis.launch_chain import Launch
from profiling.analysis.links import Links, OpTree
from profiling.analysis.ranges import concat_ranges, distinct, range_owner
from profiling.analysis.regions import RegionInstance
from profiling.analysis.step_scope import scopes, step_rows
from profiling.analysis.stored_checks import check_ints, check_pointers, check_within
from profiling.analysis.stored_regions import instance_column
from profiling.trace.column_threads import in_threads, shares
from profiling.trace.model import Kind, Trace, narrow


@dataclass(frozen=True)
class LaunchChains:
    """All ops around each GPU event's launching call, innermost first.

    ``gpu`` holds the trace's GPU rows sorted by row (to look a row up with a
    binary search); the ops around ``gpu[i]``'s call are ``ops[ptr[i]:ptr[i+1]]``
    (empty for an orphan or a call outside any op)."""

    gpu: np.ndarray  # int64, ascending trace rows
    ptr: np.ndarray  # int64, len(gpu) + 1
    ops: np.ndarray  # int64 op rows, innermost first per event

    def spans(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi) into ``ops`` of each GPU row in ``rows``."""
        pos = np.searchsorted(self.gpu, rows)
        return self.ptr[pos], self.ptr[pos + 1]


def launch_chains(trace: Trace, links: Links, ops: OpTree,
                  rows: np.ndarray | None = None) -> LaunchChains:
    """Every GPU event's ops, climbing the op tree one level per step for all at once;
    of the GPU events ``rows`` only, when given (a region's: ``AnalysedTrace.launch_batch``
    on a trace whose chains are not computed yet climbs only from the rows it needs).
    Each event's chain is its own: many events are climbed in pieces, side by side."""
    gpu = distinct(np.asarray(rows, dtype=np.int64)) if rows is not None else \
        np.sort(links.gpu_rows).astype(np.int64)
    n = gpu.shape[0]
    if n == 0 or ops.rows.shape[0] == 0:
        return LaunchChains(gpu, np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    start = links.op[gpu]
    bounds = shares(np.ones(n, dtype=np.int8), PIECE_EVENTS)
    pieces = in_threads(*(partial(_climb, start[a:b], ops) for a, b in itertools.pairwise(bounds)),
                        rows=n)
    ptr, chain = _joined([p for p, _ in pieces], [c for _, c in pieces])
    return LaunchChains(gpu, ptr, chain)


PIECE_EVENTS = 1 << 15
"""GPU events (or chain entries) per piece, at least, that ``launch_chains`` and
``instance_launches`` hand to a thread."""


def _climb(start: np.ndarray, ops: OpTree) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, ops) of the chains that start at ops ``start`` (trace rows; -1: none)."""
    n = start.shape[0]
    parent = ops.nesting.parent
    # Levels: the innermost op (level 0), its parent (level 1), ...; one array per level.
    owner = np.flatnonzero(start >= 0)
    if owner.shape[0] == 0:  # no GPU event's call is inside an op: every chain is empty
        return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cur = np.searchsorted(ops.rows, start[owner])
    levels_owner, levels_op = [], []
    while owner.shape[0]:
        levels_owner.append(owner)
        levels_op.append(ops.rows[cur])
        up = parent[cur]
        keep = up >= 0
        owner, cur = owner[keep], up[keep]
    all_owner = np.concatenate(levels_owner)
    all_op = np.concatenate(levels_op)
    level = np.repeat(np.arange(len(levels_owner)), [o.shape[0] for o in levels_owner])
    order = np.lexsort((level, all_owner))
    counts = np.bincount(all_owner, minlength=n)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return ptr, all_op[order].astype(np.int64)


def _joined(ptrs: list[np.ndarray], values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """CSR tables of consecutive pieces as one: each piece's pointers moved past the
    values before it."""
    if len(ptrs) == 1:
        return ptrs[0], values[0]
    shift = np.cumsum([0] + [v.shape[0] for v in values[:-1]])
    ptr = np.concatenate([ptrs[0][:1]] + [p[1:] + s for p, s in zip(ptrs, shift, strict=True)])
    return ptr.astype(np.int64), np.concatenate(values)


@dataclass(frozen=True)
class InstanceLaunches:
    """GPU events of several region instances and their chains inside each.

    Instance ``k``'s GPU rows (GPU start order) are ``rows[inst_ptr[k]:inst_ptr[k+1]]``;
    the chain of entry ``j`` (outermost op first, then the runtime call, as
    ``launch_chain`` gives it; empty when the call is not in the trace) is
    ``chain[chain_ptr[j]:chain_ptr[j+1]]``."""

    inst_ptr: np.ndarray
    rows: np.ndarray
    chain_ptr: np.ndarray
    chain: np.ndarray

    def chain_of(self, j: int) -> tuple[int, ...]:
        return tuple(self.chain[int(self.chain_ptr[j]) : int(self.chain_ptr[j + 1])].tolist())

    def owner(self) -> np.ndarray:
        """The instance (position in the batch) of each entry of ``rows``."""
        return np.repeat(np.arange(self.inst_ptr.shape[0] - 1, dtype=np.int64),
                         np.diff(self.inst_ptr))


def batch_launches(batch: InstanceLaunches, k: int) -> tuple[Launch, ...]:
    """Instance ``k``'s entries of ``batch`` as ``Launch`` tuples (made on demand)."""
    a, b = int(batch.inst_ptr[k]), int(batch.inst_ptr[k + 1])
    if a == b:
        return ()
    cptr = batch.chain_ptr[a : b + 1].tolist()
    chain = batch.chain[cptr[0] : cptr[-1]].tolist()
    base = cptr[0]
    return tuple(Launch(row, tuple(chain[cptr[i] - base : cptr[i + 1] - base]))
                 for i, row in enumerate(batch.rows[a:b].tolist()))


def instance_gpu_rows(trace: Trace, links: Links,
                      instances: Sequence[RegionInstance]) -> tuple[np.ndarray, np.ndarray]:
    """(inst_ptr, rows): every instance's GPU rows in GPU start order (ties by lane),
    as ``RegionInstance.gpu_rows`` orders them, for all instances in one sort."""
    return _gpu_rows(trace, links, instance_column(instances, "launch_lo"),
                     instance_column(instances, "launch_hi"))


def _gpu_rows(trace: Trace, links: Links, lo: np.ndarray,
              hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``instance_gpu_rows`` of the instances whose launches are ``by_launch[lo:hi]``."""
    lengths = np.maximum(hi - lo, 0)
    inst_ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    rows = links.by_launch[concat_ranges(lo, hi)]
    owner = range_owner(lo, hi)
    order = np.lexsort((trace.lane[rows], trace.ts_ns[rows], owner))
    return inst_ptr, rows[order].astype(np.int64)


def instance_launches(trace: Trace, links: Links, chains: LaunchChains,
                      instances: Sequence[RegionInstance]) -> InstanceLaunches:
    """Each instance's GPU rows and their chains inside it (see the module doc).
    Each instance's are its own: many instances are done in pieces, side by side."""
    lo = instance_column(instances, "launch_lo")
    hi = instance_column(instances, "launch_hi")
    within = instance_column(instances, "row")
    launches = np.maximum(hi - lo, 0)  # each instance's GPU events: its share of the work
    pieces = in_threads(*(partial(_launches, trace, links, chains, lo[a:b], hi[a:b], within[a:b])
                          for a, b in itertools.pairwise(shares(launches, PIECE_EVENTS))),
                        rows=int(launches.sum()))
    if len(pieces) == 1:
        return pieces[0]
    inst_ptr, rows = _joined([p.inst_ptr for p in pieces], [p.rows for p in pieces])
    chain_ptr, chain = _joined([p.chain_ptr for p in pieces], [p.chain for p in pieces])
    return InstanceLaunches(inst_ptr, rows, chain_ptr, chain)


def _launches(trace: Trace, links: Links, chains: LaunchChains, launch_lo: np.ndarray,
              launch_hi: np.ndarray, within: np.ndarray) -> InstanceLaunches:
    """``instance_launches`` of the instances at trace rows ``within`` whose launches
    are ``by_launch[launch_lo:launch_hi]``."""
    inst_ptr, rows = _gpu_rows(trace, links, launch_lo, launch_hi)
    k = within.shape[0]
    owner = np.repeat(np.arange(k, dtype=np.int64), np.diff(inst_ptr))
    w_lane = trace.lane[within].astype(np.int64) if k else np.zeros(0, np.int64)
    w_start = trace.ts_ns[within] if k else np.zeros(0, np.int64)
    w_end = w_start + trace.dur_ns[within] if k else np.zeros(0, np.int64)
    steps = step_rows(trace, within)  # a step is never part of its own chains
    keeps = (trace.kind[within] == int(Kind.CPU_OP)) & ~steps if k else np.zeros(0, dtype=bool)

    lo, hi = chains.spans(rows) if rows.shape[0] else (np.zeros(0, np.int64),) * 2
    pos = concat_ranges(lo, hi)
    pair = range_owner(lo, hi)  # entry of ``rows`` each op belongs to
    op = chains.ops[pos]
    o = owner[pair]
    scope = scopes(trace, w_lane, steps)  # a step's ops: on any thread of its process
    inside = ((scopes(trace, trace.lane[op], steps[o]) == scope[o])
              & (trace.ts_ns[op] >= w_start[o]) & (trace.ts_ns[op] + trace.dur_ns[op] <= w_end[o]))
    is_within = op == within[o]
    bad = ~inside | is_within
    # bad ops before each op within its own chain (chains are contiguous runs of ``pair``)
    csum = np.cumsum(bad, dtype=np.int64)
    seg_start = np.concatenate(([0], np.cumsum(hi - lo)))[pair] if pair.shape[0] else pair
    before = csum - bad - np.where(seg_start > 0, csum[np.maximum(seg_start - 1, 0)], 0)
    keep = (before == 0) & (~bad | (is_within & keeps[o]))

    call = links.launch[rows]
    has_call = call >= 0
    kept_pair, kept_op = pair[keep], op[keep]
    # Chain of entry j: its kept ops outermost first, then the call.  The kept ops of
    # an entry are a run, innermost first: each goes to its mirrored place in the run.
    n_kept = np.bincount(kept_pair, minlength=rows.shape[0])
    counts = n_kept + has_call
    chain_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    run_start = np.cumsum(n_kept) - n_kept
    rank = np.arange(kept_pair.shape[0]) - run_start[kept_pair]
    chain = np.empty(int(chain_ptr[-1]), dtype=np.int64)
    chain[chain_ptr[kept_pair] + n_kept[kept_pair] - 1 - rank] = kept_op
    chain[(chain_ptr[:-1] + n_kept)[has_call]] = call[has_call]
    return InstanceLaunches(inst_ptr, rows, chain_ptr, chain)


def encode_launches(batch: InstanceLaunches) -> tuple[dict[str, np.ndarray], None]:
    """A batch's arrays, to keep with the index (``AnalysedTrace.launch_batch``)."""
    return {"inst_ptr": narrow(batch.inst_ptr), "rows": narrow(batch.rows),
            "chain_ptr": narrow(batch.chain_ptr), "chain": narrow(batch.chain)}, None


def decode_launches(trace: Trace, arrays: dict[str, np.ndarray],
                    instances: int) -> InstanceLaunches:
    """``encode_launches``' arrays back; ValueError unless they are a batch of
    ``instances`` instances over this trace's rows (a damaged or foreign copy is
    recomputed, never used to index the trace)."""
    inst_ptr, rows = arrays["inst_ptr"], arrays["rows"]
    chain_ptr, chain = arrays["chain_ptr"], arrays["chain"]
    check_ints(arrays, "inst_ptr", "rows", "chain_ptr", "chain")
    check_within(rows, 0, len(trace))
    check_within(chain, 0, len(trace))
    check_pointers(inst_ptr, rows.shape[0], instances)
    check_pointers(chain_ptr, chain.shape[0], rows.shape[0])
    wide = [np.asarray(a, dtype=np.int64) for a in (inst_ptr, rows, chain_ptr, chain)]
    return InstanceLaunches(*wide)  # int64, as computed: no reader sees another type
