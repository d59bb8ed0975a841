"""Which host event of the op table owns each device slice's time (torch's rule, kept honest).

torch attaches a device slice to the host events whose id equals the slice's
linked correlation: the External id of the op that was innermost-with-an-id
around the launching call.  The trace only has that as a number, and numbers
collide: older Kineto writes a device event's *own* CUPTI correlation into its
``External id`` when it could not link it, and those numbers equal the
External ids of unrelated ops (an ``aten::detach`` that ended 30 s before the
``cudaMemcpyAsync``); ids also repeat across the processes of a merged file.

So a device slice is owned only through its launching call: the call with the
same correlation in the same process (``correlation.launch_by_correlation``,
which ``links`` uses too), then the op around that call on its thread whose
External id is the call's (or, where the call has none, the slice's).  An id
that merely equals something else links nothing, and a slice whose call is not
in the trace, or whose id names no op around its call, belongs to no host
event: torch shows no device time for it either.  ``stats``, ``kernels`` and
the TUI may still attribute such slices by launch nesting (``Links.op``).

CUPTI overhead slices are placed as torch places them (``place_overhead``) and
share their op's id, so they receive that op's device time as in torch.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.correlation import launch_by_correlation
from profiling.analysis.links import Links, lane_kinds, op_nesting
from profiling.analysis.nesting import innermost_containing
from profiling.analysis.ranges import concat_ranges, distinct
from profiling.trace.model import GPU_KINDS, NO_ID, Kind, Trace


def frontend_ids(trace: Trace, host: np.ndarray, given_id: np.ndarray) -> np.ndarray:
    """Per host event, the id device slices attach to: an op's or annotation's
    External id, an overhead slice's given id, nothing for calls and python frames."""
    h_kind = trace.kind[host]
    h_ext = trace.external_id[host]
    is_op = (h_kind == Kind.CPU_OP) | (h_kind == Kind.USER_ANNOTATION)
    return np.where(is_op, np.where(h_ext > 0, h_ext, NO_ID), given_id)


def launching_calls(trace: Trace, device: np.ndarray, links: Links | None) -> np.ndarray:
    """The runtime/driver row that launched each device row (-1: not in the trace).

    GPU events take ``links.launch`` (correlation, then flows); sync slices, which
    ``links`` does not cover, take the same correlation join.
    """
    calls = np.full(device.shape[0], -1, dtype=np.int64)
    is_gpu = np.isin(trace.kind[device], [int(k) for k in GPU_KINDS])
    runtime = np.flatnonzero(trace.kind == Kind.RUNTIME)
    if links is not None:
        calls[is_gpu] = links.launch[device[is_gpu]]
        rest = np.flatnonzero(~is_gpu)
    else:
        rest = np.arange(device.shape[0])
    if rest.shape[0]:
        calls[rest] = launch_by_correlation(trace, device[rest], runtime)
    return calls


def own_device_time(trace: Trace, host: np.ndarray, h_lane: np.ndarray,
                    frontend: np.ndarray, parent: np.ndarray, device: np.ndarray,
                    links: Links | None) -> np.ndarray:
    """Device nanoseconds each host event owns itself (torch's ``self_device``).

    ``host`` are the table's host rows in nesting order, ``h_lane`` their
    (placed) lanes, ``frontend`` their ids (``frontend_ids``), ``parent`` their
    nesting; ``device`` the device rows that may attach (no GPU annotations).
    """
    m = host.shape[0]
    own = np.zeros(m, dtype=np.int64)
    if m == 0 or device.shape[0] == 0:
        return own
    call = launching_calls(trace, device, links)
    index = np.int32 if m < 2**31 else np.int64  # a 1 GB trace: 12 MB, not 25
    where = np.full(len(trace), -1, dtype=index)
    where[host] = np.arange(m, dtype=index)
    node = np.where(call >= 0, where[np.maximum(call, 0)], -1)
    del where
    ext = trace.external_id
    call_ext = np.where(call >= 0, ext[np.maximum(call, 0)], NO_ID)
    wanted = np.where(call_ext > 0, call_ext, np.where(ext[device] > 0, ext[device], NO_ID))
    op = _enclosing_with_id(node, wanted, frontend, parent)
    linked = np.flatnonzero(op >= 0)
    if linked.shape[0] == 0:
        return own
    owners, reps = _holders_of(frontend, h_lane, op[linked])
    durs = np.repeat(trace.dur_ns[device[linked]], reps)
    return np.bincount(owners, weights=durs, minlength=m).astype(np.int64)


