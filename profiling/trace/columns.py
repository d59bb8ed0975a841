"""Decoded chunks -> the columnar ``Trace``: global ids, kinds, B/E pairs, lanes, depth.

Chunks arrive with chunk-local string and lane ids; merging maps them onto
global ones with one small remap array per chunk, so the per-event work stays
in numpy.  Metadata events (``ph: M``) are not rows: they name and order
processes and threads.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from profiling.trace.chunk import Chunk
from profiling.trace.kinds import category_kinds, device_types, kinds_by_name
from profiling.trace.lanes import build_lanes, split_mixed_lanes
from profiling.trace.model import GPU_KINDS, NO_ID, ArgsSource, Kind, Lane, Trace, narrow
from profiling.trace.times import LIMIT_NS, NOT_A_NUMBER, OK

_PHASE_KIND = {
    "i": Kind.INSTANT,
    "I": Kind.INSTANT,
    "R": Kind.INSTANT,
    "s": Kind.FLOW,
    "t": Kind.FLOW,
    "f": Kind.FLOW,
}
_PHASE_TABLE = np.full(256, Kind.OTHER, dtype=np.uint8)
for _letter, _kind in _PHASE_KIND.items():
    _PHASE_TABLE[ord(_letter)] = _kind
_NESTS = np.zeros(256, dtype=np.int8)  # row_order's ``nests``: 1 holds ops, 2 a leaf
_NESTS[[Kind.CPU_OP, Kind.USER_ANNOTATION]] = 1
_NESTS[Kind.RUNTIME] = 2
_SLICE_TABLE = np.zeros(256, dtype=bool)
for _letter in "XBE":
    _SLICE_TABLE[ord(_letter)] = True



def build_trace(
    chunks: list[Chunk],
    entry_starts: list[int],
    metadata: dict[str, Any],
    warnings: list[str],
    path: str,
    args_source: ArgsSource | None,
) -> Trace:
    """Merge chunks into one ``Trace`` (rows sorted by lane, start, -duration).

    Memory: each column is merged and taken from the chunks (``_merged``: a chunk's
    copy can go as soon as the merged one exists), and a merged column is replaced
    by its sorted copy, one at a time; so the peak is about the trace's columns plus
    a few merged ones, not three copies of every column (chunks, merged, sorted).
    The chunks have no columns left when this returns.
    """
    warnings = list(warnings)
    for chunk in chunks:
        warnings.extend(chunk.warnings)
    strings: dict[str, int] = {"": 0}
    lane_keys: dict[tuple[Any, Any], int] = {}
    string_maps = [_remap(chunk.strings, strings) for chunk in chunks]
    lane_maps = [_remap(chunk.lane_keys, lane_keys) for chunk in chunks]
    names = _merged(chunks, "name_id", string_maps).astype(np.int32, copy=False)
    cats = _merged(chunks, "cat_id", string_maps).astype(np.int32, copy=False)
    lane = _merged(chunks, "lane", lane_maps).astype(np.int32, copy=False)
    col = {key: _merged(chunks, key) for key in ("ts_ns", "dur_ns", "ts_state", "dur_state", "ph")}
    string_list = list(strings)
    ts_ns, dur_ns, ph = col["ts_ns"], col["dur_ns"], col["ph"]
    kind = kinds_by_name(_kinds(ph, cats, string_list), cats, names, string_list)
    by_category = np.array([int(d) for d in device_types(string_list)], dtype=np.uint8)
    device = np.where(_SLICE_TABLE[ph], by_category[cats], 0).astype(np.uint8)

    valid = _usable_rows(col, warnings)
    del col
    _pair_begin_end(ph, lane, ts_ns, dur_ns, valid, warnings)
    gpu_flow_end = (ph == ord("f")) & (cats == strings.get("ac2g", -1))  # a launch's kernel end
    keys, lane = split_mixed_lanes(list(lane_keys), lane, valid, kind, device, gpu_flow_end)
    meta = [m for c in chunks for m in c.meta]
    lanes, groups, lane_remap = build_lanes(keys, lane[valid], kind[valid], meta, device[valid])
    lane = lane_remap[lane]

    external_id = _merged(chunks, "external_id")  # breaks exact ties: see row_order
    order = row_order(np.flatnonzero(valid), lane, ts_ns, dur_ns, external_id, _NESTS[kind])
    del valid
    lane = lane[order].astype(np.int32, copy=False)
    lane_start = np.searchsorted(lane, np.arange(len(lanes) + 1)).astype(np.int64)
    ts_ns, dur_ns, kind, external_id = ts_ns[order], dur_ns[order], kind[order], external_id[order]
    depth = _depths(ts_ns, dur_ns, kind, lane_start)
    for item in lanes:
        lo, hi = int(lane_start[item.index]), int(lane_start[item.index + 1])
        item.events = hi - lo
        item.max_depth = int(depth[lo:hi].max()) if hi > lo else 0
    names, cats, ph, device = names[order], cats[order], ph[order], device[order]
    sorted_columns = _sorted_last(chunks, order, kind, lane, lanes)
    entries = [np.asarray(first, dtype=np.int64) for first in entry_starts]
    source_index = narrow(_merged(chunks, "entry", offsets=entries)[order])
    return Trace(
        path=path,
        n_entries=sum(c.n_entries for c in chunks),
        strings=string_list,
        ts_ns=ts_ns,
        dur_ns=dur_ns,
        name_id=narrow(names, np.int16, np.int32),
        cat_id=narrow(cats, np.int16, np.int32),
        kind=kind,
        ph=ph,
        lane=lane,
        depth=depth,
        source_index=source_index,
        lanes=lanes,
        lane_start=lane_start,
        groups=groups,
        metadata=metadata,
        warnings=warnings,
        args_source=args_source,
        device_type=device,
        external_id=narrow(external_id),
        **sorted_columns,
    )


_SORTED_LAST = ("correlation", "stream", "op_input")  # merged only once rows are sorted
_TAKEN = np.zeros(0, dtype=np.int8)


def _merged(
    chunks: list[Chunk],
    key: str,
    maps: list[np.ndarray] | None = None,
    offsets: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Column ``key`` of every chunk in one array (chunk-local ids through that chunk's
    map, ``offsets`` added), taken from the chunks so their copies can go."""
    parts = []
    for i, chunk in enumerate(chunks):
        part = getattr(chunk, key)
        setattr(chunk, key, _TAKEN)
        if maps is not None:
            part = maps[i][part]
        if offsets is not None:
            part = part + offsets[i]
        parts.append(part)
    return np.concatenate(parts)


