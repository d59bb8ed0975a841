"""What is in a time range: per lane kind and name, the events that overlap it.

This is Perfetto's area selection, done for one range over the whole trace: every
event that overlaps ``[from, to)`` counts once, by the length of its overlap (its
time clipped to the range), grouped by lane kind (CPU, GPU, other) and name.  On
top: how busy the GPU was (the union of kernel, Memcpy and Memset intervals in
the range over the range's length) and the Memcpy / Memset totals.

Vectorised: the TUI's range panel calls it on every change of the range, so one
call over a million events must stay well under 200 ms; there is no per-event
Python loop, only per-group work (a few hundred names at most).  The whole trace's
answer (``slices`` without a range) is kept with the index (``whole_trace``).

Times given to and returned by this module count from the trace's first event,
as the timeline's ruler shows them (``trace.start_ns`` is 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from profiling.analysis.ranges import concat_ranges, distinct
from profiling.trace.model import GPU_KIND_TABLE, Kind, LaneKind, Trace

LANE_CHOICES = ("cpu", "gpu", "all")
LANE_KINDS = (LaneKind.CPU, LaneKind.GPU, LaneKind.OTHER)
"""Lane kinds in report order; a row's ``lane_kind`` is one of these."""

_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-zµμ]*)\s*$", re.IGNORECASE)

TIME_HELP = "a unit: 12.5us, 1.2ms, 3s, 500ns; a bare number is microseconds"


def parse_time_ns(text: str) -> int:
    """``"12.5us"`` -> 12500: a time with a unit (ns, us/µs, ms, s; none means µs) as
    whole nanoseconds, read exactly (no float in between, as the loader reads ``ts``).

    Raises ``ValueError`` with a message that says what was expected."""
    if text.strip().startswith("-") and _TIME.match(text.strip()[1:]):
        raise ValueError(f"cannot read {text!r} as a time: it is before the trace's first "
                         "event (times count from it)")
    match = _TIME.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or (unit and unit not in _UNIT_NS):
        raise ValueError(f"cannot read {text!r} as a time (give {TIME_HELP})")
    try:
        value = Decimal(match.group(1))
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        raise ValueError(f"cannot read {text!r} as a time") from None
    ns = int((value * _UNIT_NS[unit or "us"]).to_integral_value())
    if abs(ns) >= 1 << 63:  # the model's int64 nanoseconds (about 292 years)
        raise ValueError(f"{text!r} is too large a time (at most 9.2e9 s)")
    return ns


@dataclass(frozen=True)
class SliceRow:
    """One name on one lane kind: its events in the range and their clipped time."""

    name: str
    lane_kind: str
    kind: str  # the event kind of the name's events (kernel, cpu_op, memcpy, ...)
    count: int
    total_ns: int
    min_ns: int
    max_ns: int

    @property
    def avg_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0

    def as_json(self, range_ns: int) -> dict[str, Any]:
        return {
            "name": self.name,
            "lane_kind": self.lane_kind,
            "kind": self.kind,
            "count": self.count,
            "total_us": self.total_ns / 1000.0,
            "avg_us": self.avg_ns / 1000.0,
            "min_us": self.min_ns / 1000.0,
            "max_us": self.max_ns / 1000.0,
            "share": self.total_ns / range_ns if range_ns > 0 else 0.0,
        }


@dataclass
class SliceSummary:
    """Everything ``slices`` says about one range (times in ns from the trace start)."""

    from_ns: int
    to_ns: int
    lanes: str
    rows: list[SliceRow] = field(default_factory=list)
    events: int = 0  # events counted in ``rows``
    gpu_busy_ns: int = 0  # union of GPU kernel/Memcpy/Memset time inside the range
    memcpy_count: int = 0
    memcpy_ns: int = 0
    memset_count: int = 0
    memset_ns: int = 0

    @property
    def range_ns(self) -> int:
        return self.to_ns - self.from_ns

    @property
    def gpu_busy_share(self) -> float:
        return self.gpu_busy_ns / self.range_ns if self.range_ns > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        """The ``slices --json`` object: the range and its GPU figures, then ``rows``."""
        return {
            "from_us": self.from_ns / 1000.0,
            "to_us": self.to_ns / 1000.0,
            "range_us": self.range_ns / 1000.0,
            "lanes": self.lanes,
            "events": self.events,
            "gpu_busy_us": self.gpu_busy_ns / 1000.0,
            "gpu_busy_pct": 100.0 * self.gpu_busy_share,
            "memcpy": {"count": self.memcpy_count, "total_us": self.memcpy_ns / 1000.0},
            "memset": {"count": self.memset_count, "total_us": self.memset_ns / 1000.0},
            "rows": [r.as_json(self.range_ns) for r in self.rows],
        }


