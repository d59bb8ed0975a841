"""Who encloses whom on one thread: parents by torch's own stack rule.

torch's ``EventList._populate_cpu_children`` walks each thread's events sorted
by (start, -end) with a stack, popping every open event that the new one does
not fit inside (``start >= parent.end or end > parent.end``).  The result is
that an event's parent is the *latest earlier event on the thread that contains
it*, even when intervals overlap only partly.  The op table, the links and the
regions all need that same answer, so it lives here once.

The walk is one tight loop over Python lists (no per-event objects); the rest
(subtree sums, containment queries) is vectorised on top of what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def nest(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> Nesting:
    """Nest events sorted by (group, start, -duration) with torch's stack rule.

    ``group`` is the thread (a lane index, usually): events of different
    groups never nest.  The input must already be in that order, which is the
    order of a ``Trace``'s rows and of any subset of them taken in row order.
    """
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
    for g in np.unique(point_group):
        sel = np.flatnonzero(point_group == g)
        a, b = int(lo[sel[0]]), int(hi[sel[0]])
        pos[sel] = a + np.searchsorted(s_sorted[a:b], points[sel], side="right") - 1
        pos[sel[pos[sel] < a]] = -1
    cand = np.where(pos >= 0, key_order[np.maximum(pos, 0)], -1)
    active = cand >= 0
    while active.any():
        idx = np.flatnonzero(active)
        c = cand[idx]
        inside = end[c] > points[idx]
        done = idx[inside]
        out[done] = c[inside]
        nxt = nesting.parent[c[~inside]]
        cand[idx[~inside]] = nxt
        active[done] = False
        active[idx[~inside][nxt < 0]] = False
    return out