def _sorted_last(chunks: list[Chunk], order: np.ndarray, kind: np.ndarray, lane: np.ndarray,
                 lanes: list[Lane]) -> dict[str, np.ndarray]:
    """The columns merged once rows are sorted (``_SORTED_LAST``), streams completed,
    ids as int32 where they fit (``narrow``)."""
    columns = {key: _merged(chunks, key)[order] for key in _SORTED_LAST}
    _streams_from_lanes(columns["stream"], kind, lane, lanes)
    for key in ("correlation", "stream"):
        columns[key] = narrow(columns[key])
    return columns


def _streams_from_lanes(stream: np.ndarray, kind: np.ndarray, lane: np.ndarray,
                        lanes: list[Lane]) -> None:
    """A GPU event with no ``stream`` arg gets its lane's tid (in place): Kineto writes
    the stream as the tid of every device event, so the tid says it where a writer
    left the arg out, and a kernel's stream is then one fact, not null in one place
    and a lane in another."""
    missing = np.flatnonzero((stream == NO_ID) & np.isin(kind, GPU_KINDS))
    if missing.shape[0]:
        tids = [x.tid if type(x.tid) is int else NO_ID for x in lanes]
        stream[missing] = np.array(tids, dtype=np.int64)[lane[missing]]


def _usable_rows(col: dict[str, np.ndarray], warnings: list[str]) -> np.ndarray:
    """Rows with a usable ts and a phase; bad durations set to 0 in place (warned)."""
    valid = col["ts_state"] == OK  # absent, NaN and times beyond int64 nanoseconds fail
    if not valid.all():
        warnings.append(f"skipped {int((~valid).sum())} events with no usable 'ts'")
    no_ph = col["ph"] == 0
    if no_ph.any():
        warnings.append(f"skipped {int(no_ph.sum())} events with no 'ph'")
        valid &= ~no_ph
    dur_ns = col["dur_ns"]
    bad_dur = (col["dur_state"] == NOT_A_NUMBER) | (dur_ns < 0)  # too long: clipped, kept
    if bad_dur.any():
        warnings.append(f"set {int(bad_dur.sum())} negative or non-finite durations to 0")
        dur_ns[bad_dur] = 0
    return valid


