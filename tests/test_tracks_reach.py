"""``make_track``'s ``argmax`` (the earliest event reaching furthest, per position)
against its definition, on events that overlap in every way."""

from __future__ import annotations

import numpy as np

from tests.fixtures.flat_trace import flat_trace
from tui.tracks import make_track, start_order


def test_argmax_is_the_last_event_that_reached_past_all_before_it() -> None:
    trace = flat_trace(2_000, seed=5, memcpy_every=0)
    rng = np.random.default_rng(1)
    # overlapping, nested, equal ends and zero lengths: reshuffle the durations
    trace.dur_ns[:] = rng.choice([0, 1_000, 5_000, 50_000, 400_000], size=len(trace))
    track = make_track(trace, np.arange(len(trace)), trace.start_ns)
    best, ref = -np.inf, []
    for i, end in enumerate(track.end.tolist()):
        if end > best:  # strictly further: ties keep the earlier event
            best, last = end, i
        ref.append(last)
    assert track.argmax.tolist() == ref
    assert track.argmax.dtype == np.int64
    assert len(set(ref)) > 10 and ref != list(range(len(ref)))  # the test can tell


def test_start_order_is_lexsort_of_start_then_longest_first() -> None:
    """``start_order`` (a stable sort of the starts, then ties longest first) orders
    rows exactly as ``np.lexsort((-dur, ts))``: on sorted runs one after another (a
    folded group) and on random starts with many ties."""
    rng = np.random.default_rng(3)
    runs = [np.sort(rng.integers(0, 50, 40)) for _ in range(5)]
    cases = [(np.concatenate(runs), rng.integers(0, 4, 200))]
    for _ in range(200):
        n = int(rng.integers(0, 60))
        cases.append((rng.integers(0, int(rng.integers(1, 20)), n),
                      rng.integers(0, int(rng.integers(1, 5)), n)))
    for ts, dur in cases:
        ts, dur = ts.astype(np.int64), dur.astype(np.int64)
        assert np.array_equal(start_order(ts, dur), np.lexsort((-dur, ts)))
    assert any(np.any(np.diff(np.sort(ts)) == 0) for ts, _ in cases)  # ties were met
