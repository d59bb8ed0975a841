"""One chunk of the event list -> plain columns (numpy arrays and a local string table).

Decoding is typed (msgspec Structs with only the fields the model needs) because
that is several times faster and leaner than decoding into dicts; ``args`` other
than the few id fields are not decoded at all (``ArgsReader`` reads them lazily).
A chunk whose events do not fit the types (a string ``ts``, a float ``pid``) is
decoded event by event instead, keeping every event that can be made sense of.
The result holds no per-event Python object, so chunks can cross processes cheaply.
"""

from __future__ import annotations

import math
import mmap
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from profiling.errors import TraceError
from profiling.trace.lenient import (
    decode_masked,
    event_from_value,
    lenient_event,
    loads_lenient,
    mask_for_structure,
)
from profiling.trace.split import raise_malformed


class Args(msgspec.Struct):
    """The few ``args`` fields kept as columns (plus the values of metadata events)."""

    # Absent ids decode as -1 (NO_ID) so columns fill without a per-event branch.
    correlation: int = -1
    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_old: int = msgspec.field(default=-1, name="external id")
    stream: int | str = -1
    name: str | None = None  # M events: process_name / thread_name
    labels: str | None = None  # M events: process_labels
    sort_index: int | None = None  # M events: *_sort_index


class Event(msgspec.Struct):
    """One entry of ``traceEvents`` with only the fields the model uses."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = math.nan  # NaN: absent; such events are skipped with a warning
    dur: float = 0.0
    id: int | str | None = None
    args: Args = msgspec.field(default_factory=Args)


@dataclass
class MetaEvent:
    """A ``ph: M`` event: names and sort order of processes and threads."""

    name: str
    pid: Any
    tid: Any
    value: str | None
    labels: str | None
    sort_index: int | None


@dataclass
class Chunk:
    """Columns of one chunk; ids in ``name_id``/``cat_id``/``lane`` are chunk-local."""

    n_entries: int
    entry: np.ndarray  # int64: index in the chunk's entry list, for rows (M events excluded)
    ts: np.ndarray  # float64 microseconds
    dur: np.ndarray  # float64 microseconds
    ph: np.ndarray  # uint8
    name_id: np.ndarray  # int32 into strings
    cat_id: np.ndarray  # int32 into strings
    correlation: np.ndarray  # int64 (flows: flow id)
    external_id: np.ndarray  # int64
    stream: np.ndarray  # int64
    lane: np.ndarray  # int32 into lane_keys
    strings: list[str]
    lane_keys: list[tuple[Any, Any]]
    meta: list[MetaEvent]
    end: int  # byte where this chunk's decoded events end (repairs move it back)
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0  # entries that are not event objects


_EVENTS = msgspec.json.Decoder(list[Event])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_BYTE = re.compile(r"\(byte (\d+)\)")


def decode_chunk(
    text: bytes | mmap.mmap, lo: int, hi: int, last: bool, where: str, open_end: bool = False
) -> Chunk:
    """Decode the events in ``text[lo:hi]`` (whole events separated by commas).

    ``open_end``: this is the last chunk of a list with no closing ``]`` (cut
    short, or the open array form), so an unfinished last event is cut off.
    """
    raw = text[lo:hi]
    stop = _content_end(raw)
    warnings: list[str] = []
    end = lo + stop
    if stop and raw[stop - 1 : stop] == b",":  # chunks are cut after the comma between events
        stop -= 1
    if not raw[:stop].strip():
        return _columns([], lo, warnings)
    body = memoryview(raw)[:stop]
    doc = b"".join((b"[", body, b"]"))
    try:
        return _columns(_EVENTS.decode(doc), end, warnings)
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    if last and open_end:
        unfinished = _structure_error(doc)
        if unfinished is not None:  # cut back to the last complete event
            doc, end = _repair_cut(bytes(body), lo, where, warnings, unfinished)
            try:
                return _columns(_EVENTS.decode(doc), end, warnings)
            except (msgspec.ValidationError, msgspec.DecodeError):
                pass
    # Slow path: fields of the wrong types, or text only a lenient reader accepts.
    events, skipped = _decode_leniently(doc, lo, where, warnings)
    if skipped:
        warnings.append(f"skipped {skipped} entries that are not events (wrong types or shape)")
    chunk = _columns(events, end, warnings, placeholders=skipped > 0)
    chunk.skipped = skipped
    return chunk


def _content_end(raw: bytes) -> int:
    """Length of ``raw`` without trailing whitespace (no copy of the bytes)."""
    stop = len(raw)
    while stop and raw[stop - 1] in b" \t\r\n\x00":
        stop -= 1
    return stop


def chunk_entries(text: bytes | mmap.mmap, lo: int, hi: int) -> list[msgspec.Raw]:
    """Every entry of a chunk as raw JSON, in order (for reading ``args`` lazily)."""
    body = bytes(text[lo:hi]).rstrip().rstrip(b",")
    if not body.strip():
        return []
    return split_entries(b"[" + body + b"]")


def _repair_cut(
    body: bytes, lo: int, where: str, warnings: list[str], exc: msgspec.DecodeError
) -> tuple[bytes, int]:
    """Cut an unfinished last chunk back to its last complete event.

    The Trace Event Format allows an array without its closing bracket, and a
    profiler killed mid-write leaves half an event: both end up here.  Candidate
    cut points (a ``}`` that could close an event) are tried from the end, on a
    copy where NaN tokens and bad bytes are masked (same offsets), so only the
    structure decides where the last complete event ends.
    """
    probe = mask_for_structure(body)
    pos = len(body)
    for _ in range(256):
        pos = probe.rfind(b"}", 0, pos)
        if pos < 0:
            break
        try:
            _RAW_LIST.decode(b"[" + probe[: pos + 1] + b"]")
        except msgspec.DecodeError:
            continue
        warnings.append(
            f"file cut short: kept every complete event, dropped the last {len(body) - pos - 1} "
            "bytes (an unfinished event)"
        )
        return b"[" + body[: pos + 1] + b"]", lo + pos + 1
    if not body.strip(b"{ \t\r\n"):
        warnings.append("file cut short before its first complete event")
        return b"[]", lo
    if "truncated" not in str(exc):  # damaged before its end: say where
        _raise_at(exc, lo - 1, where)
        raise exc
    raise TraceError(
        "file cut short and no complete event could be found", where, "capture the trace again"
    )


def _structure_error(doc: bytes) -> msgspec.DecodeError | None:
    """Why ``doc`` is not JSON even to a lenient reader (None if it is)."""
    try:
        _RAW_LIST.decode(mask_for_structure(doc))
    except msgspec.DecodeError as exc:
        return exc
    return None


def _decode_leniently(
    doc: bytes, lo: int, where: str, warnings: list[str]
) -> tuple[list[Event], int]:
    """Event by event: keep what can be read, count what cannot (skipped entries keep
    their place in the entry numbering, so rows still map back to the file).

    Entries of the wrong types are converted field by field; entries that strict
    JSON rejects (NaN tokens, bytes that are not UTF-8) are read with Python's rules.
    """
    try:
        entries = split_entries(doc)
    except msgspec.DecodeError as exc:
        _raise_at(exc, lo - 1, where)
        raise
    repairs: dict[str, None] = {}
    events: list[Event] = []
    skipped = coerced = relaxed = 0
    for entry in entries:
        event = None
        try:
            event = _EVENT.decode(entry)
        except msgspec.ValidationError:
            event = lenient_event(entry)
            coerced += event is not None
        except msgspec.DecodeError:  # bad bytes or NaN inside this entry
            lenient = loads_lenient(bytes(entry))
            if lenient is not None:
                event = event_from_value(lenient[0])
                repairs.update(dict.fromkeys(lenient[1]))
                relaxed += event is not None
        if event is None:
            skipped += 1
            events.append(Event(ph="\x00"))  # placeholder, dropped by _columns
        else:
            events.append(event)
    if repairs:
        warnings.append(
            f"read {relaxed} events with a lenient JSON reader: the text holds "
            + " and ".join(repairs)
        )
    if coerced:
        warnings.append(
            f"read {coerced} events whose fields have unexpected JSON types "
            "(e.g. a string 'ts'); converted what could be"
        )
    return events, skipped


def split_entries(doc: bytes) -> list[msgspec.Raw]:
    """The entries of a JSON list, raw.  Where strict JSON fails only on NaN tokens or
    bad bytes, the list is split on a masked copy (same offsets) and each entry is
    the original text, for a lenient reader to decode."""
    try:
        return _RAW_LIST.decode(doc)
    except msgspec.DecodeError as exc:
        # a DecodeError from here on: not JSON even to a lenient reader
        raws, masked = decode_masked(_RAW_LIST.decode, doc, exc)
    base = np.frombuffer(masked, dtype=np.uint8).ctypes.data
    out = []
    for raw in raws:
        at = np.frombuffer(raw, dtype=np.uint8).ctypes.data - base
        out.append(msgspec.Raw(doc[at : at + len(raw)]))
    return out


_EVENT = msgspec.json.Decoder(Event)


def _raise_at(exc: msgspec.DecodeError, offset: int, where: str) -> None:
    """Re-raise a decode error with the byte position in the file, not in the chunk."""
    message = _BYTE.sub(lambda m: f"(byte {int(m.group(1)) + offset})", str(exc))
    raise_malformed(msgspec.DecodeError(message), where)


def _columns(
    events: list[Event], end: int, warnings: list[str], placeholders: bool = False
) -> Chunk:
    """Column-wise extraction: a few list comprehensions, no per-event branching."""
    n_entries = len(events)
    meta = [
        MetaEvent(e.name, _as_number(e.pid), _as_number(e.tid), e.args.name, e.args.labels,
                  e.args.sort_index)
        for e in events
        if e.ph == "M"
    ]
    entry = np.arange(n_entries, dtype=np.int64)
    if meta or placeholders:  # rows exclude M events and skipped entries
        keep = [i for i, e in enumerate(events) if e.ph != "M" and e.ph != "\x00"]
        events = [events[i] for i in keep]
        entry = np.asarray(keep, dtype=np.int64)
    strings: dict[str, int] = {"": 0}
    args = [e.args for e in events]
    pid = _ids([e.pid for e in events])
    tid = _ids([e.tid for e in events])
    keys = list(zip(pid, tid, strict=True))
    lane_keys = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    ph = _phase_codes([e.ph for e in events])
    correlation = int_column([a.correlation for a in args])
    for i in np.flatnonzero(np.isin(ph, _FLOW_CODES)).tolist():  # flows carry their id in "id"
        flow_id = _as_int_id(events[i].id)
        correlation[i] = -1 if flow_id is None else flow_id
    external_id = int_column([a.external_id for a in args])
    old = external_id == -1
    if old.any():
        external_id[old] = int_column([a.external_id_old for a in args])[old]
    n = len(events)
    return Chunk(
        n_entries=n_entries,
        entry=entry,
        ts=np.array([e.ts for e in events], dtype=np.float64),
        dur=np.array([e.dur for e in events], dtype=np.float64),
        ph=ph,
        name_id=_intern([e.name for e in events], strings),
        cat_id=_intern([e.cat for e in events], strings),
        correlation=correlation,
        external_id=external_id,
        stream=int_column([a.stream for a in args]),
        lane=np.fromiter(map(lane_keys.__getitem__, keys), dtype=np.int32, count=n),
        strings=list(strings),
        lane_keys=list(lane_keys),
        meta=meta,
        end=end,
        warnings=warnings,
    )


_FLOW_CODES = np.array([ord("s"), ord("t"), ord("f")], dtype=np.uint8)


def _intern(values: list[str], ids: dict[str, int]) -> np.ndarray:
    for s in dict.fromkeys(values):
        if s not in ids:
            ids[s] = len(ids)
    return np.fromiter(map(ids.__getitem__, values), dtype=np.int32, count=len(values))


def _phase_codes(phases: list[str]) -> np.ndarray:
    """ord() of each phase letter (0 when absent), computed once per distinct phase."""
    code = {p: (ord(p[0]) if p and ord(p[0]) < 256 else 0) for p in dict.fromkeys(phases)}
    return np.fromiter(map(code.__getitem__, phases), dtype=np.uint8, count=len(phases))


def _ids(values: list[int | str]) -> list[Any]:
    """pid/tid values, with digit strings read as the integers they spell.

    Old Kineto wrote some tids as strings and others as ints for one thread.
    """
    distinct = dict.fromkeys(values)
    if not any(type(v) is str for v in distinct):
        return values
    as_number = {v: _as_number(v) for v in distinct}
    return list(map(as_number.__getitem__, values))


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


def int_column(values: list[Any]) -> np.ndarray:
    """Integers -> int64 column; anything else (hex strings, huge, odd) the slow way."""
    try:
        return np.array(values, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        pass
    out = np.full(len(values), -1, dtype=np.int64)
    for i, v in enumerate(values):
        number = _as_int_id(v)
        if number is not None:
            out[i] = number
    return out
