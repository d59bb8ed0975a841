"""Who encloses whom on one thread: parents by torch's own stack rule.

torch's ``EventList._populate_cpu_children`` walks each thread's events sorted
by (start, -end) with a stack, popping every open event that the new one does
not fit inside (``start >= parent.end or end > parent.end``).  The result is
that an event's parent is the *latest earlier event on the thread that contains
it*, even when intervals overlap only partly.  The op table, the links and the
regions all need that same answer, so it lives here once.

The walk itself is vectorised (pointer jumping; see ``nest``), with the plain
stack loop kept as the fallback for input outside its precondition; the rest
(subtree sums, containment queries) is vectorised on top of what it returns.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from profiling.analysis.nest_cuts import cuts
from profiling.analysis.ranges import distinct
from profiling.trace.column_threads import in_threads


@dataclass(frozen=True)
class Nesting:
    """Parent links for a set of events (indexed 0..n-1 in their given order).

    ``parent[i]`` is the enclosing event's index or -1.  ``stop[i]`` is one past
    the last descendant of ``i``: descendants are always the contiguous range
    ``i+1 .. stop[i]-1`` (a later event that does not fit closes every open one
    it does not fit in, so nothing after it can be a descendant again).
    ``depth[i]`` counts ancestors.
    """

    parent: np.ndarray  # int64
    stop: np.ndarray  # int64
    depth: np.ndarray  # int32


def parents(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``nest(start, end, group).parent`` alone: the op table needs no ``stop`` nor
    ``depth`` (its subtree sums climb the parents, ``ancestor_sums``), and on a 1 GB
    trace they are a third of the nesting's time.  The same values, as int32 for
    fewer than 2**31 events (half the memory of every gather by them), else int64."""
    checked = _checked(start, end, group)
    if checked is None:
        return _nest_walk(start, end, group).parent
    s, e, new_run = checked
    bounds = cuts(s, e, new_run)
    if len(bounds) == 2:
        return _parents(s, e, new_run, wide=False)
    out = np.empty(s.shape[0], dtype=_index_type(s.shape[0]))  # each piece writes its part
    in_threads(*(partial(_parents_into, out, s, e, new_run, a, b)
                 for a, b in itertools.pairwise(bounds)), rows=s.shape[0])
    return out


