"""Make sense of one event whose fields have the wrong JSON types.

Only used for chunks that failed typed decoding, so speed matters less than
keeping every event that carries a usable phase, name and time.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

_EVENT = msgspec.json.Decoder()


def lenient_event(raw: msgspec.Raw) -> Any:
    """An ``Event`` built field by field, or None if the entry is not an event object."""
    from profiling.trace.decode import Args, Event  # the types live with the fast path

    try:
        return msgspec.json.decode(raw, type=Event)
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    try:
        value = _EVENT.decode(raw)
    except msgspec.DecodeError:
        return None
    if not isinstance(value, dict):
        return None
    args = value.get("args")
    if not isinstance(args, dict):
        args = {}
    return Event(
        ph=_as_str(value.get("ph")),
        name=_as_str(value.get("name")),
        cat=_as_str(value.get("cat")),
        pid=_as_id(value.get("pid")),
        tid=_as_id(value.get("tid")),
        ts=_or(_as_float(value.get("ts")), math.nan),
        dur=_or(_as_float(value.get("dur")), 0.0),
        id=_as_id(value.get("id")) if value.get("id") is not None else None,
        args=Args(
            correlation=_or(_as_int(args.get("correlation")), -1),
            external_id=_or(_as_int(args.get("External id")), -1),
            external_id_old=_or(_as_int(args.get("external id")), -1),
            stream=_as_id(args.get("stream")) if args.get("stream") is not None else -1,
            name=args["name"] if isinstance(args.get("name"), str) else None,
            labels=args["labels"] if isinstance(args.get("labels"), str) else None,
            sort_index=_as_int(args.get("sort_index")),
        ),
    )


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return None
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
        return value if -(2**63) <= value < 2**63 else None
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
