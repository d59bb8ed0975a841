"""Decoded events -> the columnar ``Trace``: interning, kinds, lanes, depth.

The work is done column by column (list comprehensions and numpy) rather than
event by event, so the per-event Python cost is a few attribute reads.  Metadata
events (``ph: M``) are not rows: they name and order processes and threads.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import msgspec
import numpy as np

from profiling.trace.decode import Decoded, Event
from profiling.trace.kinds import category_kinds
from profiling.trace.lanes import build_lanes
from profiling.trace.model import NO_ID, Kind, Trace

_PHASE_KIND = {
    "i": Kind.INSTANT,
    "I": Kind.INSTANT,
    "R": Kind.INSTANT,
    "s": Kind.FLOW,
    "t": Kind.FLOW,
    "f": Kind.FLOW,
}
_SLICE = {"X", "B", "E"}


class _Interner:
    """Strings -> dense ids, in first-seen order."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.strings: list[str] = []

    def ids_of(self, values: list[str]) -> np.ndarray:
        ids = self.ids
        strings = self.strings

        def one(s: str) -> int:
            i = ids.get(s)
            if i is None:
                i = ids[s] = len(strings)
                strings.append(s)
            return i

        return np.fromiter((one(s) for s in values), dtype=np.int32, count=len(values))


def build_trace(decoded: Decoded, path: str) -> Trace:
    """Turn decoded events into a ``Trace`` (rows sorted by lane, start, -duration)."""
    warnings = list(decoded.warnings)
    events = decoded.events
    meta_events = [e for e in events if e.ph == "M"]
    keep = [i for i, e in enumerate(events) if e.ph != "M"]
    if len(keep) != len(events):
        rows = [events[i] for i in keep]
        raw_args = [decoded.raw_args[i] for i in keep]
    else:
        rows, raw_args = events, decoded.raw_args

    n = len(rows)
    ts = np.array([math.nan if e.ts is None else e.ts for e in rows], dtype=np.float64)
    dur = np.array([0.0 if e.dur is None else e.dur for e in rows], dtype=np.float64)
    phases = [e.ph for e in rows]

    interner = _Interner()
    interner.ids_of([""])  # id 0 is the empty string
    name_id = interner.ids_of([e.name for e in rows])
    cat_id = interner.ids_of([e.cat for e in rows])
    kind = _kinds(phases, cat_id, interner.strings)
    ph = np.fromiter((ord(p[0]) if p else 0 for p in phases), dtype=np.uint8, count=n)

    correlation = _int_column([_corr(e) for e in rows])
    external_id = _int_column([_ext(e) for e in rows])
    stream = _int_column([_flow_id(e.args.stream) if e.args is not None else None for e in rows])

    valid = np.ones(n, dtype=bool)
    missing_ts = ~np.isfinite(ts)
    if missing_ts.any():
        warnings.append(f"skipped {int(missing_ts.sum())} events with no usable 'ts'")
        valid &= ~missing_ts
    bad_dur = ~np.isfinite(dur) | (dur < 0)
    if bad_dur.any():
        warnings.append(f"set {int(bad_dur.sum())} negative or non-finite durations to 0")
        dur[bad_dur] = 0.0
    if not phases or any(p == "" for p in phases):
        no_ph = np.array([p == "" for p in phases], dtype=bool)
        if no_ph.any():
            warnings.append(f"skipped {int(no_ph.sum())} events with no 'ph'")
            valid &= ~no_ph

    pid = [_as_number(e.pid) for e in rows]
    tid = [_as_number(e.tid) for e in rows]
    _pair_begin_end(phases, pid, tid, ts, dur, valid, kind, warnings)

    ts_ns = _to_ns(ts)
    dur_ns = np.rint(dur * 1000.0).astype(np.int64)
    source_index = np.asarray(keep, dtype=np.int64)

    lane_keys: dict[tuple[Any, Any], int] = {}
    lane_of = np.fromiter(
        (lane_keys.setdefault((p, t), len(lane_keys)) for p, t in zip(pid, tid, strict=True)),
        dtype=np.int32,
        count=n,
    )

    args_offset, args_len, blob = _args_blob(raw_args)

    idx = np.flatnonzero(valid)
    order = idx[np.lexsort((-dur_ns[idx], ts_ns[idx], lane_of[idx]))]
    columns = {
        "ts_ns": ts_ns[order],
        "dur_ns": dur_ns[order],
        "name_id": name_id[order],
        "cat_id": cat_id[order],
        "kind": kind[order],
        "ph": ph[order],
        "correlation": correlation[order],
        "external_id": external_id[order],
        "stream": stream[order],
        "source_index": source_index[order],
        "args_offset": args_offset[order],
        "args_len": args_len[order],
    }
    lane_sorted = lane_of[order]
    lanes, groups, lane_remap = build_lanes(
        list(lane_keys), lane_sorted, columns["kind"], meta_events, decoded.metadata
    )
    lane_final = lane_remap[lane_sorted]
    # Lanes were renumbered into display order: sort rows again so each lane stays contiguous.
    reorder = np.lexsort((-columns["dur_ns"], columns["ts_ns"], lane_final))
    for key in columns:
        columns[key] = columns[key][reorder]
    lane_final = lane_final[reorder]
    lane_start = np.searchsorted(lane_final, np.arange(len(lanes) + 1)).astype(np.int64)
    depth = _depths(columns["ts_ns"], columns["dur_ns"], columns["kind"], lane_start)
    for lane in lanes:
        rows_of_lane = slice(int(lane_start[lane.index]), int(lane_start[lane.index + 1]))
        lane.events = rows_of_lane.stop - rows_of_lane.start
        lane.max_depth = int(depth[rows_of_lane].max()) if lane.events else 0

    return Trace(
        path=path,
        n_entries=decoded.n_entries,
        strings=interner.strings,
        lane=lane_final.astype(np.int32),
        depth=depth,
        lane_start=lane_start,
        lanes=lanes,
        groups=groups,
        args_blob=blob,
        metadata=decoded.metadata,
        warnings=warnings,
        **columns,
    )