def _enclosing_with_id(node: np.ndarray, wanted: np.ndarray, frontend: np.ndarray,
                       parent: np.ndarray) -> np.ndarray:
    """For each call node, the nearest ancestor whose id is ``wanted`` (-1: none)."""
    found = np.full(node.shape[0], -1, dtype=np.int64)
    cur = np.where((node >= 0) & (wanted > 0), node, -1)
    cur = np.where(cur >= 0, parent[np.maximum(cur, 0)], -1)
    while True:
        live = np.flatnonzero(cur >= 0)
        if live.shape[0] == 0:
            return found
        hit = frontend[cur[live]] == wanted[live]
        found[live[hit]] = cur[live[hit]]
        cur[live[hit]] = -1
        miss = live[~hit]
        cur[miss] = parent[cur[miss]]


def _holders_of(frontend: np.ndarray, h_lane: np.ndarray,
                ops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every host event on each op's thread that carries the op's id (the op, and
    overhead slices torch gave that id), as (flat owners, count per op)."""
    # Only events whose id some op asks for can hold: sort those, not every event with
    # an id (a 1 GB trace has 1.7 M; its kernels come from a tenth of them).
    asked = frontend[ops]
    keyed = np.flatnonzero(_asked(frontend, asked[asked > 0]))
    lanes = int(h_lane.max()) + 1 if h_lane.shape[0] else 1
    key = frontend[keyed] * lanes + h_lane[keyed]
    order = np.argsort(key, kind="stable")
    keyed, key = keyed[order], key[order]
    want = frontend[ops] * lanes + h_lane[ops]
    lo = np.searchsorted(key, want, side="left")
    hi = np.searchsorted(key, want, side="right")
    return keyed[concat_ranges(lo, hi)], hi - lo


def _asked(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``np.isin(ids, wanted)``: by a table over the span of the wanted ids when that
    is no wider than a few times the ids (torch numbers them from one), else by
    numpy's own (which sorts).  One id-sized temporary: the table's slot of each id,
    0 and the last slot (both False) for the ids outside the span."""
    if wanted.shape[0] == 0:
        return np.zeros(ids.shape[0], dtype=bool)
    lo, top = int(wanted.min()), int(wanted.max())
    span = top - lo + 1
    if span > 4 * (ids.shape[0] + wanted.shape[0]) + (1 << 20):
        return np.isin(ids, wanted)
    table = np.zeros(span + 2, dtype=bool)
    table[wanted - (lo - 1)] = True
    slot = np.subtract(ids, lo - 1, dtype=np.int64)
    np.clip(slot, 0, span + 1, out=slot)
    return table[slot]


def place_overhead(trace: Trace, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The thread and the id torch gives each CUPTI overhead slice.

    The slice sits on a lane of its own (pid -1) in the file; torch puts it on
    the thread whose op was running (the innermost op around it) and gives it
    that op's correlation id, so it also receives that op's kernels.  Where no
    op encloses it, it stays on its own lane with no id.
    """
    lanes = trace.lane[rows].astype(np.int64)
    ids = np.full(rows.shape[0], NO_ID, dtype=np.int64)
    ops, nesting = op_nesting(trace, with_async=True)  # as it was; not the launch links
    if ops.shape[0] == 0:
        return lanes, ids
    on_cpu = lane_kinds(trace)
    o_start = trace.ts_ns[ops]
    o_end = o_start + trace.dur_ns[ops]
    o_lane = trace.lane[ops].astype(np.int64)
    o_is_op = trace.kind[ops] == Kind.CPU_OP
    start = trace.ts_ns[rows]
    end = start + trace.dur_ns[rows]
    best_start = np.full(rows.shape[0], -1, dtype=np.int64)
    levels = int(nesting.depth.max()) + 1
    for lane in distinct(o_lane[on_cpu[ops]]).tolist():
        inner = innermost_containing(
            start, np.full(rows.shape[0], lane), o_start, o_end, o_lane, nesting
        )
        for _ in range(levels):  # up to an op that holds the whole slice
            short = (inner >= 0) & (o_end[np.maximum(inner, 0)] < end)
            if not short.any():
                break
            inner[short] = nesting.parent[inner[short]]
        better = (inner >= 0) & (o_start[np.maximum(inner, 0)] > best_start)
        if not better.any():
            continue
        best_start[better] = o_start[inner[better]]
        lanes[better] = lane
        cur = inner[better]
        for _ in range(levels):  # the id is the innermost cpu_op's, not an annotation's
            up = (cur >= 0) & ~o_is_op[np.maximum(cur, 0)]
            if not up.any():
                break
            cur[up] = nesting.parent[cur[up]]
        op_rows = ops[np.maximum(cur, 0)]
        ids[better] = np.where(cur >= 0, trace.external_id[op_rows], NO_ID)
    return lanes, ids
