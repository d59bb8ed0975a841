"""Checks of a stored model's columns (a trace's index, a merged job's entry) before
anything reads them: a damaged one (a bad disk, a bit flip) is rebuilt, never
trusted into a crash or a wrong number."""

from __future__ import annotations

import functools

import numpy as np

from profiling.trace.column_threads import in_threads
from profiling.trace.model import NARROW_COLUMNS, DeviceType, Group, Kind, Lane, Trace

COLUMN_DTYPES = {
    "ts_ns": np.int64, "dur_ns": np.int64, "name_id": np.int32, "cat_id": np.int32,
    "kind": np.uint8, "ph": np.uint8, "lane": np.int32, "depth": np.int16,
    "correlation": np.int64, "external_id": np.int64, "stream": np.int64,
    "source_index": np.int64, "lane_start": np.int64, "device_type": np.uint8,
    "op_input": np.int8,
}
"""A stored model's columns (one ``.npy`` file each) and their dtypes: a trace's
index (``cache``), a merged job's entry (``profiling.analysis.job_store``).  A column of
``model.NARROW_COLUMNS`` may also have the narrower dtype given there (``model.narrow``:
the loader's choice per trace, when every value fits), and is mapped as it is stored,
never widened."""


def check_layout(columns: dict[str, np.ndarray], lanes: list[Lane]) -> int:
    """ValueError unless ``columns`` have their dtypes, one length (returned) and lane
    starts that match the rows' lanes: the checks every stored model needs first."""
    for name, dtype in COLUMN_DTYPES.items():
        narrow = columns[name].dtype == NARROW_COLUMNS.get(name)
        if (columns[name].dtype != dtype and not narrow) or columns[name].ndim != 1:
            raise ValueError(f"column {name} has the wrong type")
    n = len(columns["ts_ns"])
    if any(len(columns[c]) != n for c in COLUMN_DTYPES if c != "lane_start"):
        raise ValueError("columns of different lengths")
    starts, lane = columns["lane_start"], columns["lane"]
    if len(starts) != len(lanes) + 1 or not np.array_equal(
            np.searchsorted(lane, np.arange(len(lanes) + 1, dtype=lane.dtype)), starts):
        raise ValueError("lanes do not match their rows")
    return n


def check_tables(lanes: list[Lane], groups: list[Group]) -> None:
    """ValueError unless the lane and group tables point at each other consistently."""
    if any(item.index != i or not 0 <= item.group < len(groups) for i, item in enumerate(lanes)):
        raise ValueError("lane table damaged")
    if any(not 0 <= k < len(lanes) for g in groups for k in g.lanes):
        raise ValueError("group table damaged")


PIECE_ROWS = 1 << 21
"""``check_ranges`` checks a column in pieces of at most this many rows, so that one
long column (a merged job's 25 M rows) is shared between threads too."""


def check_ranges(columns: dict[str, np.ndarray], lanes: int, strings: int,
                 entries: int) -> None:
    """ValueError unless every column's values lie in their range: lanes in order and
    among ``lanes``, names among the ``strings``, source rows among the file's
    ``entries``, no negative duration or depth.  Vectorised min/max passes over
    pieces of the columns, side by side on threads: they fault the mapped columns
    in (on the H200, 20 ms of a 1 GB trace's reopen one after the other)."""
    n = len(columns["ts_ns"])
    limits = {"lane": lanes, "name_id": strings, "cat_id": strings, "source_index": entries,
              "kind": len(Kind), "device_type": len(DeviceType), "dur_ns": None, "depth": None}
    parts = [slice(lo, min(lo + PIECE_ROWS, n)) for lo in range(0, n, PIECE_ROWS)]
    tasks = [(name, part) for name in limits for part in parts]
    found = in_threads(*(functools.partial(_in_range, columns[name], part, limits[name],
                                           name == "lane") for name, part in tasks),
                       rows=n * len(limits))
    for (name, _), out in zip(tasks, found, strict=True):
        if out:
            raise ValueError(f"column {name} out of range")


def _in_range(column: np.ndarray, part: slice, limit: int | None, ordered: bool) -> bool:
    """Whether ``column[part]`` has a value outside [0, ``limit``) (None: no top), or,
    when ``ordered``, decreases anywhere (from the row before the piece on)."""
    piece = column[max(part.start - 1, 0) : part.stop] if ordered else column[part]
    if piece.size == 0:
        return False
    if ordered:  # in order, its least and greatest values are its ends: one pass, not three
        if bool((piece[1:] < piece[:-1]).any()):
            return True
        low, high = int(piece[0]), int(piece[-1])
    else:  # an unsigned column needs no pass for its least value
        low = 0 if piece.dtype.kind == "u" else int(piece.min())
        high = int(piece.max()) if limit is not None else 0
    return low < 0 or (limit is not None and high >= limit)


def bounds_fit(bounds: dict[str, int], trace: Trace) -> bool:
    """Whether an index's bounds agree with its columns where that costs a row per
    lane: rows are sorted by start within a lane, so the first start is the least
    of the lanes' first rows', the last start the greatest of their last rows', and
    no end is before a lane's last row ends."""
    if set(bounds) != {"start", "end", "last_start"}:
        return False
    starts = trace.lane_start
    full = np.flatnonzero(starts[1:] > starts[:-1])
    if full.size == 0:
        return bounds == {"start": 0, "end": 0, "last_start": 0}
    first, last = starts[full], starts[full + 1] - 1
    ts = trace.ts_ns
    return (bounds["start"] == int(ts[first].min())
            and bounds["last_start"] == int(ts[last].max())
            and bounds["end"] >= max(int((ts[last] + trace.dur_ns[last]).max()),
                                     bounds["last_start"]))
