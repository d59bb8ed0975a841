"""Timeline moves that skip: lane to lane, to the next GPU lane, to the first
event in the window (pure; no Textual).

``j``/``k`` step through every depth row, so on a trace whose host thread
unfolds to seven depths the GPU lane is seven presses away; ``J``/``K`` and
``G`` land on the lanes themselves.  The first ``h``/``l`` on a row selects the
first event the window shows, not the one nearest its middle.
"""

from __future__ import annotations

import numpy as np

from profiling.trace.model import Trace
from tui.rows import Folds, RowSpec
from tui.tracks import Track


def next_lane(rows: list[RowSpec], cursor: int, direction: int) -> int:
    """The screen row of the next (1) or previous (-1) lane or process header from
    ``cursor`` (depth rows skipped); ``cursor`` itself when there is none."""
    i = cursor + direction
    while 0 <= i < len(rows):
        if rows[i].kind != "depth":
            return i
        i += direction
    return cursor


def _is_gpu_lane(trace: Trace, spec: RowSpec) -> bool:
    return spec.kind == "lane" and trace.lanes[spec.lane].kind == "gpu"


def gpu_groups(trace: Trace) -> set[int]:
    """Groups (devices) that hold a GPU lane with events."""
    return {lane.group for lane in trace.lanes if lane.kind == "gpu" and lane.events > 0}


def unfold_for_gpu(trace: Trace, folds: Folds) -> bool:
    """Unfold every folded device that hides a GPU lane; True when one was folded."""
    hidden = folds.groups_folded & gpu_groups(trace)
    folds.groups_folded -= hidden
    return bool(hidden)


def next_gpu_lane(trace: Trace, rows: list[RowSpec], cursor: int) -> int:
    """The screen row of the next GPU lane after ``cursor``, wrapping; -1 when
    no GPU lane is on screen (none in the trace, or its device is folded)."""
    n = len(rows)
    for step in range(1, n + 1):
        i = (cursor + step) % n
        if _is_gpu_lane(trace, rows[i]):
            return i
    return -1


def first_visible(track: Track, start: float, end: float) -> int:
    """The trace row of the first event the window ``[start, end)`` shows on
    this track (one that began before the window and reaches into it counts
    first); -1 when the window shows none of the track."""
    if len(track) == 0:
        return -1
    # maxend is non-decreasing: the first i with maxend[i] > start is the first
    # event (in start order) that ends inside or after the window's left edge
    i = int(np.searchsorted(track.maxend, start, side="right"))
    if i >= len(track) or track.ts[i] >= end:
        return -1
    return int(track.rows[i])