def trace_span_ns(trace: Trace) -> int:
    """The trace's length from its first event to its last end (the default range)."""
    return trace.end_ns_max - trace.start_ns if len(trace) else 0


def lane_kind_codes(trace: Trace, rows: np.ndarray | None) -> np.ndarray:
    """For each of ``rows`` (``None``: every row), the index of its lane's kind in
    ``LANE_KINDS`` (uint8)."""
    per_lane = np.array([LANE_KINDS.index(lane.kind) for lane in trace.lanes] or [0],
                        dtype=np.uint8)
    return per_lane[trace.lane if rows is None else trace.lane[rows]]


def candidate_rows(trace: Trace, lo_ns: int, hi_ns: int) -> np.ndarray | None:
    """Rows that may overlap ``[lo_ns, hi_ns]`` (absolute ns), found from each lane's
    sorted starts: from the first that could still reach ``lo_ns`` (its lane's
    longest event decides how far back that is) to the last starting by ``hi_ns``.
    ``None`` when that is most of the trace (then a plain pass is cheaper)."""
    first, last = trace.lane_start[:-1], trace.lane_start[1:]
    lanes = np.flatnonzero(last > first)
    if lanes.size == 0:
        return np.zeros(0, dtype=np.int64)
    longest = np.maximum.reduceat(trace.dur_ns, first[lanes])
    lo = np.empty(lanes.size, dtype=np.int64)
    hi = np.empty(lanes.size, dtype=np.int64)
    for i, lane in enumerate(lanes.tolist()):  # per lane, not per event
        a, b = int(first[lane]), int(last[lane])
        ts = trace.ts_ns[a:b]
        lo[i] = a + int(np.searchsorted(ts, lo_ns - int(longest[i]), "left"))
        hi[i] = a + int(np.searchsorted(ts, hi_ns, "right"))
    if int(np.maximum(hi - lo, 0).sum()) > len(trace) // 2:
        return None
    return concat_ranges(lo, hi)


def overlaps(ts: np.ndarray, dur: np.ndarray, lo_ns: int, hi_ns: int) -> np.ndarray:
    """Which events count in ``[lo_ns, hi_ns]`` (absolute): a slice by overlapping it by
    more than nothing, an event of no duration by lying inside it, ends included.
    The one rule for the range panel, ``slices`` and the occurrences in a range."""
    end = ts + dur
    return np.where(dur > 0, (ts < hi_ns) & (end > lo_ns), (ts >= lo_ns) & (ts <= hi_ns))


def covers_trace(trace: Trace, lo_ns: int, hi_ns: int) -> bool:
    """Whether the absolute range ``[lo_ns, hi_ns]`` holds every event of ``trace``
    whole (the range of ``slices`` without bounds, or of a step spanning the trace)."""
    return bool(len(trace) and lo_ns <= trace.start_ns and hi_ns >= trace.end_ns_max
                and hi_ns >= trace.last_start_ns)  # (a negative duration ends before ts)