def _remap(local: list[Any], global_ids: dict[Any, int]) -> np.ndarray:
    """Chunk-local id -> global id, adding unseen values to ``global_ids``."""
    out = np.empty(max(len(local), 1), dtype=np.int32)
    for i, value in enumerate(local):
        gid = global_ids.get(value)
        if gid is None:
            gid = global_ids[value] = len(global_ids)
        out[i] = gid
    return out


def _kinds(ph: np.ndarray, cat_id: np.ndarray, strings: list[str]) -> np.ndarray:
    """Slices take their kind from the category; other phases from the phase letter."""
    by_category = np.array([int(k) for k in category_kinds(strings)], dtype=np.uint8)
    return np.where(_SLICE_TABLE[ph], by_category[cat_id], _PHASE_TABLE[ph]).astype(np.uint8)


def _pair_begin_end(
    ph: np.ndarray,
    lane: np.ndarray,
    ts: np.ndarray,
    dur: np.ndarray,
    valid: np.ndarray,
    warnings: list[str],
) -> None:
    """Fold ``B``/``E`` pairs (same thread) into one slice on the ``B`` row; drop ``E``s.

    Times are integer nanoseconds; ``dur`` is written in place."""
    marks = np.flatnonzero(((ph == ord("B")) | (ph == ord("E"))) & valid)
    if marks.size == 0:
        return
    order = marks[np.argsort(ts[marks], kind="stable")]
    stacks: dict[int, list[int]] = defaultdict(list)
    unmatched_end = 0
    for i in order.tolist():
        key = int(lane[i])
        if ph[i] == ord("B"):
            stacks[key].append(i)
            continue
        valid[i] = False
        if stacks[key]:
            b = stacks[key].pop()
            dur[b] = min(max(0, int(ts[i]) - int(ts[b])), LIMIT_NS)
        else:
            unmatched_end += 1
    unmatched_begin = sum(len(s) for s in stacks.values())
    if unmatched_end:
        warnings.append(f"ignored {unmatched_end} 'E' events with no matching 'B'")
    if unmatched_begin:
        warnings.append(f"{unmatched_begin} 'B' events never ended; shown with zero duration")


def row_order(
    rows: np.ndarray,
    lane: np.ndarray,
    ts: np.ndarray,
    dur: np.ndarray,
    external_id: np.ndarray | None = None,
    nests: np.ndarray | None = None,
) -> np.ndarray:
    """``rows`` sorted by (lane, ts, -dur), full ties in their given order: what
    ``np.lexsort((-dur, ts, lane))`` gives, in about two thirds of its time.

    One stable sort of a combined (lane, ts) key (the rows come in file order, which
    is nearly sorted by time, and a stable sort runs through sorted stretches), then
    only the rows that share a (lane, ts) (a fifth of a Kineto trace's) are ordered by
    -dur, again by one combined key.  Values too far apart for a combined key to fit
    int64 take the lexsort.

    With ``external_id``, rows of a full (lane, ts, dur) tie that have one (>= 0) are
    put in ascending External id order among the places they hold; rows without one
    keep their places.  The first of a tie nests as the parent, and file order made
    ``aten::detach``/``detach`` swap parent and child (and their self time) in a
    reversed or shuffled file; Kineto numbers a parent op before its children (all 68
    such ties in the real traces are in External id order in the file).

    With ``nests`` (1: an op or annotation, 2: a runtime or driver call, 0: other), a
    full tie holding an op and a call has its calls after its other rows: a call is
    never the parent of an op.  An op made of one launch
    can start and end with it (at microsecond resolution), and the call carries the
    op's External id, so only file order told them apart, and a call written first
    took the op as its child (in a shuffled file ``table`` lost the op's device
    time).  torch's own event list holds the ops before the runtime calls.
    """
    if rows.size < 2:
        return rows
    lanes, times = lane[rows].astype(np.int64), ts[rows]
    base = int(times.min())
    width = int(times.max()) - base + 1
    if (int(lanes.max()) + 1) * width >= 2**62:
        ordered = rows[np.lexsort((-dur[rows], times, lanes))]
        if external_id is None and nests is None:
            return ordered
        same = (lane[ordered][1:] == lane[ordered][:-1]) & (ts[ordered][1:] == ts[ordered][:-1])
        group = np.cumsum(np.concatenate(([True], ~same)))
        if external_id is not None:
            ordered = _external_id_first(ordered, group, dur[ordered], external_id[ordered])
        return _leaves_last(ordered, group, dur[ordered], None if nests is None else nests[ordered])
    key = lanes * width + (times - base)
    order = np.argsort(key, kind="stable")
    tie = key[order[1:]] == key[order[:-1]]
    if tie.any():
        shared = np.zeros(order.size, dtype=bool)
        shared[1:] |= tie
        shared[:-1] |= tie
        at = np.flatnonzero(shared)
        group = np.cumsum(shared & ~np.concatenate(([False], tie)))[at]
        tied = order[at]
        tied_dur = dur[rows[tied]]
        shift = min(int(tied_dur.min()), 0)
        longest = int(tied_dur.max()) - shift + 1
        if int(group[-1] + 1) * longest < 2**62:  # (group, -dur) as one key, as above
            by = group * longest + (longest - 1 - (tied_dur - shift))
            tied = tied[np.argsort(by, kind="stable")]
        else:
            tied = tied[np.lexsort((-tied_dur, group))]
        if external_id is not None:
            tied_rows = rows[tied]
            tied = _external_id_first(tied, group, dur[tied_rows], external_id[tied_rows])
        if nests is not None:
            tied = _leaves_last(tied, group, dur[rows[tied]], nests[rows[tied]])
        order[at] = tied
    return rows[order]


