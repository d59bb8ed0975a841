"""A folded row's one-line summary: how busy the lane is, cell by cell (pure numpy).

A folded process or lane is drawn as a strip whose glyph height says which share
of each cell's time some event of it was running (``▁`` a little, ``█`` all of
it), like Perfetto's summary track of a collapsed process; its label adds the
event count and the busy share of the window.  The busy time is the union of the
track's events, merged once per track (``busy_of``); a frame then costs two
binary searches per cell edge, whatever the number of events.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.tracks import Track

BLOCKS = "▁▂▃▄▅▆▇█"
"""Busy share of a cell, from a sliver to all of it (an idle cell is a space)."""


@dataclass(frozen=True)
class Busy:
    """The union of a track's events as disjoint intervals, with the busy time
    before each (``cum[i]``: busy ns before ``starts[i]``)."""

    starts: np.ndarray
    ends: np.ndarray
    cum: np.ndarray

    @property
    def total(self) -> float:
        return float(self.cum[-1]) if self.cum.size else 0.0


def busy_of(track: Track) -> Busy:
    """Merge the track's events (in start order, ``maxend`` precomputed) into disjoint
    busy intervals: a new interval starts where an event starts after every earlier
    one has ended."""
    return busy_from(track.ts, track.maxend)


def busy_from(ts: np.ndarray, maxend: np.ndarray) -> Busy:
    """``busy_of`` over start times (ascending) and the running maximum of the ends."""
    n = int(ts.shape[0])
    if n == 0:
        z = np.zeros(0)
        return Busy(z, z, np.zeros(1))
    new = np.ones(n, dtype=bool)
    new[1:] = ts[1:] > maxend[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, n - 1)
    starts = ts[first]
    ends = maxend[last]
    cum = np.concatenate([[0.0], np.cumsum(ends - starts)])
    return Busy(starts, ends, cum)


def busy_before(b: Busy, t: np.ndarray) -> np.ndarray:
    """Busy ns before each time in ``t``."""
    if not b.starts.size:
        return np.zeros_like(t, dtype=np.float64)
    i = np.searchsorted(b.starts, t, side="right") - 1
    ic = np.maximum(i, 0)
    inside = np.clip(t - b.starts[ic], 0.0, b.ends[ic] - b.starts[ic])
    return np.where(i >= 0, b.cum[ic] + inside, 0.0)


def busy_cells(b: Busy, t0: float, ns_per_cell: float, width: int) -> np.ndarray:
    """The busy share (0..1) of each of ``width`` cells from ``t0``."""
    edges = t0 + ns_per_cell * np.arange(width + 1, dtype=np.float64)
    return np.clip(np.diff(busy_before(b, edges)) / ns_per_cell, 0.0, 1.0)


def strip_text(share: np.ndarray) -> str:
    """One glyph per cell: a space when idle, else ``BLOCKS`` by share (any busy
    time at all shows at least ``▁``, so a short event is never lost)."""
    level = np.ceil(share * len(BLOCKS)).astype(np.int64)
    chars = np.array([" ", *BLOCKS])
    return "".join(chars[np.clip(level, 0, len(BLOCKS))].tolist())


def window_share(b: Busy, t0: float, t1: float) -> float:
    """The busy share of the window ``[t0, t1)``."""
    if t1 <= t0:
        return 0.0
    lo, hi = busy_before(b, np.array([t0, t1], dtype=np.float64)).tolist()
    return (hi - lo) / (t1 - t0)