def overlap_ns(trace: Trace, lo_ns: int, hi_ns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that count in the absolute range ``[lo_ns, hi_ns]``, and their start
    and end clipped to it.

    A slice counts when it overlaps the range by more than nothing; an event of no
    duration (an instant, a zero-length slice) counts when it lies inside it,
    ends included.  Flows are arrows, not events, and never count."""
    cand = candidate_rows(trace, lo_ns, hi_ns)
    if cand is None:
        ts, dur, kind = trace.ts_ns, trace.dur_ns, trace.kind
    else:
        ts, dur, kind = trace.ts_ns[cand], trace.dur_ns[cand], trace.kind[cand]
    hits = overlaps(ts, dur, lo_ns, hi_ns)
    hits &= kind != np.uint8(Kind.FLOW)
    at = np.flatnonzero(hits)
    rows = at if cand is None else cand[at]
    start = ts[at]
    return rows, np.maximum(start, lo_ns), np.minimum(start + dur[at], hi_ns)


def union_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    """Length of the union of intervals ``[starts[i], ends[i])`` (any order)."""
    if starts.size == 0:
        return 0
    s, e = starts, ends
    if not (starts[1:] >= starts[:-1]).all():  # rows come sorted per lane: often no sort
        order = np.argsort(starts, kind="stable")
        s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)  # furthest end of the intervals so far
    before = np.concatenate(([s[0]], reach[:-1]))
    return int(np.maximum(e - np.maximum(s, before), 0).sum())


def slice_summary(
    trace: Trace, from_ns: int | None = None, to_ns: int | None = None, lanes: str = "all"
) -> SliceSummary:
    """What is in ``[from_ns, to_ns]`` (ns from the trace's first event; ``None``: the
    trace's start / end), on the lanes of kind ``lanes`` (cpu, gpu or all).

    Rows are grouped by (lane kind, name): CPU first, then GPU, then other lanes,
    each by clipped total time, longest first.  The GPU busy time and the Memcpy /
    Memset totals cover the whole range whatever ``lanes`` says."""
    if lanes not in LANE_CHOICES:
        raise ValueError(f"lanes must be one of {', '.join(LANE_CHOICES)}, not {lanes!r}")
    lo = 0 if from_ns is None else int(from_ns)
    hi = trace_span_ns(trace) if to_ns is None else int(to_ns)
    summary = SliceSummary(from_ns=lo, to_ns=hi, lanes=lanes)
    if len(trace) == 0 or hi < lo:
        return summary
    origin = trace.start_ns
    if covers_trace(trace, origin + lo, origin + hi):
        groups, figures = whole_trace(trace)  # every row but the flows, unclipped
    else:
        rows, start, end = overlap_ns(trace, origin + lo, origin + hi)
        clipped = np.maximum(end - start, 0)
        figures = _gpu_figures(trace.kind[rows], start, clipped)
        groups = _group_columns(trace, rows, clipped, lane_kind_codes(trace, rows))
    for name, value in figures.items():
        setattr(summary, name, value)
    if lanes != "all":
        keep = groups["lane_kind"] == LANE_KINDS.index(lanes)
        groups = {name: column[keep] for name, column in groups.items()}
    summary.events = int(groups["count"].sum())  # each counted event is in one group
    summary.rows = _slice_rows(trace, groups)
    return summary


WHOLE_TRACE_PART = "slices_whole_trace"
"""The whole trace's groups and GPU figures, kept with the index (``analysis_store``):
``slices`` without a range, the default, and the range panel over the whole trace
(on a 1 GB trace, five passes over 3 M rows: 60-100 ms of each reopened ``slices``)."""

GROUP_COLUMNS = ("name_id", "lane_kind", "kind", "count", "total", "low", "high")
_FIGURES = ("gpu_busy_ns", "memcpy_count", "memcpy_ns", "memset_count", "memset_ns")


def whole_trace(trace: Trace) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """The groups (``_group_columns``) and GPU figures of every row of ``trace`` but
    the flows, unclipped: read from the index when a current copy is there, else
    computed and stored.  A first open computes them (``analysis.warm``)."""
    from profiling.analysis import analysis_store

    found = analysis_store.load(trace, WHOLE_TRACE_PART)
    if found is not None and _whole_trace_fits(trace, *found):
        return found
    start, clipped, kinds = trace.ts_ns, trace.dur_ns, trace.kind
    if len(trace) and int(clipped.min()) < 0:  # a loaded trace has none; a built one may
        clipped = np.maximum(clipped, 0)
    figures = _gpu_figures(kinds, start, clipped)
    groups = _group_columns(trace, None, clipped, lane_kind_codes(trace, None),
                            kinds != np.uint8(Kind.FLOW))
    if analysis_store.available(trace):
        analysis_store.save(trace, WHOLE_TRACE_PART, groups, figures)
    return groups, figures


def _whole_trace_fits(trace: Trace, groups: dict[str, np.ndarray], figures: Any) -> bool:
    """Whether a stored copy can be read against ``trace``: its columns all there and
    of one length, names among the trace's strings, kinds known (else recomputed)."""
    if set(groups) != set(GROUP_COLUMNS) or not isinstance(figures, dict) \
            or set(figures) != set(_FIGURES) or any(type(figures[f]) is not int for f in figures):
        return False
    n = len(groups["count"])
    if any(column.ndim != 1 or len(column) != n for column in groups.values()):
        return False
    if n == 0:
        return True
    kinds = {int(k) for k in distinct(groups["kind"])}
    return (0 <= int(groups["name_id"].min()) and int(groups["name_id"].max()) < len(trace.strings)
            and int(groups["lane_kind"].max()) < len(LANE_KINDS)
            and kinds <= {int(k) for k in Kind} and int(groups["count"].min()) > 0)


def _gpu_figures(kinds: np.ndarray, start: np.ndarray, clipped: np.ndarray) -> dict[str, int]:
    """GPU busy time (union, so overlapping streams count once) and copy totals (copies
    are GPU events: counted among those rows, a tenth of a trace's, not all), by their
    ``SliceSummary`` field names (``_FIGURES``)."""
    on_gpu = np.flatnonzero(GPU_KIND_TABLE[kinds])
    gpu_start, gpu_kind, gpu_time = start[on_gpu], kinds[on_gpu], clipped[on_gpu]
    memcpy, memset = gpu_kind == np.uint8(Kind.MEMCPY), gpu_kind == np.uint8(Kind.MEMSET)
    return {"gpu_busy_ns": union_ns(gpu_start, gpu_start + gpu_time),
            "memcpy_count": int(memcpy.sum()), "memcpy_ns": int(gpu_time[memcpy].sum()),
            "memset_count": int(memset.sum()), "memset_ns": int(gpu_time[memset].sum())}


def _group_columns(
    trace: Trace, rows: np.ndarray | None, clipped: np.ndarray, lane_kind: np.ndarray,
    counted: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Count, total, min and max per (lane kind, name) in report order (``GROUP_COLUMNS``),
    one pass of bincount and ufunc.at over the rows (``None``: every row of the trace)
    of which ``counted`` (``None``: all); Python work is per group only.

    Report order: CPU first, then GPU, then other lanes, each by total time, longest
    first; ties by name, not by the order names first appear in the file (the same
    trace written in another order reads the same)."""
    n_kinds = len(LANE_KINDS)
    name_ids = trace.name_id if rows is None else trace.name_id[rows]
    kinds = trace.kind if rows is None else trace.kind[rows]
    size = len(trace.strings) * n_kinds
    key = name_ids.astype(np.int32 if size < 1 << 31 else np.int64)  # half the bytes
    key *= n_kinds
    key += lane_kind
    if counted is not None:
        key[~counted] = size  # one more bin, for the rows left out, dropped below
    count = np.bincount(key, minlength=size + 1)[:size]
    total = np.zeros(size + 1, dtype=np.int64)
    np.add.at(total, key, clipped)
    low = np.full(size + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(low, key, clipped)
    high = np.zeros(size + 1, dtype=np.int64)
    np.maximum.at(high, key, clipped)
    kind_of = np.full(size + 1, 255, dtype=np.uint8)
    np.minimum.at(kind_of, key, kinds)  # a name rarely has two kinds: the lowest

    present = np.flatnonzero(count)
    names = [trace.strings[int(k)] for k in (present // n_kinds).tolist()]
    by_name = np.empty(present.shape[0], dtype=np.int64)
    by_name[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    at = present[np.lexsort((by_name, -total[present], present % n_kinds))]
    return {"name_id": at // n_kinds, "lane_kind": (at % n_kinds).astype(np.uint8),
            "kind": kind_of[at], "count": count[at], "total": total[at], "low": low[at],
            "high": high[at]}


def _slice_rows(trace: Trace, groups: dict[str, np.ndarray]) -> list[SliceRow]:
    """The rows of ``groups`` (``_group_columns``), one object per group."""
    columns = [groups[name].tolist() for name in GROUP_COLUMNS]
    return [SliceRow(name=trace.strings[name_id], lane_kind=LANE_KINDS[lane_kind],
                     kind=Kind(kind).name.lower(), count=count, total_ns=total,
                     min_ns=low, max_ns=high)
            for name_id, lane_kind, kind, count, total, low, high in zip(*columns, strict=True)]
