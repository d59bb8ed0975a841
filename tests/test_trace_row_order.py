"""``sort_rows.row_order`` (combined sort keys) gives what ``np.lexsort`` gave, on
random rows with many ties, tiny inputs, and values too far apart for a combined
key (which take the lexsort); the depths computed from that order are the same."""

from __future__ import annotations

import numpy as np
import pytest

from profiling.trace.depths import depths
from profiling.trace.model import Kind
from profiling.trace.sort_rows import row_order


def _old_depths(ts, dur, kind, lane_start):
    depth = np.zeros(len(ts), dtype=np.int16)
    opens = (kind != Kind.INSTANT) & (kind != Kind.FLOW) & (dur > 0)
    for lane in range(len(lane_start) - 1):
        lo, hi = int(lane_start[lane]), int(lane_start[lane + 1])
        if hi - lo < 2:
            continue
        lane_opens = opens[lo:hi]
        opened_before = np.cumsum(lane_opens) - lane_opens
        ends = np.sort((ts[lo:hi] + dur[lo:hi])[lane_opens])
        closed_by = np.searchsorted(ends, ts[lo:hi], side="right")
        depth[lo:hi] = np.clip(opened_before - closed_by, 0, 32767)
    return depth


def _rows(seed: int, n: int, span: int, lanes: int):
    rng = np.random.default_rng(seed)
    lane = rng.integers(0, lanes, n).astype(np.int32)
    ts = rng.integers(0, span, n).astype(np.int64) + 10**15
    dur = rng.choice([0, 0, 1, 5, 50, span], n).astype(np.int64)
    kind = rng.choice([Kind.CPU_OP, Kind.KERNEL, Kind.INSTANT, Kind.FLOW], n).astype(np.uint8)
    return lane, ts, dur, kind


CASES = [
    (0, 5000, 100, 7),
    (1, 20000, 10**6, 40),
    (2, 3, 5, 1),
    (3, 1, 5, 1),
    (4, 0, 5, 1),
    (5, 4000, 30, 300),
]


@pytest.mark.parametrize("seed,n,span,lanes", CASES)
def test_same_order_and_depths_as_before(seed, n, span, lanes):
    lane, ts, dur, kind = _rows(seed, n, span, lanes)
    valid = np.random.default_rng(seed).random(n) > 0.1
    rows = np.flatnonzero(valid)
    order = row_order(rows, lane, ts, dur)
    assert np.array_equal(order, rows[np.lexsort((-dur[rows], ts[rows], lane[rows]))])
    lane_start = np.searchsorted(lane[order], np.arange(lanes + 3)).astype(np.int64)
    got = depths(ts[order], dur[order], kind[order], lane_start)
    assert got.dtype == np.int16
    assert np.array_equal(got, _old_depths(ts[order], dur[order], kind[order], lane_start))
    if n > 100:
        assert got.max() > 0  # the rows nest: the test compares something


def test_times_too_far_apart_take_the_old_route():
    lane, ts, dur, kind = _rows(9, 3000, 100, 5)
    ts[::7] = -(4 * 10**18)  # a combined key would not fit int64
    dur[::11] = 9_200_000_000_000_000_000  # ends wrap around, as they did before
    rows = np.arange(ts.size)
    order = row_order(rows, lane, ts, dur)
    assert np.array_equal(order, np.lexsort((-dur, ts, lane)))
    lane_start = np.searchsorted(lane[order], np.arange(6)).astype(np.int64)
    got = depths(ts[order], dur[order], kind[order], lane_start)
    assert np.array_equal(got, _old_depths(ts[order], dur[order], kind[order], lane_start))
