"""The timeline's state and moves, without Textual: rows and folds, the time
window, the row cursor, the selected event and the jump history.

The ``Timeline`` widget only draws what this says and forwards keys to it, so
every interaction (fold, zoom, pan, select, jump across CPU/GPU) is testable
on plain objects.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace.model import GPU_KINDS, Kind, Trace
from tui.density import Busy, busy_of
from tui.link_marks import LinkSet, link_set, marked_mask, screen_rows
from tui.links import LinkLookup
from tui.marks import Marks
from tui.range_data import event_span
from tui.rows import Folds, RowSpec, build_rows, default_folds
from tui.timeline_lanes import LaneArrangement
from tui.timeline_moves import first_visible
from tui.tracks import Cells, Track, TrackCache, on_threads, track_cells
from tui.tracks import step as track_step
from tui.viewport import PAN_STEP, Viewport

_EMPTY_TRACK_ROWS = np.zeros(0, dtype=np.int64)
RANGE_STEP = 0.05
"""One shift+pan press moves the range's end by a twentieth of the window."""


class TimelineModel(LaneArrangement):  # LaneArrangement: pin, hide, restore, fold a process
    def __init__(self, trace: Trace, links: LinkLookup | None = None, width: int = 80) -> None:
        self.trace = trace
        self.links = links if links is not None else LinkLookup(AnalysedTrace(trace))
        self.origin = trace.start_ns
        self.cache = TrackCache(trace, self.origin)
        self.depths = [self.cache.depths(i) for i in range(len(trace.lanes))]
        self.folds: Folds = default_folds(trace, self.depths)
        self.rows: list[RowSpec] = []
        self.viewport = Viewport(total=max(trace.end_ns_max - self.origin, 1), width=width)
        self.cursor = 0
        self.selected = -1
        self.history: list[int] = []
        self.range: tuple[int, int] | None = None  # marked range, ns from the origin (``m``)
        self.marks = Marks()  # named marks, ns from the origin (tui.marks)
        self.version = 0  # bumps whenever anything drawn changes
        self.label_cells = 16  # set by the widget; the ruler lines up with it
        self.where: dict[tuple, int] = {}  # (lane, depth) -> screen row (link_marks.screen_rows)
        self._link_set = LinkSet()
        self._link_key: tuple[int, bool] = (-1, False)
        self._busy: dict[tuple, Busy] = {}
        self.rebuild()

    # ---- rows and folds ----

    def rebuild(self) -> None:
        key = self.rows[self.cursor].key if self.rows and self.cursor < len(self.rows) else None
        self.rows = build_rows(self.trace, self.folds, self.depths)
        self.where = screen_rows(self.rows, self.trace)
        if key is not None:
            for i, spec in enumerate(self.rows):
                if spec.key == key:
                    self.cursor = i
                    break
        self.cursor = min(max(self.cursor, 0), max(len(self.rows) - 1, 0))
        self.version += 1

    @property
    def cursor_spec(self) -> RowSpec | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def toggle_fold(self, index: int | None = None) -> None:
        index = self.cursor if index is None else index
        if not 0 <= index < len(self.rows):
            return
        spec = self.rows[index]
        if spec.kind == "depth":  # fold the lane this depth row belongs to
            spec = next(s for s in self.rows if s.lane == spec.lane and s.kind == "lane")
        self.folds.toggle(spec)
        self.cursor = self.rows.index(spec)
        self.rebuild()

    def set_all_folds(self, open_: bool) -> None:
        self.folds.set_all(self.trace, self.depths, open_)
        self.rebuild()

    def move_cursor(self, delta: int) -> None:
        self.cursor = min(max(self.cursor + delta, 0), max(len(self.rows) - 1, 0))
        self.version += 1

    # ---- tracks and cells ----

    def track(self, spec: RowSpec) -> Track | None:
        key = track_key(spec)
        return None if key is None else self.cache.build(key)

    def prefetch(self, first: int, last: int) -> None:
        """Build the tracks of screen rows ``first``..``last`` at once, on threads
        (``TrackCache.prefetch``): what the next frame draws one row at a time."""
        first, last = max(first, 0), max(last, 0)
        keys = [track_key(spec) for spec in self.rows[first:last]]
        self.cache.prefetch([k for k in keys if k is not None])
        folded = [i for i in range(first, min(last, len(self.rows)))
                  if self.rows[i].folded and self.rows[i].key not in self._busy]
        on_threads(self.summary, folded)  # their labels' busy shares: a pass over each track

    def row_cells(self, index: int) -> Cells | None:
        spec = self.rows[index]
        track = self.track(spec)
        if track is None:
            return None
        vp = self.viewport
        out = track_cells(track, vp.start, vp.ns_per_cell, vp.width, self.selected)
        links = self.link_set
        if links:
            lanes = self.trace.groups[spec.group].lanes if spec.kind == "group" else [spec.lane]
            out.linked = marked_mask(links, lanes, spec.depth, vp.start, vp.ns_per_cell, vp.width)
        return out

    @property
    def link_set(self) -> LinkSet:
        """The selection's launch links (``tui.link_marks``), computed once per
        selection (and once more when the analysis has linked the trace)."""
        key = (self.selected, bool(self.links.ready))
        if key != self._link_key:
            self._link_key = key
            self._link_set = link_set(self.trace, self.links, self.selected, self.origin)
        return self._link_set

    def summary(self, index: int) -> Busy | None:
        """A folded row's busy intervals (``tui.density``): None for other rows."""
        spec = self.rows[index]
        if not spec.folded:
            return None
        key = spec.key
        if key not in self._busy:
            track = self.track(spec)
            if track is None:
                return None
            self._busy[key] = busy_of(track)
        return self._busy[key]

    def event_at(self, index: int, col: int) -> int:
        """The trace row drawn at cell ``col`` of row ``index`` (-1: nothing)."""
        if not 0 <= index < len(self.rows) or not 0 <= col < self.viewport.width:
            return -1
        c = self.row_cells(index)
        return -1 if c is None else int(c.owner[col])

    def rel(self, row: int) -> tuple[float, float]:
        t0 = float(self.trace.ts_ns[row] - self.origin)
        return t0, t0 + float(self.trace.dur_ns[row])

    def index_of_event(self, row: int) -> int:
        """The screen row that shows trace row ``row`` under the current folds."""
        lane = int(self.trace.lane[row])
        depth = int(self.trace.depth[row])
        best = -1
        for i, spec in enumerate(self.rows):
            if spec.kind == "group" and spec.folded and lane in self.trace.groups[spec.group].lanes:
                return i
            if spec.lane == lane:
                if spec.depth is None or spec.depth == depth:
                    return i
                if best < 0:
                    best = i
        return best

    # ---- selection and jumps ----

    def select(self, row: int, *, remember: bool = True, reveal: bool = True) -> None:
        """Select trace row ``row`` (-1 clears), unfolding what hides it and
        panning it into view."""
        if row == self.selected:
            return
        if remember and self.selected >= 0:
            self.history.append(self.selected)
            del self.history[:-100]
        self.selected = row
        if row >= 0 and reveal:
            self._reveal(row)
        self.version += 1

    def _reveal(self, row: int) -> None:
        lane = int(self.trace.lane[row])
        group = self.trace.lanes[lane].group
        changed = False
        if lane in self.folds.hidden:
            self.folds.hidden.discard(lane)
            changed = True
        if group in self.folds.groups_folded and lane not in self.folds.pinned:
            self.folds.groups_folded.discard(group)
            changed = True
        if int(self.trace.depth[row]) > 0 and lane not in self.folds.lanes_open:
            self.folds.lanes_open.add(lane)
            changed = True
        if changed:
            self.rebuild()
        index = self.index_of_event(row)
        if index >= 0:
            self.cursor = index
        t0, t1 = self.rel(row)
        self.viewport.ensure_visible(t0, t1)

    def step(self, direction: int) -> None:
        """Select the next/previous event on the cursor's row."""
        spec = self.cursor_spec
        if spec is None:
            return
        track = self.track(spec)
        if track is None or len(track) == 0:
            return
        vp = self.viewport
        current = self.selected if self.selected >= 0 and track.position(self.selected) >= 0 else -1
        row = first_visible(track, vp.start, vp.end) if current < 0 else -1
        if row < 0:  # a selection on this row, or none in the window: step in time
            row = track_step(track, current, direction, vp.start)
        if row >= 0:
            self.select(row, remember=False)

    def follow_link(self) -> int:
        """Jump across the CPU/GPU boundary: a GPU event to the call that launched
        it; a call or op to the first GPU event it launched.  Returns the new row."""
        row = self.selected
        if row < 0:
            return -1
        if int(self.trace.kind[row]) in GPU_KINDS:
            target = self.links.launch_of(row)
        else:
            gpu = self.links.first_launched(row)  # no sort of a ProfilerStep's kernels
            target = int(gpu[0]) if gpu.size else -1
        if target >= 0:
            self.select(target)
        return target

    def back(self) -> int:
        """Return to the event selected before the last jump."""
        if not self.history:
            return -1
        row = self.history.pop()
        self.select(row, remember=False)
        return row

    def linked(self, row: int) -> tuple[int, int, np.ndarray]:
        """(launch call, launching op, GPU rows) for the details panel."""
        if row < 0:
            return -1, -1, _EMPTY_TRACK_ROWS
        if int(self.trace.kind[row]) in GPU_KINDS:
            return self.links.launch_of(row), self.links.op_of(row), _EMPTY_TRACK_ROWS
        op = self.links.op_of(row) if int(self.trace.kind[row]) == Kind.RUNTIME else -1
        return -1, op, self.links.first_launched(row)  # the first to run, then the rest

    # ---- time window ----

    def _anchor(self) -> float | None:
        if self.selected >= 0:
            t0, t1 = self.rel(self.selected)
            col = self.viewport.col_at((t0 + t1) / 2)
            if 0 <= col <= self.viewport.width:
                return col
        return None

    def zoom_in(self, anchor_col: float | None = None) -> None:
        self.viewport.zoom_in(self._anchor() if anchor_col is None else anchor_col)
        self.version += 1

    def zoom_out(self, anchor_col: float | None = None) -> None:
        self.viewport.zoom_out(self._anchor() if anchor_col is None else anchor_col)
        self.version += 1

    def pan(self, direction: float) -> None:
        self.viewport.pan(direction * PAN_STEP)
        self.version += 1

    def fit_all(self) -> None:
        self.viewport.fit_all()
        self.version += 1

    def zoom_to_selection(self) -> bool:
        """Fit the selected event; an annotation (``attn_fwd``) with the GPU work
        launched inside it (``range_data.event_span``, once the trace is linked)."""
        if self.selected < 0:
            return False
        if int(self.trace.kind[self.selected]) == Kind.USER_ANNOTATION:
            lo, hi, _ = event_span(self.trace, self.links, self.selected)
            self.viewport.show(float(lo), float(hi))
        else:
            self.viewport.show(*self.rel(self.selected))
        self.version += 1
        return True

    def show_range(self, t0_ns: int, t1_ns: int) -> None:
        """Zoom to an absolute time range (a region instance, a kernel)."""
        self.viewport.show(float(t0_ns - self.origin), float(t1_ns - self.origin))
        self.version += 1

    # ---- the marked range (``m``, shift+pan, ``M``) ----

    def mark_range(self) -> int:
        """Mark the selected event's span as the range (an annotation's: its CPU
        span and the GPU work launched inside it, ``range_data.event_span``).
        Returns the GPU events that widened it; -1 when nothing is selected."""
        if self.selected < 0:
            return -1
        lo, hi, gpu = event_span(self.trace, self.links, self.selected)
        self.range = (lo, max(hi, lo + 1))
        self.version += 1
        return gpu

    def resize_range(self, direction: int) -> bool:
        """Move the range's end later (1: grow) or earlier (-1: shrink) by
        ``RANGE_STEP`` of the window (at least 1 ns; never before its start
        + 1 ns).  False when no range is marked."""
        if self.range is None:
            return False
        lo, hi = self.range
        step = max(int(round(self.viewport.span * RANGE_STEP)), 1)
        self.range = (lo, max(hi + direction * step, lo + 1))
        self.version += 1
        return True

    def clear_range(self) -> None:
        self.range = None
        self.version += 1

    def resize(self, width: int) -> None:
        if width != self.viewport.width:
            self.viewport.resize(width)
            self.version += 1


def track_key(spec: RowSpec) -> tuple | None:
    """The ``TrackCache`` key of a screen row's track; None for rows with none (an
    open process's header, the pinned lanes' header)."""
    if spec.kind == "group":
        return ("group", spec.group) if spec.folded else None
    if spec.lane < 0:  # the pinned lanes' header
        return None
    return ("lane", spec.lane, spec.depth)
