"""Decoded chunks -> the columnar ``Trace``: global ids, kinds, B/E pairs, lanes, depth.

Chunks arrive with chunk-local string and lane ids; merging maps them onto
global ones with one small remap array per chunk, so the per-event work stays
in numpy.  Metadata events (``ph: M``) are not rows: they name and order
processes and threads.
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import Any

import numpy as np

from profiling.trace.chunk import Chunk
from profiling.trace.column_threads import in_threads
from profiling.trace.depths import depths
from profiling.trace.kinds import category_kinds, device_types, kinds_by_name
from profiling.trace.lanes import build_lanes, split_mixed_lanes
from profiling.trace.model import GPU_KIND_TABLE, NO_ID, ArgsSource, Kind, Lane, Trace, fits
from profiling.trace.sort_rows import row_order
from profiling.trace.spare_arrays import PIECE, SpareArrays
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
    copy goes as soon as it is in the merged one), and a merged column is replaced
    by its sorted copy, a few at a time (side by side: ``in_threads``); so the peak
    is about the trace's columns plus a few merged ones, not three copies of every
    column (chunks, merged, sorted).  A column made once another is spent goes where
    the spent one was (``SpareArrays``): fresh memory is slow to touch.
    The chunks have no columns left when this returns.
    """
    warnings = list(warnings)
    for chunk in chunks:
        warnings.extend(chunk.warnings)
    strings: dict[str, int] = {"": 0}
    lane_keys: dict[tuple[Any, Any], int] = {}
    string_maps = [_remap(chunk.strings, strings) for chunk in chunks]
    lane_maps = [_remap(chunk.lane_keys, lane_keys) for chunk in chunks]
    if len(strings) <= 1 << 15:  # ids as int16, as narrow makes them in the end
        string_maps = [ids.astype(np.int16) for ids in string_maps]
    maps = {"name_id": string_maps, "cat_id": string_maps, "lane": lane_maps}
    merges = (partial(_merged, chunks, key, maps.get(key), to=_MERGED_AS.get(key))
              for key in _MERGED_FIRST)
    rows = sum(chunk.ts_ns.shape[0] for chunk in chunks)
    col = dict(zip(_MERGED_FIRST, in_threads(*merges, rows=rows), strict=True))
    names, cats, lane = col.pop("name_id"), col.pop("cat_id"), col.pop("lane")
    ts_ns, dur_ns, ph, external_id = col["ts_ns"], col["dur_ns"], col["ph"], col["external_id"]
    string_list = list(strings)
    kind, device, valid = in_threads(
        partial(_row_kinds, ph, cats, names, string_list),
        partial(_devices, ph, cats, string_list),
        partial(_usable_paired_rows, col, lane, warnings),
        rows=rows,
    )
    del col
    gpu_flow_end = (ph == ord("f")) & (cats == strings.get("ac2g", -1))  # a launch's kernel end
    keys, lane = split_mixed_lanes(list(lane_keys), lane, valid, kind, device, gpu_flow_end)
    meta = [m for c in chunks for m in c.meta]
    rows = None if valid.all() else np.flatnonzero(valid)  # None: every row, no gathers
    del valid, gpu_flow_end
    used = slice(None) if rows is None else rows
    lanes, groups, lane_remap = build_lanes(keys, lane[used], kind[used], meta, device[used])
    for lo in range(0, lane.shape[0], PIECE):  # lane_remap[lane], in place
        lane[lo:lo + PIECE] = lane_remap[lane[lo:lo + PIECE]]

    spare = SpareArrays()
    order = row_order(rows, lane, ts_ns, dur_ns, external_id, _NESTS[kind], spare)
    del rows
    columns = {"ts_ns": ts_ns, "dur_ns": dur_ns, "kind": kind, "lane": lane, "name_id": names,
               "cat_id": cats, "ph": ph, "device_type": device, "external_id": external_id}
    del ts_ns, dur_ns, kind, lane, names, cats, ph, device, external_id
    _put_in_order(columns, chunks, entry_starts, order, lanes, spare)
    return Trace(
        path=path,
        n_entries=sum(c.n_entries for c in chunks),
        strings=string_list,
        lanes=lanes,
        groups=groups,
        metadata=metadata,
        warnings=warnings,
        args_source=args_source,
        **columns,
    )


