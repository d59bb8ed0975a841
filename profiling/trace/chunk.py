"""Decoded events of one chunk -> plain columns (numpy arrays and a local string table).

The result holds no per-event Python object, so chunks cross processes cheaply;
``columns.build_trace`` merges them.  Times go through ``times`` (exact integer
nanoseconds), ids through ``int_column`` (exact int64, -1 when absent or odd).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from profiling.trace.events import AnyEvent, Event, MetaEvent, TextEvent
from profiling.trace.op_inputs import NOT_READ, OP_NAMES, op_codes
from profiling.trace.times import float_times_ns, text_times_ns


@dataclass
class Chunk:
    """Columns of one chunk; ids in ``name_id``/``cat_id``/``lane`` are chunk-local."""

    n_entries: int
    entry: np.ndarray  # int64: index in the chunk's entry list, for rows (M events excluded)
    ts_ns: np.ndarray  # int64 nanoseconds (see times.py)
    dur_ns: np.ndarray  # int64 nanoseconds
    ts_state: np.ndarray  # uint8: times.OK, OUT_OF_RANGE or NOT_A_NUMBER
    dur_state: np.ndarray  # uint8
    ph: np.ndarray  # uint8
    name_id: np.ndarray  # int32 into strings
    cat_id: np.ndarray  # int32 into strings
    correlation: np.ndarray  # int64 (flows: flow id)
    external_id: np.ndarray  # int64
    stream: np.ndarray  # int64
    lane: np.ndarray  # int32 into lane_keys
    op_input: np.ndarray  # int8: input dtype code of compute and cast ops (op_inputs)
    strings: list[str]
    lane_keys: list[tuple[Any, Any]]
    meta: list[MetaEvent]
    end: int  # byte where this chunk's decoded events end (repairs move it back)
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0  # entries that are not event objects
    exact_times: bool = False  # times were read from their text (epoch-sized decimals)
    # Set while the columns wait in memory files, (path, dtype, length) per column:
    # see shared_columns.
    shared: list[tuple[str, str, int]] | None = None


WRONG_TYPES = (
    "read {} events whose fields have unexpected JSON types (e.g. a string 'ts'); "
    "converted what could be"
)


def chunk_columns(
    events: list[AnyEvent] | list[TextEvent],
    end: int,
    warnings: list[str],
    placeholders: bool = False,
) -> Chunk | None:
    """Column-wise extraction: a few list comprehensions, no per-event branching.

    Values that repeat (phases, names, categories, (pid, tid) pairs) are looked up
    once per event in a dict that numbers them (``_Numbering``), and anything more
    (a phase's code, a digit-string pid read as a number) is worked out once per
    distinct value: this runs on every event of the trace, in the decoding workers.

    None when ``events`` hold numbers too large to give exact nanoseconds (the
    caller decodes them again keeping more of their text: see events.py).
    """
    n_entries = len(events)
    phase_ids, phases = _numbered([e.ph for e in events])
    is_meta = np.array([p == "M" for p in phases], dtype=bool)
    drop = is_meta | np.array([p == "\x00" for p in phases], dtype=bool)
    meta = [
        MetaEvent(e.name, _as_number(e.pid), _as_number(e.tid), e.args.name, e.args.labels,
                  e.args.sort_index)
        for e in map(events.__getitem__, np.flatnonzero(is_meta[phase_ids]).tolist())
    ]
    entry = np.arange(n_entries, dtype=np.int64)
    rows: list[AnyEvent] = events  # type: ignore[assignment]
    if meta or placeholders:  # rows exclude M events and skipped entries
        keep = np.flatnonzero(~drop[phase_ids])
        rows = [events[i] for i in keep.tolist()]
        entry = keep.astype(np.int64)
        phase_ids = phase_ids[keep]
    times = _times(rows, warnings)
    if times is None:
        return None
    strings = _Numbering({"": 0})
    args = [e.args for e in rows]
    name_id = _intern([e.name for e in rows], strings)
    pids, tids = [e.pid for e in rows], [e.tid for e in rows]
    pair_ids, pairs = _numbered(list(zip(pids, tids, strict=True)))
    lane_keys = _Numbering()  # pid/tid with digit strings read as numbers: old Kineto
    pair_lane = np.array([lane_keys[(_as_number(p), _as_number(t))] for p, t in pairs],
                         dtype=np.int32)
    ph = _phase_codes(phases)[phase_ids]
    correlation = int_column([a.correlation for a in args])
    flows = np.flatnonzero(np.isin(ph, _FLOW_CODES))  # flows carry their id in "id"
    correlation[flows] = _flow_ids([rows[i].id for i in flows.tolist()])
    external_id = int_column([a.external_id for a in args])
    old = external_id == -1
    if old.any():
        external_id[old] = int_column([a.external_id_old for a in args])[old]
    return Chunk(
        n_entries=n_entries,
        entry=entry,
        ts_ns=times[0],
        dur_ns=times[1],
        ts_state=times[2],
        dur_state=times[3],
        ph=ph,
        name_id=name_id,
        cat_id=_intern([e.cat for e in rows], strings),
        correlation=correlation,
        external_id=external_id,
        stream=int_column([a.stream for a in args]),
        lane=pair_lane[pair_ids],
        op_input=_op_inputs(name_id, args, strings),
        strings=list(strings),
        lane_keys=list(lane_keys),
        meta=meta,
        end=end,
        warnings=warnings,
        exact_times=bool(rows) and not isinstance(rows[0], Event),
    )


class _Numbering(dict):  # type: ignore[type-arg]
    """value -> its number in order of first sight; numbering a new value is the only
    Python-level call (``__missing__``), so a lookup per event stays in C."""

    def __missing__(self, key: Any) -> int:
        number = self[key] = len(self)
        return number


def _op_inputs(name_id: np.ndarray, args: list[Any], strings: _Numbering) -> np.ndarray:
    """The ``op_inputs`` code of each row: read for the compute and cast ops only
    (found by name id), ``NOT_READ`` for every other row."""
    codes = np.full(name_id.shape[0], NOT_READ, dtype=np.int8)
    wanted = [strings[n] for n in OP_NAMES if n in strings]
    if wanted:
        rows = np.flatnonzero(np.isin(name_id, wanted)).tolist()
        names = list(strings)
        codes[rows] = op_codes([names[i] for i in name_id[rows].tolist()],
                               [args[i].input_type for i in rows],
                               [args[i].concrete_inputs for i in rows])
    return codes


def _numbered(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Each value's number (int32), and the distinct values in order of first sight."""
    numbers = _Numbering()
    ids = _intern(values, numbers)
    return ids, list(numbers)


def exact_chunk_columns(
    events: list[TextEvent], end: int, warnings: list[str], placeholders: bool = False
) -> Chunk:
    """``chunk_columns`` of events whose times are text (never None: text is always exact)."""
    chunk = chunk_columns(events, end, warnings, placeholders)
    assert chunk is not None
    return chunk


def _times(
    rows: list[AnyEvent], warnings: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """ts and dur in nanoseconds, with their states (see ``times``); None if numbers
    cannot be exact.  All rows of a chunk come from one decoder, so one type."""
    kind = type(rows[0]) if rows else Event
    ts = _field_ns([e.ts for e in rows], as_text=kind is not Event)
    dur = _field_ns([e.dur for e in rows], as_text=kind is TextEvent) if ts else None
    if ts is None or dur is None:
        return None
    strings = max(ts[2], dur[2])  # JSON strings, read as the numbers they spell
    if strings and not any("unexpected JSON types" in w for w in warnings):
        warnings.append(WRONG_TYPES.format(strings))
    return ts[0], dur[0], ts[1], dur[1]


def _field_ns(values: list[Any], as_text: bool) -> tuple[np.ndarray, np.ndarray, int] | None:
    if as_text:
        return text_times_ns(values)
    numbers = float_times_ns(values)
    return None if numbers is None else (numbers[0], numbers[1], 0)


_FLOW_CODES = np.array([ord("s"), ord("t"), ord("f")], dtype=np.uint8)


def _intern(values: list[Any], ids: _Numbering) -> np.ndarray:
    return np.fromiter(map(ids.__getitem__, values), dtype=np.int32, count=len(values))


def _phase_codes(phases: list[str]) -> np.ndarray:
    """ord() of each distinct phase's letter (0 when absent or beyond one byte)."""
    return np.array([ord(p[0]) if p and ord(p[0]) < 256 else 0 for p in phases], dtype=np.uint8)


def _as_number(value: Any) -> Any:
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:
        return int(value)  # ASCII only: '²'.isdigit() is True, but int('²') fails
    return value


def _as_int_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else None
    if isinstance(value, str):
        try:
            number = int(value, 0)
        except ValueError:
            return None
        return number if -(2**63) <= number < 2**63 else None
    return None


def _flow_ids(values: list[Any]) -> np.ndarray:
    """Flow ids as int64 (-1 where not an integer id); plain ints in one conversion.
    Anything else one by one: ``int_column`` would read a bool or a decimal string."""
    if all(type(v) is int for v in values):  # not bool, which is no id
        return int_column(values)
    return _ids_one_by_one(values)


def int_column(values: list[Any]) -> np.ndarray:
    """Integers -> int64 column; anything else (hex strings, huge, odd) the slow way."""
    try:
        return np.array(values, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return _ids_one_by_one(values)


def _ids_one_by_one(values: list[Any]) -> np.ndarray:
    """``_as_int_id`` of each value as int64, -1 where it is None."""
    out = np.full(len(values), -1, dtype=np.int64)
    for i, v in enumerate(values):
        number = _as_int_id(v)
        if number is not None:
            out[i] = number
    return out
