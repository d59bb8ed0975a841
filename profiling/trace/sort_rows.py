"""Rows in (lane, ts, -dur) order, ties broken as the trace's nesting needs
(``row_order``): the sort of ``columns.build_trace``, by combined integer keys."""

from __future__ import annotations

from functools import partial

import numpy as np

from profiling.trace.column_threads import in_threads
from profiling.trace.spare_arrays import PIECE, SpareArrays


def row_order(
    rows: np.ndarray | None,
    lane: np.ndarray,
    ts: np.ndarray,
    dur: np.ndarray,
    external_id: np.ndarray | None = None,
    nests: np.ndarray | None = None,
    spare: SpareArrays | None = None,
) -> np.ndarray:
    """``rows`` sorted by (lane, ts, -dur), full ties in their given order: what
    ``np.lexsort((-dur, ts, lane))`` gives, in about two thirds of its time.  ``rows``
    None: every row (``arange``), with no gather of the columns.  The combined key's
    array goes to ``spare`` when done.

    One stable sort of a combined (lane, ts) key (the rows come in file order, which
    is nearly sorted by time, and a stable sort runs through sorted stretches), then
    only the rows that share a (lane, ts) (a fifth of a Kineto trace's) are ordered by
    -dur, again by one combined key.  Values too far apart for a combined key to fit
    int64 take the lexsort.  The key is built in place and its ties found piece by
    piece: a fresh array costs more to touch than to fill (page faults).

    With ``external_id``, rows of a full (lane, ts, dur) tie that have one (>= 0) are
    put in ascending External id order among the places they hold; rows without one
    keep their places.  The first of a tie nests as the parent, and file order made
    ``aten::detach``/``detach`` swap parent and child (and their self time) in a
    reversed or shuffled file; Kineto numbers a parent op before its children (all 68
    such ties in the real traces are in External id order in the file).

    With ``nests`` (1: an op or annotation, 2: a runtime or driver call, 0: other), a
    full tie holding an op and a call has its calls after its other rows: a call is
    never the parent of an op.  An op made of one launch
    can start and end with it (at microsecond resolution), and the call carries the
    op's External id, so only file order told them apart, and a call written first
    took the op as its child (in a shuffled file ``table`` lost the op's device
    time).  torch's own event list holds the ops before the runtime calls.
    """
    count = lane.shape[0] if rows is None else rows.shape[0]
    if count < 2:
        return np.arange(count) if rows is None else rows
    lanes = lane if rows is None else lane[rows]
    times = ts if rows is None else ts[rows]
    base = int(times.min())
    width = int(times.max()) - base + 1
    if (int(lanes.max()) + 1) * width >= 2**62:
        return _lexsort_order(
            np.arange(count) if rows is None else rows, lane, ts, dur, external_id, nests
        )
    key = np.multiply(lanes, width, dtype=np.int64)
    key += times  # may wrap around; exact again (mod 2**64) once base is taken off
    key -= base
    del lanes, times
    order = np.argsort(key, kind="stable")
    tie = _equal_neighbours(key, order)
    if spare is not None:
        spare.give(key)
    del key
    # the runs of ties, piece by piece (a run never crosses pieces), side by side
    in_threads(*(
        partial(_order_ties, order[lo:hi], tie[lo : hi - 1], rows, dur, external_id, nests)
        for lo, hi in _pieces(tie)
        if tie[lo : hi - 1].any()
    ), rows=count)
    return order if rows is None else rows[order]


def _pieces(tie: np.ndarray) -> list[tuple[int, int]]:
    """Places ``0 .. len(tie)`` cut into pieces of about ``PIECE``, never inside a run of
    ties (``tie[i]``: place i + 1 holds the key of place i)."""
    count = tie.shape[0] + 1
    pieces = []
    lo = 0
    while lo < count:
        hi = lo + PIECE
        if hi < count and tie[hi - 1]:  # move the cut to the end of the run
            near = tie[hi - 1 : hi - 1 + PIECE]
            rest = near if not near.all() else tie[hi - 1 :]
            first = int(np.argmin(rest))  # the first place that does not tie the next
            hi = count if rest[first] else hi + first
        pieces.append((lo, min(hi, count)))
        lo = hi
    return pieces


