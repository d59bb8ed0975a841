"""What one timeline row shows, cell by cell (pure numpy; no Textual).

A *track* is a time-ordered set of trace rows drawn on one screen row: one
nesting depth of a lane, a folded lane's summary, or a folded GPU device.
``cells()`` maps a time window onto ``width`` cells with ``width + 1`` binary
searches, never looking at the events in between, so a track of a million
events costs the same per frame as one of a hundred:

* ``searchsorted`` on the start times gives, for every cell edge, how many
  events start before it; the difference is the number starting in the cell;
* a running maximum of end times (precomputed once per track) tells whether an
  earlier event still covers the cell, and which one (the earliest that reaches
  furthest, so a folded lane shows its outermost events).

A cell is then owned by one event (drawn as part of that event's box, with its
name where it fits) or is *dense* (several events start in it; drawn as a
shade whose darkness says how many).  Memcpy/Memset rows are a second, small
track drawn over the first so a copy is never hidden by its neighbours.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

import numpy as np

from profiling.analysis.ranges import distinct
from profiling.cores import usable_cores
from profiling.trace.model import Kind, Trace

T = TypeVar("T")
_SPECIAL_KINDS = np.array([Kind.MEMCPY, Kind.MEMSET], dtype=np.uint8)
_DEVICE_KINDS = np.array([Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET], dtype=np.uint8)


@dataclass
class Track:
    rows: np.ndarray  # int64 trace rows in start order
    ts: np.ndarray  # float64 start, ns relative to the trace origin
    end: np.ndarray  # float64 end
    maxend: np.ndarray  # running maximum of ``end``
    argmax: np.ndarray  # int64: index of the earliest event reaching ``maxend``
    special: Track | None = None  # the Memcpy/Memset subset, drawn on top
    sorted_rows: bool = True  # ``rows`` increasing (a single lane), for fast lookups

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def position(self, row: int) -> int:
        """Index of trace row ``row`` in this track, or -1."""
        if self.sorted_rows:
            i = int(np.searchsorted(self.rows, row))
            return i if i < len(self.rows) and int(self.rows[i]) == row else -1
        hits = np.flatnonzero(self.rows == row)
        return int(hits[0]) if hits.size else -1


def make_track(trace: Trace, rows: np.ndarray, origin: int, *, with_special: bool = True) -> Track:
    """A track over ``rows`` (trace row numbers), sorted by start time if needed."""
    rows = np.asarray(rows, dtype=np.int64)
    sorted_rows = bool(rows.size < 2 or np.all(rows[1:] > rows[:-1]))
    # a run of consecutive rows (a lane's drawable rows, nearly always) is read as a
    # slice of the columns, not gathered row by row: a folded lane is all its rows
    picked: slice | np.ndarray = rows
    if sorted_rows and rows.size and int(rows[-1]) - int(rows[0]) + 1 == rows.size:
        picked = slice(int(rows[0]), int(rows[-1]) + 1)
    ts_i, dur_i = trace.ts_ns[picked], trace.dur_ns[picked]
    if rows.size > 1 and not (sorted_rows and np.all(ts_i[1:] >= ts_i[:-1])):
        order = start_order(ts_i, dur_i)
        rows, ts_i, dur_i = rows[order], ts_i[order], dur_i[order]
        sorted_rows = bool(np.all(rows[1:] > rows[:-1]))
        picked = rows
    ts = (ts_i - origin).astype(np.float64)
    end = ts + dur_i  # float64: exact below 2**53 ns
    if rows.size:
        maxend = np.maximum.accumulate(end)
        # the last event (at or before each) that reached past every earlier one: the
        # index of the latest True of ``reach`` so far (a count and a gather, twice as
        # fast as a running maximum over the indexes; a job's first frame makes a
        # folded track of every lane on screen, eight ranks' rows)
        reach = np.empty(rows.size, dtype=bool)
        reach[0] = True
        reach[1:] = end[1:] > maxend[:-1]
        argmax = np.flatnonzero(reach).astype(np.int64, copy=False)[np.cumsum(reach) - 1]
    else:
        maxend = end.copy()
        argmax = np.zeros(0, dtype=np.int64)
    special = None
    if with_special and rows.size:
        mask = np.isin(trace.kind[picked], _SPECIAL_KINDS)
        if mask.any():
            special = make_track(trace, rows[mask], origin, with_special=False)
    return Track(rows, ts, end, maxend, argmax, special, sorted_rows)


def start_order(ts: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """The order of (start, longest first): ``np.lexsort((-dur, ts))``, computed as a
    stable sort of the starts alone, then the few equal starts put longest first.

    A folded group's rows are its lanes' sorted runs one after another, which a
    stable sort (timsort) merges in O(n log runs); lexsort sorted them from scratch:
    3.1 s against 0.25 s for 8 runs of 1.5 M starts, on the first frame of a job.
    """
    order = np.argsort(ts, kind="stable")
    start = ts[order]
    tie = np.flatnonzero(start[1:] == start[:-1])
    if tie.size:
        at = distinct(np.concatenate((tie, tie + 1)))  # positions inside runs of equal starts
        order[at] = order[at[np.lexsort((-dur[order[at]], start[at]))]]
    return order


@dataclass
class Cells:
    """One screen row: per cell, the owning trace row (-1: empty) and, for
    dense cells, how many events start there (0: not dense)."""

    owner: np.ndarray  # int64 trace rows
    dense: np.ndarray  # int64 counts
    alt: np.ndarray | None = None  # bool: odd position in its track (alternate shade)
    linked: np.ndarray | None = None  # bool: a launch link of the selection is here


def cells(track: Track, t0: float, ns_per_cell: float, width: int) -> Cells:
    """Which event each of ``width`` cells shows, for the window starting at ``t0``."""
    owner = np.full(width, -1, dtype=np.int64)
    dense = np.zeros(width, dtype=np.int64)
    n = len(track)
    if n == 0 or width <= 0:
        return Cells(owner, dense)
    edges = t0 + ns_per_cell * np.arange(width + 1, dtype=np.float64)
    s = np.searchsorted(track.ts, edges, side="left")
    n_start = np.diff(s)
    left, right = edges[:-1], edges[1:]
    prev = s[:-1] - 1
    has_prev = prev >= 0
    prev_c = np.maximum(prev, 0)
    pm = np.where(has_prev, track.maxend[prev_c], -np.inf)
    pa = track.argmax[prev_c]
    spill = has_prev & (pm > left)
    full = spill & (pm >= right)
    partial = spill & ~full
    first = np.minimum(s[:-1], n - 1)

    idx = np.full(width, -1, dtype=np.int64)
    idx[full] = pa[full]
    sel = partial & (n_start == 0)
    idx[sel] = pa[sel]
    sel = ~spill & (n_start == 1)
    idx[sel] = first[sel]
    sel = partial & (n_start == 1)
    if sel.any():
        cov_first = np.minimum(track.end[first], right) - track.ts[first]
        cov_spill = pm - left
        idx[sel] = np.where(cov_first[sel] > cov_spill[sel], first[sel], pa[sel])
    sel = ~full & (n_start >= 2)
    idx[sel] = first[sel]
    dense[sel] = n_start[sel]

    hit = idx >= 0
    owner[hit] = track.rows[idx[hit]]
    return Cells(owner, dense, (idx % 2 == 1) & hit)


def overlay(base: Cells, top: Cells) -> Cells:
    """``top`` drawn over ``base`` wherever ``top`` shows something."""
    mask = top.owner >= 0
    if not mask.any():
        return base
    owner = base.owner.copy()
    dense = base.dense.copy()
    owner[mask] = top.owner[mask]
    dense[mask] = top.dense[mask]
    return Cells(owner, dense, _alt(base, mask))


def _alt(base: Cells, cleared: np.ndarray | slice) -> np.ndarray:
    alt = np.zeros(base.owner.shape[0], dtype=bool) if base.alt is None else base.alt.copy()
    alt[cleared] = False
    return alt


def mark(base: Cells, row: int, c0: float, c1: float) -> Cells:
    """Draw one event (e.g. the selection) over ``base`` from cell ``c0`` to ``c1``."""
    width = base.owner.shape[0]
    a = int(np.floor(c0))
    b = max(int(np.ceil(c1)), a + 1)
    a, b = max(a, 0), min(b, width)
    if a >= b:
        return base
    owner = base.owner.copy()
    dense = base.dense.copy()
    owner[a:b] = row
    dense[a:b] = 0
    return Cells(owner, dense, _alt(base, slice(a, b)))


def track_cells(
    track: Track, t0: float, ns_per_cell: float, width: int, selected: int = -1
) -> Cells:
    """The cells of a track with its Memcpy/Memset rows and the selection on top."""
    out = cells(track, t0, ns_per_cell, width)
    if track.special is not None:
        out = overlay(out, cells(track.special, t0, ns_per_cell, width))
    if selected >= 0:
        i = track.position(selected)
        if i >= 0:
            c0 = (track.ts[i] - t0) / ns_per_cell
            c1 = (track.end[i] - t0) / ns_per_cell
            if c1 >= 0 and c0 < width:
                out = mark(out, selected, c0, c1)
    return out


@dataclass(frozen=True)
class Run:
    """Consecutive cells showing the same event (or one dense cell)."""

    start: int
    stop: int
    row: int  # -1: empty
    dense: int  # events starting in the cell when dense, else 0
    alt: bool = False  # draw in the alternate shade (every other event of a track)
    linked: bool = False  # linked to the selection (its launch, op or GPU work)


def runs(c: Cells) -> list[Run]:
    """Group cells into runs: one per event box, one per dense cell, one per gap."""
    width = c.owner.shape[0]
    if width == 0:
        return []
    change = np.ones(width, dtype=bool)
    change[1:] = (c.owner[1:] != c.owner[:-1]) | (c.dense[1:] > 0) | (c.dense[:-1] > 0)
    if c.linked is not None:
        change[1:] |= c.linked[1:] != c.linked[:-1]
    starts = np.flatnonzero(change).tolist()
    stops = starts[1:] + [width]
    owner = c.owner.tolist()
    dense = c.dense.tolist()
    alt = c.alt.tolist() if c.alt is not None else [False] * width
    linked = c.linked.tolist() if c.linked is not None else [False] * width
    return [Run(a, b, owner[a], dense[a], alt[a], linked[a])
            for a, b in zip(starts, stops, strict=False)]  # fmt: skip


def step(track: Track, row: int, direction: int, t: float) -> int:
    """The trace row after (``direction`` 1) or before (-1) ``row`` on this track;
    with no usable ``row``, the first event at or after time ``t``."""
    n = len(track)
    if n == 0:
        return -1
    i = track.position(row) if row >= 0 else -1
    if i < 0:
        j = int(np.searchsorted(track.ts, t, side="left"))
        if direction < 0:
            j -= 1
        j = min(max(j, 0), n - 1)
        return int(track.rows[j])
    j = min(max(i + direction, 0), n - 1)
    return int(track.rows[j])


@dataclass
class TrackCache:
    """Tracks of one trace, built on first use and kept."""

    trace: Trace
    origin: int
    _tracks: dict[tuple, Track] = field(default_factory=dict)
    _depths: dict[int, int] = field(default_factory=dict)

    def _drawable(self, lane: int) -> np.ndarray:
        sl = self.trace.lane_rows(lane)
        rows = np.arange(sl.start, sl.stop, dtype=np.int64)
        return rows[self.trace.kind[sl] != Kind.FLOW]

    def depths(self, lane: int) -> int:
        """How many depth rows the lane unfolds to (at least 1).  A merged job knows
        them all without a pass over its rows (``JobTrace.drawn_depths``)."""
        if lane not in self._depths:
            known = getattr(self.trace, "drawn_depths", None)
            if known is not None:
                self._depths.update(enumerate(known()))
                return self._depths[lane]
            rows = self._drawable(lane)
            self._depths[lane] = int(self.trace.depth[rows].max()) + 1 if rows.size else 1
        return self._depths[lane]

    def lane(self, lane: int, depth: int | None = None) -> Track:
        """Depth ``depth`` of ``lane``, or its folded summary when ``depth`` is None."""
        key = ("lane", lane, depth)
        track = self._tracks.get(key)
        if track is None:
            rows = self._drawable(lane)
            if depth is not None:
                rows = rows[self.trace.depth[rows] == depth]
            elif self.trace.lanes[lane].kind == "gpu":
                device = rows[np.isin(self.trace.kind[rows], _DEVICE_KINDS)]
                rows = device if device.size else rows
            track = make_track(self.trace, rows, self.origin)
            self._tracks[key] = track
        return track

    def prefetch(self, keys: list[tuple]) -> None:
        """Build the tracks of ``keys`` (``("lane", lane, depth)``, ``("group", g)``)
        that are not built yet, on a few threads, lanes first (a group's track is made
        from its lanes').  Their work is numpy, which releases the GIL, and a first
        screen of folded lanes and devices (a job: every rank's) is dozens of tracks
        over millions of rows, built one after another by ``render_line`` otherwise."""
        groups = [k for k in keys if k[0] == "group"]
        lanes = [k for k in keys if k[0] == "lane"]
        lanes += [("lane", lane, None) for k in groups for lane in self.trace.groups[k[1]].lanes]
        for batch in (lanes, groups):
            todo = list(dict.fromkeys(k for k in batch if k not in self._tracks))
            todo.sort(key=self._size, reverse=True)  # the biggest first: none left for last
            on_threads(self.build, todo)

    def _size(self, key: tuple) -> int:
        """Rows under a track key, at most (its lanes' rows)."""
        lanes = [key[1]] if key[0] == "lane" else self.trace.groups[key[1]].lanes
        spans = (self.trace.lane_rows(lane) for lane in lanes)
        return sum(sl.stop - sl.start for sl in spans)

    def build(self, key: tuple) -> Track:
        """The track of ``key`` (see ``prefetch``), built if needed."""
        return self.lane(key[1], key[2]) if key[0] == "lane" else self.group(key[1])

    def group(self, group: int) -> Track:
        """A folded process or device: the union of its lanes' summaries."""
        key = ("group", group)
        track = self._tracks.get(key)
        if track is None:
            parts = [self.lane(lane).rows for lane in self.trace.groups[group].lanes]
            rows = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            track = make_track(self.trace, rows, self.origin)
            self._tracks[key] = track
        return track


def on_threads(fn: Callable[[T], object], items: list[T]) -> None:
    """``fn`` of every item, on the track threads when there are several (numpy work
    that releases the GIL: tracks, and the busy shares of folded rows)."""
    if len(items) > 1:
        list(_pool().map(fn, items))
    elif items:
        fn(items[0])


@cache
def _pool() -> ThreadPoolExecutor:
    """The threads ``TrackCache.prefetch`` builds on (made on first use, kept)."""
    return ThreadPoolExecutor(max_workers=min(8, usable_cores()),
                              thread_name_prefix="attn-tui tracks")
