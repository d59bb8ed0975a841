"""JSON text -> typed event records, with repair of files cut short.

Decoding is typed (msgspec Structs with only the fields the model needs, and
``args`` kept as raw JSON) because that is several times faster and leaner than
decoding into dicts.  A file whose events do not fit the types (a string ``ts``,
a float ``pid``) falls back to decoding event by event, keeping every event that
can be made sense of and counting the rest in a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import msgspec

from profiling.errors import TraceError

_EMPTY = msgspec.Raw(b"")


class Args(msgspec.Struct):
    """The few ``args`` fields the model keeps as columns (plus metadata values)."""

    correlation: int | None = None
    external_id: int | None = msgspec.field(default=None, name="External id")
    external_id_old: int | None = msgspec.field(default=None, name="external id")
    stream: int | str | None = None
    device: int | str | None = None
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
    ts: float | None = None
    dur: float | None = None
    id: int | str | None = None
    args: Args | None = None


class RawArgs(msgspec.Struct):
    """Second, untyped view of each event: its ``args`` as raw JSON bytes."""

    args: msgspec.Raw = _EMPTY


@dataclass
class Decoded:
    metadata: dict[str, Any]
    events: list[Event]
    raw_args: list[msgspec.Raw]
    n_entries: int
    warnings: list[str] = field(default_factory=list)


_TOP_LEVEL = dict[str, msgspec.Raw]
_EVENTS = msgspec.json.Decoder(list[Event])
_RAW_ARGS = msgspec.json.Decoder(list[RawArgs])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_EVENT = msgspec.json.Decoder(Event)


def decode_trace(data: bytes, where: str) -> Decoded:
    """Decode a whole trace document (object or bare-array form)."""
    start = _first_non_space(data)
    first = data[start : start + 1]
    warnings: list[str] = []
    if first == b"{":
        metadata, events_text = _split_object(data, where, warnings)
    elif first == b"[":
        metadata, events_text = {}, data
    else:
        _raise_not_json(data, where)
    return _decode_events(events_text, metadata, where, warnings)


def _first_non_space(data: bytes) -> int:
    return len(data) - len(data.lstrip())


def _split_object(
    data: bytes, where: str, warnings: list[str]
) -> tuple[dict[str, Any], bytes | msgspec.Raw]:
    """Top-level keys (small, decoded) and the raw text of the events list."""
    try:
        top = msgspec.json.decode(data, type=_TOP_LEVEL)
    except msgspec.ValidationError:
        raise TraceError(
            "JSON, but not a trace (the top-level object has odd keys)", where, _TRACE_HINT
        ) from None
    except msgspec.DecodeError as exc:
        if "truncated" not in str(exc):
            _raise_malformed(exc, where)
        return _split_truncated_object(data, where, warnings)
    if "traceEvents" not in top:
        keys = ", ".join(sorted(top)[:5]) or "none"
        raise TraceError(
            f"JSON, but not a trace: no 'traceEvents' list (top-level keys: {keys})",
            where,
            _TRACE_HINT,
        )
    events_text = top.pop("traceEvents")  # a view into ``data``, not a copy
    metadata: dict[str, Any] = {}
    for key, raw in top.items():
        try:
            metadata[key] = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            warnings.append(f"top-level key {key!r} could not be decoded and was ignored")
    if not bytes(memoryview(events_text)[:64]).lstrip().startswith(b"["):
        raise TraceError("JSON, but 'traceEvents' is not a list", where, _TRACE_HINT)
    return metadata, events_text


def _split_truncated_object(
    data: bytes, where: str, warnings: list[str]
) -> tuple[dict[str, Any], bytes]:
    """An object-form file cut short: metadata before ``traceEvents``, then events."""
    key = data.find(b'"traceEvents"')
    if key < 0:
        raise TraceError(
            "file ends early, before any 'traceEvents' list", where, "capture the trace again"
        )
    bracket = data.find(b"[", key)
    if bracket < 0:
        raise TraceError("file ends early, inside 'traceEvents'", where, "capture it again")
    metadata: dict[str, Any] = {}
    head = data[:key].rstrip().rstrip(b",")
    if head.strip() != b"{":
        try:
            value = msgspec.json.decode(head + b"}")
            if isinstance(value, dict):
                metadata = value
        except msgspec.DecodeError:
            warnings.append("the top-level keys before 'traceEvents' could not be read")
    return metadata, data[bracket:]


def _decode_events(
    text: bytes | msgspec.Raw, metadata: dict[str, Any], where: str, warnings: list[str]
) -> Decoded:
    try:
        events = _EVENTS.decode(text)
        raw_args = [e.args for e in _RAW_ARGS.decode(text)]
        return Decoded(metadata, events, raw_args, len(events), warnings)
    except msgspec.ValidationError:
        text = bytes(text)
    except msgspec.DecodeError as exc:
        if "truncated" not in str(exc):
            _raise_malformed(exc, where)
        text = _repair_truncated(bytes(text), where, warnings)
    return _decode_events_leniently(text, metadata, where, warnings)


def _repair_truncated(text: bytes, where: str, warnings: list[str]) -> bytes:
    """Cut an event list with no closing ``]`` back to its last complete event.

    The Trace Event Format allows an array without its closing bracket, and a
    profiler killed mid-write leaves half an event: both end up here.  We try
    candidate cut points (a ``}`` that could close an event) from the end.
    """
    body = text.rstrip()
    if body.endswith(b","):
        body = body[:-1].rstrip()
    tries = 0
    pos = len(body)
    while tries < 64:
        pos = body.rfind(b"}", 0, pos)
        if pos < 0:
            break
        tries += 1
        candidate = body[: pos + 1] + b"]"
        try:
            _RAW_LIST.decode(candidate)
        except msgspec.DecodeError:
            continue
        lost = len(body) - (pos + 1)
        if lost == 0:
            warnings.append(
                "the event list has no closing ']' (allowed by the Trace Event Format); "
                "every event was read"
            )
        else:
            warnings.append(
                f"file cut short: kept every complete event, dropped the last {lost} bytes "
                "(an unfinished event)"
            )
        return candidate
    if body.lstrip() in (b"[", b""):
        warnings.append("file cut short before its first complete event")
        return b"[]"
    raise TraceError(
        "file cut short and no complete event could be found", where, "capture the trace again"
    )


def _decode_events_leniently(
    text: bytes, metadata: dict[str, Any], where: str, warnings: list[str]
) -> Decoded:
    """Event by event: keep what can be read, count what cannot."""
    try:
        raws = _RAW_LIST.decode(text)
    except msgspec.ValidationError:
        raise TraceError("JSON, but 'traceEvents' is not a list", where, _TRACE_HINT) from None
    except msgspec.DecodeError as exc:
        _raise_malformed(exc, where)
    events: list[Event] = []
    raw_args: list[msgspec.Raw] = []
    skipped = 0
    for raw in raws:
        event, args_raw = _lenient_event(raw)
        if event is None:
            skipped += 1
            continue
        events.append(event)
        raw_args.append(args_raw)
    if raws and skipped == len(raws):
        raise TraceError(
            f"JSON, but not a trace: none of its {len(raws)} entries is an event object",
            where,
            _TRACE_HINT,
        )
    if skipped:
        warnings.append(f"skipped {skipped} entries that are not events (wrong types or shape)")
    return Decoded(metadata, events, raw_args, len(raws), warnings)


def _lenient_event(raw: msgspec.Raw) -> tuple[Event | None, msgspec.Raw]:
    try:
        event = _EVENT.decode(raw)
        return event, _args_raw(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None, _EMPTY
    if not isinstance(value, dict):
        return None, _EMPTY
    args = value.get("args")
    event = Event(
        ph=_as_str(value.get("ph")),
        name=_as_str(value.get("name")),
        cat=_as_str(value.get("cat")),
        pid=_as_id(value.get("pid")),
        tid=_as_id(value.get("tid")),
        ts=_as_float(value.get("ts")),
        dur=_as_float(value.get("dur")),
        id=_as_id(value.get("id")) if value.get("id") is not None else None,
        args=_lenient_args(args) if isinstance(args, dict) else None,
    )
    raw_args = msgspec.Raw(msgspec.json.encode(args)) if isinstance(args, dict) else _EMPTY
    return event, raw_args


def _args_raw(raw: msgspec.Raw) -> msgspec.Raw:
    try:
        return msgspec.json.decode(raw, type=RawArgs).args
    except (msgspec.ValidationError, msgspec.DecodeError):
        return _EMPTY


def _lenient_args(args: dict[str, Any]) -> Args:
    return Args(
        correlation=_as_int(args.get("correlation")),
        external_id=_as_int(args.get("External id")),
        external_id_old=_as_int(args.get("external id")),
        stream=_as_id(args.get("stream")) if args.get("stream") is not None else None,
        device=_as_id(args.get("device")) if args.get("device") is not None else None,
        name=args["name"] if isinstance(args.get("name"), str) else None,
        labels=args["labels"] if isinstance(args.get("labels"), str) else None,
        sort_index=_as_int(args.get("sort_index")),
    )


def _as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _as_id(value: Any) -> int | str:
    as_int = _as_int(value)
    if as_int is not None:
        return as_int
    return "" if value is None else str(value)


_TRACE_HINT = "expected a Chrome trace from torch.profiler (export_chrome_trace / on_trace_ready)"


def _raise_malformed(exc: msgspec.DecodeError, where: str) -> None:
    message = str(exc)
    if "UTF-8" in message or "utf-8" in message:
        raise TraceError(
            "not valid UTF-8 text", where, "convert the file to UTF-8 (e.g. with iconv)"
        ) from None
    detail = message.replace("JSON is malformed: ", "")
    raise TraceError(f"not valid JSON ({detail})", where, _TRACE_HINT) from None


def _raise_not_json(data: bytes, where: str) -> None:
    start = _first_non_space(data)
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError:
        pass
    else:
        raise TraceError(
            f"JSON, but not a trace (the top level is a {type(value).__name__})",
            where,
            _TRACE_HINT,
        )
    raise TraceError(
        f"not JSON (byte {start} starts with {data[start:start + 8]!r})", where, _TRACE_HINT
    )