_TAKEN = np.zeros(0, dtype=np.int8)
# merged first, side by side, largest first; external_id breaks exact ties (row_order)
_MERGED_AS = {"external_id": np.int32}  # when every value fits: see _merged
_MERGED_FIRST = ("ts_ns", "dur_ns", "external_id", "name_id", "cat_id", "lane", "ph", "ts_state",
                 "dur_state")


def _put_in_order(columns: dict[str, np.ndarray], chunks: list[Chunk], entry_starts: list[int],
                  order: np.ndarray, lanes: list[Lane], spare: SpareArrays) -> None:
    """Replace each merged column by its rows in ``order`` (ids narrowed: ``narrow``),
    merge the columns still in the chunks straight into that order, add ``depth``
    and ``lane_start``, and count each lane's events and depth; in place.

    Two rounds of steps side by side, before and after the depths; each step takes a
    spent array from ``spare`` when one fits."""
    early = ("ts_ns", "dur_ns", "kind", "lane", "name_id", "cat_id")  # what depths need first
    rows = order.shape[0]
    in_threads(*(partial(_reorder_column, columns, key, order, spare) for key in early), rows=rows)
    lane = columns["lane"]
    lane_ids = np.arange(len(lanes) + 1, dtype=lane.dtype)  # as int64, lane would be cast
    lane_start = np.searchsorted(lane, lane_ids).astype(np.int64)
    depth = depths(columns["ts_ns"], columns["dur_ns"], columns["kind"], lane_start, spare)
    for item in lanes:
        lo, hi = int(lane_start[item.index]), int(lane_start[item.index + 1])
        item.events = hi - lo
        item.max_depth = int(depth[lo:hi].max()) if hi > lo else 0
    entries = [np.asarray(first, dtype=np.int64) for first in entry_starts]
    merge = partial(_merge_column, columns, chunks, order, spare)
    in_threads(
        partial(_stream_column, columns, chunks, order, spare, lanes),
        partial(merge, "correlation", "correlation"),
        partial(merge, "entry", "source_index", entries),
        partial(_reorder_column, columns, "external_id", order, spare),
        partial(merge, "op_input", "op_input"),
        partial(_reorder_column, columns, "ph", order, spare),
        partial(_reorder_column, columns, "device_type", order, spare),
        rows=rows,
    )
    columns.update(depth=depth, lane_start=lane_start)


_NARROWED = {"name_id": (np.int16, np.int32), "cat_id": (np.int16, np.int32),
             "external_id": (np.int32, np.int64), "correlation": (np.int32, np.int64),
             "source_index": (np.int32, np.int64)}


def _reorder_column(columns: dict[str, np.ndarray], key: str, order: np.ndarray,
                    spare: SpareArrays) -> None:
    """``columns[key]`` in ``order`` (narrowed: ``_NARROWED``)."""
    if key in _NARROWED:
        columns[key] = spare.narrow_reorder(columns[key], order, *_NARROWED[key])
    else:
        columns[key] = spare.reorder(columns[key], order)


def _merge_column(columns: dict[str, np.ndarray], chunks: list[Chunk], order: np.ndarray,
                  spare: SpareArrays, key: str, name: str,
                  offsets: list[np.ndarray] | None = None) -> None:
    """``columns[name]``: the chunks' ``key`` merged, in ``order``."""
    to = _NARROWED[name][0] if name in _NARROWED else None
    columns[name] = _merged(chunks, key, offsets=offsets, spare=spare, to=to)
    _reorder_column(columns, name, order, spare)


