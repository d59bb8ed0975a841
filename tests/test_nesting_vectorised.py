"""The vectorised ``nesting.nest`` against torch's stack walk, kept here verbatim.

``nest`` replaced a Python stack loop with pointer jumping (the loop was most of a
big trace's first open).  Its answer must be the loop's for every input: partial
overlaps, equal starts, zero durations, many groups (contiguous or not), negative
and huge times, floats, and input the jumping cannot take (it falls back).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiling.analysis import nesting
from profiling.analysis.links import op_nesting
from profiling.analysis.nesting import Nesting, innermost_containing, nest
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files


def reference_nest(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> Nesting:
    """The stack walk exactly as ``nest`` was before it was vectorised."""
    n = int(start.shape[0])
    parent = [-1] * n
    stop = [n] * n
    depth = [0] * n
    starts, ends, groups = start.tolist(), end.tolist(), group.tolist()
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
        s, e = starts[i], ends[i]
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


def assert_same(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> None:
    got, want = nest(start, end, group), reference_nest(start, end, group)
    for name in ("parent", "stop", "depth"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), (name, start, end, group, a, b)


def sorted_events(
    rng: np.random.Generator, n: int, groups: int, span: int, dur: int, offset: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random intervals (partial overlaps, ties, zero durations) in (group, start, -dur)."""
    g = rng.integers(0, groups, n)
    s = rng.integers(-span, span + 1, n) + offset
    d = rng.integers(0, dur + 1, n)
    d[rng.random(n) < 0.2] = 0
    order = np.lexsort((-d, s, g))
    return s[order], s[order] + d[order], g[order]


@pytest.mark.parametrize("seed", range(40))
def test_random_shapes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(0, 200))
        span = int(rng.choice([1, 3, 20, 1000, 10**6]))
        dur = int(rng.choice([0, 1, 2, 10, 500, 10**6]))
        offset = int(rng.choice([0, -(2**40), 2**60]))
        s, e, g = sorted_events(rng, n, int(rng.integers(1, 6)), span, dur, offset)
        assert_same(s, e, g)
        assert_same(s, e, g.astype(np.int32))


def test_nested_trees_and_deep_chains() -> None:
    """Real shapes: long sibling runs under one root, deep chains, then a pop of all."""
    rng = np.random.default_rng(7)
    n = 50_000
    s = np.sort(rng.integers(0, 10**7, n))
    d = rng.integers(0, 10**5, n)
    order = np.lexsort((-d, s))
    s, d = s[order], d[order]
    assert_same(s, s + d, np.zeros(n, np.int64))
    depth = 3000  # deeper than the jumping's rounds: the one-by-one finish settles it
    s = np.concatenate((np.arange(depth), [depth + 5], np.arange(depth + 6, depth + 9)))
    e = np.concatenate((2 * depth + 10 - np.arange(depth), [3 * depth], [3 * depth] * 3))
    assert_same(s, e, np.zeros(s.shape[0], np.int64))
    siblings = np.arange(100_000)
    assert_same(np.r_[0, siblings], np.r_[10**6, siblings + 1], np.zeros(100_001, np.int64))


def test_groups_that_are_not_contiguous_and_floats() -> None:
    s = np.array([0, 1, 2, 0, 3, 4, 5])
    e = np.array([10, 5, 3, 9, 9, 6, 6])
    assert_same(s, e, np.array([0, 0, 0, 1, 0, 0, 0]))  # group 0 restarts
    rng = np.random.default_rng(3)
    for _ in range(200):
        s, e, g = sorted_events(rng, int(rng.integers(0, 80)), 3, 50, 30)
        assert_same(s / 4.0, e / 4.0, g)
        assert_same(s.astype(np.float32) / 3, e.astype(np.float32) / 3, g.astype(np.float64))
        assert_same(s.astype(np.int32), e.astype(np.int16), g.astype(np.uint8))


