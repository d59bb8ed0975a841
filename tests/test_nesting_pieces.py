"""``nest`` and ``parents`` cut a long input where nothing is open and nest the pieces
on threads (``nest_cuts``).  With pieces of a few events, every kind of cut (a
new run, a free place inside a run, none at all) is met on small inputs, and the
answers must stay the stack walk's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import nest_cuts, nesting
from profiling.analysis.links import op_nesting
from profiling.analysis.nesting import nest, parents
from profiling.trace import column_threads
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES
from tests.test_nesting_vectorised import TRACES, assert_same, reference_nest, sorted_events


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nest_cuts, "PIECE_MIN", 4)
    monkeypatch.setattr(nest_cuts, "pieces", lambda: 5)
    monkeypatch.setattr(column_threads, "MIN_ROWS", 0)  # small inputs on threads too


def assert_parents(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> None:
    got, want = parents(start, end, group), reference_nest(start, end, group).parent
    assert got.dtype.kind == "i"
    assert np.array_equal(got, want), (start, end, group, got, want)


def assert_cuts_are_free(s: np.ndarray, e: np.ndarray, g: np.ndarray) -> list[int]:
    """``cuts``' bounds, each checked: a new run, or after every earlier end of its run."""
    checked = nesting._checked(s, e, g)
    assert checked is not None
    s64, e64, new_run = checked
    bounds = nest_cuts.cuts(s64, e64, new_run)
    assert bounds[0] == 0 and bounds[-1] == s.shape[0]
    assert bounds == sorted(set(bounds))
    for cut in bounds[1:-1]:
        first = cut
        while not new_run[first]:
            first -= 1
        assert first == cut or int(e64[first:cut].max()) <= int(s64[cut]), (cut, bounds)
    return bounds


@pytest.mark.parametrize("seed", range(30))
def test_pieces_answer_like_the_walk(seed: int, small_pieces: None) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(0, 120))
        span = int(rng.choice([3, 50, 1000, 10**6]))
        dur = int(rng.choice([0, 1, 5, 40, 10**4]))
        s, e, g = sorted_events(rng, n, int(rng.integers(1, 4)), span, dur)
        if n:
            assert_cuts_are_free(s, e, g)
        assert_same(s, e, g)
        assert_parents(s, e, g)
        assert_same(s / 2.0, e / 2.0, g)  # floats cut the same way


def test_cuts_fall_between_trees_and_never_inside_one(small_pieces: None) -> None:
    # 40 trees of a root and three children, one after another: cut between trees
    root = np.arange(40) * 100
    s = np.repeat(root, 4) + np.tile([0, 10, 20, 30], 40)
    e = s + np.tile([90, 5, 5, 5], 40)
    g = np.zeros(s.shape[0], np.int64)
    bounds = assert_cuts_are_free(s, e, g)
    assert len(bounds) == 6  # five pieces, as many as threads
    assert all(b % 4 == 0 for b in bounds)  # at a root, never at a child
    assert_same(s, e, g)
    assert_parents(s, e, g)
    # one event open over all the rest: nowhere to cut, one piece
    s2, e2 = np.r_[-1, s], np.r_[10**6, e]
    assert assert_cuts_are_free(s2, e2, np.zeros(s2.shape[0], np.int64)) == [0, s2.shape[0]]
    assert_same(s2, e2, np.zeros(s2.shape[0], np.int64))
    # a partial overlap across a would-be cut: the later event starts before an end
    s3, e3 = s.copy(), e.copy()
    e3[4 * 19 + 3] = s3[4 * 20] + 1  # tree 19's last child reaches into tree 20
    bounds3 = assert_cuts_are_free(s3, e3, g)
    assert 4 * 20 not in bounds3
    assert_same(s3, e3, g)
    assert_parents(s3, e3, g)


def test_a_piece_finished_one_by_one(small_pieces: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece the jumping leaves unsettled (rounds capped) is finished per event and
    comes back int64, joined with pieces that came back int32."""
    monkeypatch.setattr(nesting, "_MAX_ROUNDS", 1)
    rng = np.random.default_rng(5)
    for _ in range(50):
        s, e, g = sorted_events(rng, int(rng.integers(20, 100)), 2, 200, 60)
        assert_same(s, e, g)
        assert_parents(s, e, g)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: Path(p).name)
def test_op_nesting_of_every_trace_in_pieces(path: Path, small_pieces: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    trace = load_trace(path)
    ops, got = op_nesting(trace)
    start = trace.ts_ns[ops]
    end = start + trace.dur_ns[ops]
    want = reference_nest(start, end, trace.lane[ops])
    for name in ("parent", "stop", "depth"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert np.array_equal(parents(start, end, trace.lane[ops]), want.parent)
    if Path(path).parent == SAMPLE_TRACES:  # captures of several steps: cut between them
        checked = nesting._checked(start, end, trace.lane[ops])
        assert checked is not None and len(nest_cuts.cuts(*checked)) > 2
    assert nest(start, end, trace.lane[ops]).depth.dtype == np.int32