def _external_id_first(
    tied: np.ndarray, group: np.ndarray, dur: np.ndarray, external_id: np.ndarray
) -> np.ndarray:
    """``tied`` (sorted by group, then -dur) with each run of equal (group, dur) put in
    ascending ``external_id`` order among its rows that have one (stable, so equal ids
    keep their order); rows with -1 stay where they are."""
    same = (group[1:] == group[:-1]) & (dur[1:] == dur[:-1])
    if not same.any():
        return tied
    shared = np.zeros(tied.size, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    run = np.cumsum(~np.concatenate(([False], same)))
    at = np.flatnonzero(shared & (external_id >= 0))
    if at.size < 2:
        return tied
    moved = at[np.lexsort((external_id[at], run[at]))]
    out = tied.copy()
    out[at] = tied[moved]
    return out


def _leaves_last(
    tied: np.ndarray, group: np.ndarray, dur: np.ndarray, nests: np.ndarray | None
) -> np.ndarray:
    """``tied`` (sorted by group, then -dur) with the calls (``nests`` 2) of each run of
    equal (group, dur) that also holds an op (``nests`` 1) moved after its other rows,
    both in their order (a stable sort); other runs as they are."""
    if nests is None or not (nests == 2).any() or not (nests == 1).any():
        return tied
    same = (group[1:] == group[:-1]) & (dur[1:] == dur[:-1])
    run = np.cumsum(np.concatenate(([True], ~same)))
    size = int(run[-1]) + 1
    mixed = (np.bincount(run, nests == 1, size) > 0) & (np.bincount(run, nests == 2, size) > 0)
    late = (nests == 2) & mixed[run]
    if not late.any():
        return tied
    return tied[np.lexsort((late, run))]


def _depths(
    ts: np.ndarray, dur: np.ndarray, kind: np.ndarray, lane_start: np.ndarray
) -> np.ndarray:
    """Nesting depth per row, lane by lane (rows sorted by start, longest first).

    A row's depth is the number of earlier slices on its lane still open at its
    start: (slices opened before it) - (slices that ended by its start), both
    counted with numpy.  Instants, flows and zero-length slices open nothing.
    """
    depth = np.zeros(len(ts), dtype=np.int16)
    opens = (kind != Kind.INSTANT) & (kind != Kind.FLOW) & (dur > 0)
    for lane in range(len(lane_start) - 1):
        lo, hi = int(lane_start[lane]), int(lane_start[lane + 1])
        if hi - lo < 2:
            continue
        lane_opens = opens[lo:hi]
        opened_before = np.cumsum(lane_opens) - lane_opens
        # stable: a merge sort, fast on ends that come nearly sorted (6x here)
        ends = np.sort((ts[lo:hi] + dur[lo:hi])[lane_opens], kind="stable")
        closed_by = np.searchsorted(ends, ts[lo:hi], side="right")
        depth[lo:hi] = np.clip(opened_before - closed_by, 0, 32767)
    return depth