def _checked(start: np.ndarray, end: np.ndarray,
             group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(start, end, new_run) ready for ``_parents``, or None when the input is outside
    the jumping's precondition (see ``nest``) and the walk must take it."""
    n = int(start.shape[0])
    if n == 0:
        return None
    g = np.asarray(group)
    if g.dtype.kind not in "biuf" or g.shape != (n,):
        return None
    new_run = np.empty(n, dtype=bool)
    new_run[0] = True
    np.not_equal(g[1:], g[:-1], out=new_run[1:])
    pair = _comparable(start, end)
    if pair is None:
        return None
    s, e = pair
    if not bool(np.all((s[1:] >= s[:-1]) | new_run[1:])):
        return None
    return s, e, new_run


def nest(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> Nesting:
    """Nest events sorted by (group, start, -duration) with torch's stack rule.

    ``group`` is the thread (a lane index, usually): events of different
    groups never nest.  The input must already be in that order, which is the
    order of a ``Trace``'s rows and of any subset of them taken in row order.

    Vectorised (a Python stack walk over millions of ops was most of a big
    trace's first open).  The stack before event ``i`` is the ancestor chain of
    ``i-1``, and the walk pops until an open event ``j`` has ``end_j > s_i`` and
    ``end_j >= e_i``; an event off that chain was popped by a later one whose
    end is larger still, so the parent is simply the *nearest earlier event of
    the run with that property* -- found by pointer jumping (see
    ``_parents``).  Input that breaks the precondition the jumping needs (start
    not ascending within a run of one group, NaN, mixed or odd dtypes) takes
    the plain walk, so the answer is always the walk's.  A long input is cut where
    nothing is open (``nest_cuts``) and its pieces nested side by side on threads.
    """
    checked = _checked(start, end, group)
    if checked is None:
        return _nest_walk(start, end, group)
    s, e, new_run = checked
    bounds = cuts(s, e, new_run)
    if len(bounds) == 2:
        parent = _parents(s, e, new_run)
        return Nesting(parent, *_stops_and_depths(parent))
    n = s.shape[0]  # each piece writes its part of these
    out = Nesting(np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int32))
    in_threads(*(partial(_nest_into, out, s, e, new_run, a, b)
                 for a, b in itertools.pairwise(bounds)), rows=n)
    return out


def _comparable(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end as one NumPy dtype whose comparisons are exact (int64 or
    float64), or None when they cannot be (the walk compares Python numbers)."""
    s, e = np.asarray(start), np.asarray(end)
    if s.ndim != 1 or e.shape != s.shape:
        return None
    kinds = {s.dtype.kind, e.dtype.kind}
    if kinds <= {"i", "u"}:
        for a in (s, e):
            if a.dtype == np.uint64 and a.shape[0] and int(a.max()) > np.iinfo(np.int64).max:
                return None
        return s.astype(np.int64, copy=False), e.astype(np.int64, copy=False)
    if kinds == {"f"} and s.dtype.itemsize <= 8 and e.dtype.itemsize <= 8:
        s64, e64 = s.astype(np.float64, copy=False), e.astype(np.float64, copy=False)
        if np.isnan(s64).any() or np.isnan(e64).any():
            return None
        return s64, e64
    return None


def _piece_parents(s: np.ndarray, e: np.ndarray, new_run: np.ndarray, a: int, b: int,
                   wide: bool = True) -> np.ndarray:
    """``_parents`` of events ``a:b`` (a piece from ``nest_cuts``), indexed within it."""
    runs = new_run[a:b].copy()
    runs[0] = True
    return _parents(s[a:b], e[a:b], runs, wide)


def _nest_into(out: Nesting, s: np.ndarray, e: np.ndarray, new_run: np.ndarray, a: int,
               b: int) -> None:
    """The nesting of events ``a:b`` (a piece from ``nest_cuts``) into ``out[a:b]``, as
    indices of the whole."""
    parent = _piece_parents(s, e, new_run, a, b)
    stop, depth = _stops_and_depths(parent)
    _shifted_into(out.parent[a:b], parent, a)
    np.add(stop, a, out=out.stop[a:b])
    out.depth[a:b] = depth


def _parents_into(out: np.ndarray, s: np.ndarray, e: np.ndarray, new_run: np.ndarray, a: int,
                  b: int) -> None:
    """``parents`` of events ``a:b`` (a piece from ``nest_cuts``) into ``out[a:b]``."""
    _shifted_into(out[a:b], _piece_parents(s, e, new_run, a, b, wide=False), a)


def _shifted_into(out: np.ndarray, parent: np.ndarray, a: int) -> None:
    """A piece's parents (-1: none) as indices of the whole, the piece starting at ``a``."""
    out[:] = parent
    out[parent >= 0] += a


def _index_type(n: int) -> type[np.signedinteger]:
    """The narrowest index type for ``n`` events (int32 gathers move half the bytes)."""
    return np.int32 if n < 2**31 else np.int64


def _parents(s: np.ndarray, e: np.ndarray, new_run: np.ndarray, wide: bool = True) -> np.ndarray:
    """Parent of each event: the nearest earlier event of its run that does not
    end before it ends and ends after it starts.

    ``cand[i]`` starts at ``i-1`` and keeps the invariant "every event strictly
    between ``cand[i]`` and ``i`` fails ``i``"; while ``cand[i]`` fails too,
    ``i`` jumps to ``cand[cand[i]]`` (all updated at once).  That is sound:
    whatever fails ``c`` (ends at or before ``s_c <= s_i``, or before
    ``e_c``) fails ``i`` once ``c`` itself fails ``i``.  Unresolved jumps double
    their reach, so a few dozen rounds settle real traces; whatever is left
    after ``_MAX_ROUNDS`` finishes one by one along the already settled chains
    (amortised O(n), like the walk).  ``wide``: int64, else the index
    type the jumping used.
    """
    n = s.shape[0]
    index = _index_type(n)
    cand = np.arange(-1, n - 1, dtype=index)
    cand[new_run] = -1
    fails = _failing(s, e)
    act = np.flatnonzero(cand >= 0).astype(index)
    act = act[fails(cand[act], act)]
    rounds = 0
    while act.shape[0] and rounds < _MAX_ROUNDS:
        nc = cand[cand[act]]
        cand[act] = nc
        keep = nc >= 0
        act, nc = act[keep], nc[keep]
        act = act[fails(nc, act)]
        rounds += 1
    if act.shape[0]:
        cand = _finish_parents(cand, s, e, act)
    return cand.astype(np.int64) if wide else cand


def _failing(s: np.ndarray, e: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``fails(c, i)``: event ``c`` cannot hold event ``i`` (``end_c <= s_i`` or
    ``end_c < e_i``).  For integer times that is one comparison with
    ``key_i = max(e_i, s_i + 1)``; floats (and a start at the int64 limit) take two."""
    if s.dtype.kind == "i" and (s.shape[0] == 0 or int(s.max()) < np.iinfo(np.int64).max):
        key = np.maximum(e, s + 1)
        return lambda c, i: e[c] < key[i]
    return lambda c, i: (e[c] <= s[i]) | (e[c] < e[i])


_MAX_ROUNDS = 64


def _finish_parents(cand: np.ndarray, s: np.ndarray, e: np.ndarray, todo: np.ndarray) -> np.ndarray:
    """Settle the events the jumping left, in index order, one chain step at a
    time (every earlier candidate is final by then); in ``cand``'s index type."""
    cl, sl, el = cand.tolist(), s.tolist(), e.tolist()
    for i in todo.tolist():
        si, ei = sl[i], el[i]
        c = cl[i]
        while c >= 0 and (el[c] <= si or el[c] < ei):
            c = cl[c]
        cl[i] = c
    return np.asarray(cl, dtype=cand.dtype)


def _stops_and_depths(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One past each event's last descendant, and its count of ancestors.

    Events are in pre-order, so an event's last descendant is reached by following
    last children down (pointer jumping: a chain of depth d takes log2(d)
    rounds), and ``stop`` is one past it (a run's last event closes every one
    still open, as the walk's group change does).  Then the events open at ``i``
    -- its ancestors -- are those before it not yet closed:
    ``depth[i] = i - #{j: stop[j] <= i}``, one cumulative count."""
    n = parent.shape[0]
    index = _index_type(n)
    kids = np.flatnonzero(parent >= 0).astype(index)
    down = np.full(n, -1, dtype=index)  # last child, then last descendant
    np.maximum.at(down, parent[kids], kids)
    act = np.flatnonzero(down >= 0).astype(index)
    while act.shape[0]:
        deeper = down[down[act]]
        more = deeper >= 0
        act = act[more]
        down[act] = deeper[more]
    whole = np.arange(n, dtype=np.int64)
    stop = np.where(down >= 0, down, whole) + 1
    closed = np.cumsum(np.bincount(stop, minlength=n + 1)[:n])
    return stop, (whole - closed).astype(np.int32)


def _nest_walk(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> Nesting:
    """torch's stack walk itself, one event at a time: the fallback for input
    the vectorised path cannot take, and the reference the tests hold it to."""
    n = int(start.shape[0])
    parent = [-1] * n
    stop = [n] * n
    depth = [0] * n
    starts = start.tolist()
    ends = end.tolist()
    groups = group.tolist()
    stack: list[int] = []
    stack_end: list[int] = []
    current = None
    for i in range(n):
        g = groups[i]
        if g != current:
            for j in stack:
                stop[j] = i
            stack.clear()
            stack_end.clear()
            current = g
        s = starts[i]
        e = ends[i]
        while stack_end and (s >= stack_end[-1] or e > stack_end[-1]):
            stop[stack.pop()] = i
            stack_end.pop()
        if stack:
            parent[i] = stack[-1]
            depth[i] = len(stack)
        stack.append(i)
        stack_end.append(e)
    return Nesting(
        parent=np.asarray(parent, dtype=np.int64),
        stop=np.asarray(stop, dtype=np.int64),
        depth=np.asarray(depth, dtype=np.int32),
    )


def subtree_sums(values: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each event and all its descendants (via ``stop``)."""
    csum = np.concatenate(([0], np.cumsum(values)))
    idx = np.arange(values.shape[0])
    return csum[stop] - csum[idx]


_CLIMB_ROUNDS = 64


def ancestor_sums(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """``subtree_sums(values, stop)`` of integer ``values`` from the parents alone: each
    non-zero value is added to its event and climbs to every ancestor, one level per
    round (the op table's device time: a few of its events own any).  A tree deeper
    than ``_CLIMB_ROUNDS`` levels takes the stops instead, so no input is slow."""
    total = np.array(values, dtype=np.int64)
    at = np.flatnonzero(total)
    add = total[at]
    at = parent[at]
    for _ in range(_CLIMB_ROUNDS):
        up = at >= 0
        if not up.all():
            at, add = at[up], add[up]
        if at.shape[0] == 0:
            return total
        np.add.at(total, at, add)
        at = parent[at]
    return subtree_sums(np.asarray(values, dtype=np.int64), _stops_and_depths(parent)[0])


def innermost_containing(
    points: np.ndarray,
    point_group: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    group: np.ndarray,
    nesting: Nesting,
) -> np.ndarray:
    """For each point in time on a group, the innermost event containing it, or -1.

    Events are sorted by (group, start, -duration) and nested by ``nesting``.
    "Containing" means ``start <= point < end`` (a point at an event's very end
    is outside it, as with torch's rule).  The candidate is the last event that
    starts at or before the point; climbing its parents finds the innermost one
    still open, one vectorised step per nesting level.
    """
    n = int(start.shape[0])
    out = np.full(points.shape[0], -1, dtype=np.int64)
    if n == 0 or points.shape[0] == 0:
        return out
    # Position of the last event with (group, start) <= (point_group, point).
    key_order = np.lexsort((start, group))  # already sorted, but be safe and cheap
    g_sorted = group[key_order]
    s_sorted = start[key_order]
    lo = np.searchsorted(g_sorted, point_group, side="left")
    hi = np.searchsorted(g_sorted, point_group, side="right")
    pos = np.empty(points.shape[0], dtype=np.int64)
    for g in distinct(point_group).tolist():
        sel = np.flatnonzero(point_group == g)
        a, b = int(lo[sel[0]]), int(hi[sel[0]])
        pos[sel] = a + np.searchsorted(s_sorted[a:b], points[sel], side="right") - 1
        pos[sel[pos[sel] < a]] = -1
    # Climb from each candidate to the first ancestor still open at the point,
    # one step per level, over the points still climbing only.
    idx = np.flatnonzero(pos >= 0)
    c = key_order[pos[idx]]
    while idx.shape[0]:
        inside = end[c] > points[idx]
        out[idx[inside]] = c[inside]
        idx, c = idx[~inside], nesting.parent[c[~inside]]
        up = c >= 0
        idx, c = idx[up], c[up]
    return out