def _merged(
    chunks: list[Chunk],
    key: str,
    maps: list[np.ndarray] | None = None,
    offsets: list[np.ndarray] | None = None,
    spare: SpareArrays | None = None,
    to: type | None = None,
) -> np.ndarray:
    """Column ``key`` of every chunk in one array (chunk-local ids through that chunk's
    map, ``offsets`` added), taken from the chunks: each chunk's copy goes once it is
    in the merged array (a spent one from ``spare`` when there is one).  As ``to``
    when every value fits it: the dtype ``narrow`` gives it, without the wide copy."""
    parts = []
    dtypes = []
    for i, chunk in enumerate(chunks):
        part = getattr(chunk, key)
        setattr(chunk, key, _TAKEN)
        parts.append(part)
        dtypes.append(maps[i].dtype if maps is not None else
                      np.result_type(part, offsets[i]) if offsets is not None else part.dtype)
    dtype = np.result_type(*dtypes)
    if to is not None and maps is None and all(
        fits(part, to, 0 if offsets is None else int(offsets[i])) for i, part in enumerate(parts)
    ):
        dtype = np.dtype(to)
    total = sum(part.shape[0] for part in parts)
    out = (spare.empty if spare is not None else _empty)(total, dtype)
    parts.reverse()  # popped in chunk order: each part goes once copied
    lo = 0
    for i in range(len(chunks)):
        part = parts.pop()
        hi = lo + part.shape[0]
        if maps is not None:
            out[lo:hi] = maps[i][part]
        elif offsets is not None:
            np.add(part, offsets[i], out=out[lo:hi])
        else:
            out[lo:hi] = part
        lo = hi
    return out


def _empty(length: int, dtype: Any) -> np.ndarray:
    return np.empty(length, dtype=dtype)


def _stream_column(columns: dict[str, np.ndarray], chunks: list[Chunk], order: np.ndarray,
                   spare: SpareArrays, lanes: list[Lane]) -> None:
    """``columns["stream"]``: merged, in ``order``, completed from the lanes (needs the
    sorted ``kind`` and ``lane``), narrowed."""
    stream = spare.reorder(_merged(chunks, "stream", spare=spare), order)
    _streams_from_lanes(stream, columns["kind"], columns["lane"], lanes)
    columns["stream"] = spare.narrow(stream)


def _streams_from_lanes(stream: np.ndarray, kind: np.ndarray, lane: np.ndarray,
                        lanes: list[Lane]) -> None:
    """A GPU event with no ``stream`` arg gets its lane's tid (in place): Kineto writes
    the stream as the tid of every device event, so the tid says it where a writer
    left the arg out, and a kernel's stream is then one fact, not null in one place
    and a lane in another."""
    no_stream = stream == NO_ID
    no_stream &= GPU_KIND_TABLE[kind]
    missing = np.flatnonzero(no_stream)
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
    kind = np.where(_SLICE_TABLE[ph], by_category[cat_id], _PHASE_TABLE[ph])
    return kind.astype(np.uint8, copy=False)


def _row_kinds(ph: np.ndarray, cat_id: np.ndarray, name_id: np.ndarray,
               strings: list[str]) -> np.ndarray:
    """``Kind`` of each row (``_kinds``, then ``kinds_by_name``)."""
    return kinds_by_name(_kinds(ph, cat_id, strings), cat_id, name_id, strings)


def _usable_paired_rows(col: dict[str, np.ndarray], lane: np.ndarray,
                        warnings: list[str]) -> np.ndarray:
    """``_usable_rows``, then ``_pair_begin_end`` (durations changed in place)."""
    valid = _usable_rows(col, warnings)
    _pair_begin_end(col["ph"], lane, col["ts_ns"], col["dur_ns"], valid, warnings)
    return valid


def _devices(ph: np.ndarray, cat_id: np.ndarray, strings: list[str]) -> np.ndarray:
    """``DeviceType`` of each row: slices from their category, other phases CPU."""
    by_category = np.array([int(d) for d in device_types(strings)], dtype=np.uint8)
    return np.where(_SLICE_TABLE[ph], by_category[cat_id], 0).astype(np.uint8, copy=False)


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
