"""Nesting depth of each row of a trace whose rows are sorted by (lane, start,
-duration): ``depths``, for ``columns.build_trace``."""

from __future__ import annotations

from functools import partial

import numpy as np

from profiling.trace.column_threads import in_threads
from profiling.trace.model import Kind
from profiling.trace.spare_arrays import PIECE, SpareArrays

_OPENS = np.ones(256, dtype=bool)  # a kind that can open a slice
_OPENS[[Kind.INSTANT, Kind.FLOW]] = False


def depths(
    ts: np.ndarray, dur: np.ndarray, kind: np.ndarray, lane_start: np.ndarray,
    spare: SpareArrays | None = None,
) -> np.ndarray:
    """Nesting depth per row, lane by lane (rows sorted by start, longest first).

    A row's depth is the number of earlier slices on its lane still open at its
    start: (slices opened before it) - (slices that ended by its start), both
    counted with numpy.  Instants, flows and zero-length slices open nothing.
    Pieces of each lane (a piece's scratch is reused, not fresh memory) on threads:
    the lane's ends are filled piece by piece, sorted, then rows counted by piece.
    """
    depth = (spare or SpareArrays()).empty(len(ts), np.int16)
    depth.fill(0)
    opens = _OPENS[kind]
    opens &= dur > 0
    pieces = []  # (lane, start, stop, slices opened on the lane before the piece)
    ends: list[np.ndarray] = []  # of each lane with 2 rows or more: ts + dur of its openers
    for lo, hi in zip(lane_start[:-1].tolist(), lane_start[1:].tolist(), strict=True):
        if hi - lo < 2:
            continue
        opened = 0
        for start in range(lo, hi, PIECE):
            stop = min(start + PIECE, hi)
            pieces.append((len(ends), start, stop, opened))
            opened += int(np.count_nonzero(opens[start:stop]))
        ends.append(np.empty(opened, dtype=np.int64))
    rows = len(ts)
    in_threads(*(partial(_fill_ends, ends[lane], ts, dur, opens, start, stop, opened)
                 for lane, start, stop, opened in pieces), rows=rows)
    # a merge sort, fast on ends that come nearly sorted (6x here)
    in_threads(*(partial(lane_ends.sort, kind="stable") for lane_ends in ends), rows=rows)
    in_threads(*(partial(_piece_depths, depth, ts, opens, ends[lane], start, stop, opened)
                 for lane, start, stop, opened in pieces), rows=rows)
    return depth


def _fill_ends(ends: np.ndarray, ts: np.ndarray, dur: np.ndarray, opens: np.ndarray,
               start: int, stop: int, opened: int) -> None:
    """A piece's share of its lane's ``ends``, from place ``opened``: ts + dur of its
    rows that open a slice."""
    piece = opens[start:stop]
    part = ts[start:stop][piece]
    part += dur[start:stop][piece]
    ends[opened:opened + part.shape[0]] = part


def _piece_depths(depth: np.ndarray, ts: np.ndarray, opens: np.ndarray, ends: np.ndarray,
                  start: int, stop: int, opened: int) -> None:
    """``depth[start:stop]`` of a piece of one lane (``ends``: the lane's, sorted;
    ``opened``: slices the lane opened before the piece)."""
    piece = opens[start:stop]
    count = np.cumsum(piece, dtype=np.int64)
    count -= piece
    count += opened  # slices opened before each row
    times = ts[start:stop]
    # less those ended by it: found among the ends from the piece's first start to its
    # last (a binary search over far fewer ends; rows come sorted, min/max in any case)
    lo, hi = np.searchsorted(ends, [times.min(), times.max()], side="right").tolist()
    closed = np.searchsorted(ends[lo:hi], times, side="right")
    closed += lo
    count -= closed
    np.clip(count, 0, 32767, out=count)
    depth[start:stop] = count