def _kinds(phases: list[str], cat_id: np.ndarray, strings: list[str]) -> np.ndarray:
    by_category = np.array([int(k) for k in category_kinds(strings)], dtype=np.uint8)
    kinds = by_category[cat_id]
    for i, p in enumerate(phases):
        if p not in _SLICE:
            kinds[i] = _PHASE_KIND.get(p, Kind.OTHER)
    return kinds


def _corr(e: Event) -> int | None:
    if e.ph in ("s", "t", "f"):
        return _flow_id(e.id)
    return e.args.correlation if e.args is not None else None


def _ext(e: Event) -> int | None:
    a = e.args
    if a is None:
        return None
    return a.external_id if a.external_id is not None else a.external_id_old


def _as_number(value: int | str | None) -> int | str | None:
    """Ids spelled as digit strings ("24572") are the same ids as the integers.

    Old Kineto wrote some tids as strings and others as ints for one thread.
    """
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def _flow_id(value: int | str | None) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return None
    return None


def _int_column(values: list[int | None]) -> np.ndarray:
    out = np.full(len(values), NO_ID, dtype=np.int64)
    for i, v in enumerate(values):
        if isinstance(v, int) and -(2**63) <= v < 2**63:
            out[i] = v
    return out


def _to_ns(ts_us: np.ndarray) -> np.ndarray:
    """Microseconds (float, possibly epoch-sized) -> integer nanoseconds, exactly.

    ``ts * 1000`` in float64 would lose up to ~256 ns on epoch timestamps, so the
    whole and fractional microseconds are converted separately.
    """
    safe = np.where(np.isfinite(ts_us), ts_us, 0.0)
    safe = np.clip(safe, -9.2e15, 9.2e15)
    whole = np.floor(safe)
    frac = np.rint((safe - whole) * 1000.0).astype(np.int64)
    return whole.astype(np.int64) * 1000 + frac


def _pair_begin_end(
    phases: list[str],
    pid: list[Any],
    tid: list[Any],
    ts: np.ndarray,
    dur: np.ndarray,
    valid: np.ndarray,
    kind: np.ndarray,
    warnings: list[str],
) -> None:
    """Fold ``B``/``E`` pairs into one slice on the ``B`` row; drop the ``E`` rows."""
    if "B" not in phases and "E" not in phases:
        return
    stacks: dict[tuple[Any, Any], list[int]] = defaultdict(list)
    unmatched_end = 0
    for i, p in enumerate(phases):
        if not valid[i] or p not in ("B", "E"):
            continue
        key = (pid[i], tid[i])
        if p == "B":
            stacks[key].append(i)
            continue
        valid[i] = False
        if stacks[key]:
            b = stacks[key].pop()
            dur[b] = max(0.0, ts[i] - ts[b])
        else:
            unmatched_end += 1
    unmatched_begin = sum(len(s) for s in stacks.values())
    if unmatched_end:
        warnings.append(f"ignored {unmatched_end} 'E' events with no matching 'B'")
    if unmatched_begin:
        warnings.append(f"{unmatched_begin} 'B' events never ended; shown with zero duration")


def _args_blob(raw_args: list[msgspec.Raw]) -> tuple[np.ndarray, np.ndarray, bytes]:
    """Concatenate every event's raw ``args`` JSON; offsets let one be decoded on demand."""
    lengths = np.fromiter((len(r) for r in raw_args), dtype=np.int64, count=len(raw_args))
    offsets = np.zeros(len(raw_args), dtype=np.int64)
    if len(raw_args) > 1:
        np.cumsum(lengths[:-1], out=offsets[1:])
    blob = b"".join(raw_args)  # msgspec.Raw exposes the buffer protocol
    return offsets, lengths.astype(np.int32), blob


def _depths(
    ts: np.ndarray, dur: np.ndarray, kind: np.ndarray, lane_start: np.ndarray
) -> np.ndarray:
    """Nesting depth per row, lane by lane (rows sorted by start, longest first).

    A slice is one level below every earlier slice on its lane that is still open
    at its start.  Instants and flows take the current depth but open nothing.
    """
    depth = [0] * len(ts)
    ends = (ts + dur).tolist()
    starts = ts.tolist()
    point = ((kind == Kind.INSTANT) | (kind == Kind.FLOW) | (dur == 0)).tolist()
    for lane in range(len(lane_start) - 1):
        lo, hi = int(lane_start[lane]), int(lane_start[lane + 1])
        stack: list[int] = []
        for i in range(lo, hi):
            t = starts[i]
            while stack and stack[-1] <= t:
                stack.pop()
            d = len(stack)
            depth[i] = d
            if not point[i]:
                stack.append(ends[i])
    return np.minimum(np.array(depth, dtype=np.int64), 32767).astype(np.int16)