def _equal_neighbours(key: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``key[order][1:] == key[order][:-1]``, without the whole gathered copy (piece by
    piece, on threads)."""
    tie = np.empty(max(order.shape[0] - 1, 0), dtype=bool)
    pieces = range(0, tie.shape[0], PIECE)
    in_threads(*(partial(_equal_piece, tie, key, order, lo) for lo in pieces), rows=len(order))
    return tie


def _equal_piece(tie: np.ndarray, key: np.ndarray, order: np.ndarray, lo: int) -> None:
    hi = min(lo + PIECE, tie.shape[0])
    part = key[order[lo : hi + 1]]
    np.equal(part[1:], part[:-1], out=tie[lo:hi])


def _order_ties(
    order: np.ndarray,
    tie: np.ndarray,
    rows: np.ndarray | None,
    dur: np.ndarray,
    external_id: np.ndarray | None,
    nests: np.ndarray | None,
) -> None:
    """Order the runs of equal (lane, ts) in ``order`` (``tie[i]``: place i + 1 holds the
    key of place i; some do) by -dur, then ``external_id`` and ``nests`` (see
    ``row_order``); in place."""
    after = np.zeros(order.shape[0], dtype=bool)  # a place ties with the one before it
    after[1:] = tie
    shared = after.copy()
    shared[:-1] |= tie
    at = np.flatnonzero(shared)
    group = np.cumsum(~after[at])  # numbered from 1, as before: only the order matters
    del after, shared
    tied = order[at]
    tied_dur = dur[tied if rows is None else rows[tied]]
    shift = min(int(tied_dur.min()), 0)
    longest = int(tied_dur.max()) - shift + 1
    if int(group[-1] + 1) * longest < 2**62:  # (group, -dur) as one key, as above
        by = group * longest
        by += longest - 1 + shift
        by -= tied_dur
        sort = np.argsort(by, kind="stable")
    else:
        sort = np.lexsort((-tied_dur, group))
    tied, tied_dur = tied[sort], tied_dur[sort]  # later steps keep each run's durations
    if external_id is not None:
        tied = _external_id_first(
            tied, group, tied_dur, external_id[tied if rows is None else rows[tied]]
        )
    if nests is not None:
        tied = _leaves_last(tied, group, tied_dur, nests[tied if rows is None else rows[tied]])
    order[at] = tied


def _lexsort_order(
    rows: np.ndarray,
    lane: np.ndarray,
    ts: np.ndarray,
    dur: np.ndarray,
    external_id: np.ndarray | None,
    nests: np.ndarray | None,
) -> np.ndarray:
    """``row_order`` by ``np.lexsort``, for values too far apart for a combined key."""
    ordered = rows[np.lexsort((-dur[rows], ts[rows], lane[rows]))]
    if external_id is None and nests is None:
        return ordered
    same = (lane[ordered][1:] == lane[ordered][:-1]) & (ts[ordered][1:] == ts[ordered][:-1])
    group = np.cumsum(np.concatenate(([True], ~same)))
    if external_id is not None:
        ordered = _external_id_first(ordered, group, dur[ordered], external_id[ordered])
    return _leaves_last(ordered, group, dur[ordered], None if nests is None else nests[ordered])


def _external_id_first(
    tied: np.ndarray, group: np.ndarray, dur: np.ndarray, external_id: np.ndarray
) -> np.ndarray:
    """``tied`` (sorted by group, then -dur) with each run of equal (group, dur) put in
    ascending ``external_id`` order among its rows that have one (stable, so equal ids
    keep their order); rows with -1 stay where they are."""
    same = (group[1:] == group[:-1]) & (dur[1:] == dur[:-1])
    if not same.any():
        return tied
    shared = np.zeros(tied.size, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    run = np.cumsum(~np.concatenate(([False], same)))
    at = np.flatnonzero(shared & (external_id >= 0))
    if at.size < 2:
        return tied
    moved = at[np.lexsort((external_id[at], run[at]))]
    out = tied.copy()
    out[at] = tied[moved]
    return out


def _leaves_last(
    tied: np.ndarray, group: np.ndarray, dur: np.ndarray, nests: np.ndarray | None
) -> np.ndarray:
    """``tied`` (sorted by group, then -dur) with the calls (``nests`` 2) of each run of
    equal (group, dur) that also holds an op (``nests`` 1) moved after its other rows,
    both in their order (a stable sort); other runs as they are."""
    if nests is None or not (nests == 2).any() or not (nests == 1).any():
        return tied
    same = (group[1:] == group[:-1]) & (dur[1:] == dur[:-1])
    run = np.cumsum(np.concatenate(([True], ~same)))
    size = int(run[-1]) + 1
    mixed = (np.bincount(run, nests == 1, size) > 0) & (np.bincount(run, nests == 2, size) > 0)
    late = (nests == 2) & mixed[run]
    if not late.any():
        return tied
    return tied[np.lexsort((late, run))]
