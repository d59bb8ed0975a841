"""The rows inside many region instances, read in blocks (compare's op names).

``compare`` names a region's implementation from, among other things, the set
of op names inside its instances: on a 1 GB trace 38,400 ``attn_fwd``
instances holding a million rows.  Listing every row with the instance it
belongs to (``regions.cpu_rows_flat``) made six arrays of a million entries to
find a few dozen names; here the instances are taken a block at a time and only
each block's distinct names are kept, so the work arrays stay small (and are
reused: fresh memory, not arithmetic, was most of the cost).
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.ranges import concat_ranges, distinct
from profiling.trace.model import Kind, Trace

BLOCK_ROWS = 1 << 17
"""Rows looked at per block (a few MB of work arrays)."""


def lane_bounds(trace: Trace, lane: np.ndarray, start: np.ndarray,
                end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi): the rows of each lane that start in [start, end] (one search a lane)."""
    lo, hi = np.zeros(lane.shape[0], dtype=np.int64), np.zeros(lane.shape[0], dtype=np.int64)
    for ln in distinct(lane).tolist():
        sel = np.flatnonzero(lane == ln)
        lanes = trace.lane_rows(ln)
        ts = trace.ts_ns[lanes]
        lo[sel] = np.searchsorted(ts, start[sel], side="left") + lanes.start
        hi[sel] = np.searchsorted(ts, end[sel], side="right") + lanes.start
    return lo, hi


def op_name_ids_within(trace: Trace, lane: np.ndarray, start: np.ndarray,
                       end: np.ndarray) -> np.ndarray:
    """Distinct name ids (ascending) of the ``cpu_op`` rows wholly inside some instance
    (by lane, start and end): ``np.unique`` of the op rows' names of
    ``cpu_rows_flat``.  An annotation's own row, which that leaves out, is never an
    op, so no row of an instance needs to be known here."""
    lo, hi = lane_bounds(trace, lane, start, end)
    seen = np.zeros(len(trace.strings), dtype=bool)
    counts = np.cumsum(np.maximum(hi - lo, 0))
    a = 0
    while a < lo.shape[0]:
        done = int(counts[a - 1]) if a else 0
        b = max(int(np.searchsorted(counts, done + BLOCK_ROWS, side="right")), a + 1)
        pos = concat_ranges(lo[a:b], hi[a:b])
        bound = np.repeat(end[a:b], np.maximum(hi[a:b] - lo[a:b], 0))
        ok = (trace.kind[pos] == int(Kind.CPU_OP)) & (trace.ts_ns[pos] + trace.dur_ns[pos] <= bound)
        seen[trace.name_id[pos[ok]]] = True
        a = b
    return np.flatnonzero(seen)
