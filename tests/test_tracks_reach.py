"""``make_track``'s ``argmax`` (the earliest event reaching furthest, per position)
against its definition, on events that overlap in every way."""

from __future__ import annotations

import numpy as np

from profiling.trace.model import Kind
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



def _reference_track(trace, rows: np.ndarray, origin: int) -> tuple[np.ndarray, ...]:  # noqa: ANN001
    """A track by its definition: rows gathered one by one, ordered by (start,
    longest first), ends as floats, and their running maximum."""
    rows = np.asarray(rows, dtype=np.int64)
    rows = rows[np.lexsort((-trace.dur_ns[rows], trace.ts_ns[rows]))]
    ts = np.array([float(int(trace.ts_ns[r]) - origin) for r in rows.tolist()])
    end = ts + np.array([float(trace.dur_ns[r]) for r in rows.tolist()])
    return rows, ts, end, np.maximum.accumulate(end)


def test_a_run_of_rows_read_as_a_slice_makes_the_same_track() -> None:
    """A run of consecutive rows is read as a slice of the columns (make_track's fast
    path); any other set of rows is gathered.  Both give the track of the definition,
    with the same Memcpy/Memset subset."""
    trace = flat_trace(3_000, seed=7, memcpy_every=5)
    rng = np.random.default_rng(2)
    trace.dur_ns[:] = rng.choice([0, 1_000, 5_000, 50_000], size=len(trace))
    cases = [np.arange(len(trace)), np.arange(100, 2_000), np.arange(0, len(trace), 3),
             rng.permutation(len(trace))[:500]]
    copies = [int(Kind.MEMCPY), int(Kind.MEMSET)]
    for rows in cases:
        track = make_track(trace, rows, trace.start_ns)
        ref_rows, ts, end, maxend = _reference_track(trace, rows, trace.start_ns)
        assert np.array_equal(track.rows, ref_rows)
        assert np.array_equal(track.ts, ts) and np.array_equal(track.end, end)
        assert np.array_equal(track.maxend, maxend)
        special = ref_rows[np.isin(trace.kind[ref_rows], copies)]
        got = track.special.rows if track.special is not None else np.zeros(0, np.int64)
        assert np.array_equal(got, special)
    assert make_track(trace, cases[0], trace.start_ns).special is not None  # copies were met