def test_fallbacks_still_answer_like_the_walk() -> None:
    """Input outside the jumping's precondition goes to the walk: same answers."""
    s = np.array([5, 1, 3, 0, 2])  # start not ascending
    e = np.array([9, 8, 4, 7, 3])
    assert_same(s, e, np.zeros(5, np.int64))
    assert_same(s.astype(float), np.array([9, np.nan, 4, 7, 3]), np.zeros(5))
    big = np.array([0, 2**63, 2**64 - 1], dtype=np.uint64)
    assert_same(big, big + np.uint64(0), np.zeros(3, np.int64))
    assert_same(np.array([0, 1]), np.array([3.5, 2.0]), np.zeros(2, np.int64))
    assert_same(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    top = np.iinfo(np.int64).max  # start + 1 would overflow: the two-comparison test
    assert_same(
        np.array([top - 2, top - 1, top, top]),
        np.array([top, top, top, top]),
        np.zeros(4, np.int64),
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(-20, 20), st.integers(0, 25)), max_size=60)
)
def test_hypothesis(events: list[tuple[int, int, int]]) -> None:
    events.sort(key=lambda t: (t[0], t[1], -t[2]))
    g = np.array([t[0] for t in events], dtype=np.int64)
    s = np.array([t[1] for t in events], dtype=np.int64)
    e = s + np.array([t[2] for t in events], dtype=np.int64)
    assert_same(s, e, g)


def test_few_rounds_then_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the rounds capped at 0 or 1, the one-by-one finish gives the same answer."""
    rng = np.random.default_rng(11)
    for rounds in (0, 1, 2):
        monkeypatch.setattr(nesting, "_MAX_ROUNDS", rounds)
        for _ in range(100):
            s, e, g = sorted_events(rng, int(rng.integers(0, 150)), 3, 40, 60)
            assert_same(s, e, g)


TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: Path(p).name)
def test_op_nesting_of_every_trace(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = load_trace(path)
    walk = nesting._nest_walk

    def no_walk(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> Nesting:
        assert start.shape[0] == 0, "a trace's ops fell back to the Python walk"
        return walk(start, end, group)

    monkeypatch.setattr(nesting, "_nest_walk", no_walk)  # real traces take the NumPy path
    for with_async in (False, True):
        ops, got = op_nesting(trace, with_async=with_async)
        start = trace.ts_ns[ops]
        want = reference_nest(start, start + trace.dur_ns[ops], trace.lane[ops])
        for name in ("parent", "stop", "depth"):
            assert np.array_equal(getattr(got, name), getattr(want, name)), name
    rows = np.arange(len(trace))
    assert_same(trace.ts_ns, trace.ts_ns + trace.dur_ns, trace.lane[rows])


def reference_innermost_containing(
    points: np.ndarray,
    point_group: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    group: np.ndarray,
    nesting: Nesting,
) -> np.ndarray:
    """``nesting.innermost_containing`` as it was (np.unique of the groups, a mask
    over every point per level)."""
    n = int(start.shape[0])
    out = np.full(points.shape[0], -1, dtype=np.int64)
    if n == 0 or points.shape[0] == 0:
        return out
    key_order = np.lexsort((start, group))
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


@pytest.mark.parametrize("seed", range(10))
def test_innermost_containing_as_before(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(40):
        n = int(rng.integers(0, 150))
        offset = int(rng.choice([0, -1000, 2**50]))
        s, e, g = sorted_events(rng, n, int(rng.integers(1, 5)), 60, 40, offset)
        k = int(rng.integers(0, 200))
        points = rng.integers(-70, 110, k) + offset
        pg = rng.integers(-1, 6, k)  # groups with no events, and a negative one
        for pgroup in (pg, np.abs(pg), np.abs(pg).astype(np.uint64), pg.astype(float)):
            nesting_ = nest(s, e, g)
            got = innermost_containing(points, pgroup, s, e, g, nesting_)
            want = reference_innermost_containing(points, pgroup, s, e, g, nesting_)
            assert np.array_equal(got, want)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: Path(p).name)
def test_innermost_containing_of_every_trace(path: Path) -> None:
    trace = load_trace(path)
    ops, nesting_ = op_nesting(trace)
    start = trace.ts_ns[ops]
    end = start + trace.dur_ns[ops]
    lane = trace.lane[ops].astype(np.int64)
    points, pgroup = trace.ts_ns, trace.lane.astype(np.int64)
    got = innermost_containing(points, pgroup, start, end, lane, nesting_)
    assert np.array_equal(
        got, reference_innermost_containing(points, pgroup, start, end, lane, nesting_)
    )
