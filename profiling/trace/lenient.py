"""Make sense of what typed decoding rejects: events with fields of the wrong JSON
types, and text that is not strict JSON (``NaN``/``Infinity`` tokens, bytes that
are not UTF-8, ``\\uXXXX`` escapes of half a UTF-16 surrogate pair).

The last come from traces re-saved by Python: ``json.dump`` writes a name read
with ``errors="surrogateescape"`` (Kineto's raw bytes that are not UTF-8) as
``\\udcff``.  Python's ``json`` reads that back; msgspec rejects it, and a lone
surrogate in a name could not be printed or stored anyway.  Each such escape
becomes ``\\ufffd`` (same length), as a byte that is not UTF-8 becomes U+FFFD.

Only used for chunks that failed typed decoding, so speed matters less than
keeping every event that carries a usable phase, name and time.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar

import msgspec

from profiling.trace.events import NO_TEXT, ZERO_TEXT, Args, TextEvent
from profiling.trace.op_inputs import NO_RAW

# Floats as Decimal: an event's times keep every digit of their text (see times.py).
_EVENT = msgspec.json.Decoder(float_hook=Decimal)
T = TypeVar("T")
_NONFINITE = re.compile(rb"-?Infinity|NaN")
_MASKS = {b"NaN": b"0.0", b"Infinity": b"0.000000", b"-Infinity": b"-0.000000"}
_SURROGATE_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A ``\\uXXXX`` escape of a UTF-16 surrogate (its last 6 bytes), not preceded by an
odd run of backslashes (``\\\\ud800`` is a backslash, then the letters ``ud800``)."""
_REPLACEMENT = b"\\ufffd"
LONE_SURROGATES = "escapes of half a UTF-16 surrogate pair (shown as \ufffd)"


def lenient_event(raw: msgspec.Raw) -> TextEvent | None:
    """An event built field by field (for an entry that typed decoding rejected),
    or None if the entry is not an event object."""
    try:
        value = _EVENT.decode(raw)
    except msgspec.DecodeError:
        return None
    return event_from_value(value)


def event_from_value(value: Any) -> TextEvent | None:
    """An event from an already decoded JSON value, or None if it is not an object.

    Times become text again (an int's digits, a Decimal's, a string's own) so the
    one exact converter reads them; a value that is no number keeps the default.
    """
    if not isinstance(value, dict):
        return None
    args = value.get("args")
    if not isinstance(args, dict):
        args = {}
    return TextEvent(
        ph=_as_str(value.get("ph")),
        name=_as_str(value.get("name")),
        cat=_as_str(value.get("cat")),
        pid=_as_id(value.get("pid")),
        tid=_as_id(value.get("tid")),
        ts=_time_text(value.get("ts"), NO_TEXT),
        dur=_time_text(value.get("dur"), ZERO_TEXT),
        id=_as_id(value.get("id")) if value.get("id") is not None else None,
        args=Args(
            correlation=_or(_as_int(args.get("correlation")), -1),
            external_id=_or(_as_int(args.get("External id")), -1),
            external_id_old=_or(_as_int(args.get("external id")), -1),
            stream=_as_id(args.get("stream")) if args.get("stream") is not None else -1,
            name=args["name"] if isinstance(args.get("name"), str) else None,
            labels=args["labels"] if isinstance(args.get("labels"), str) else None,
            sort_index=_as_int(args.get("sort_index")),
            input_type=_raw(args.get("Input type")),
            concrete_inputs=_raw(args.get("Concrete Inputs")),
        ),
    )


def _raw(value: Any) -> msgspec.Raw:
    """A decoded args value as the JSON text the typed decoder would have kept
    (``NO_RAW`` when absent or not encodable: the op's args are then read later)."""
    if value is None:
        return NO_RAW
    try:
        return msgspec.Raw(msgspec.json.encode(value))
    except (TypeError, ValueError, OverflowError):
        return NO_RAW


# ---- text that is JSON only to a lenient reader ----


def loads_lenient(doc: bytes, exact_floats: bool = False) -> tuple[Any, list[str]] | None:
    """Decode ``doc`` with Python's JSON rules, which accept ``NaN``, ``Infinity`` and
    ``-Infinity`` (as Python's ``json.dumps`` writes them), after replacing bytes
    that are not UTF-8 with U+FFFD.  Returns (value, what was repaired), or None if
    even that does not make it JSON.  Deeply nested text raises RecursionError.
    ``exact_floats``: decimals become ``Decimal`` (every digit kept), not floats.
    """
    repairs: list[str] = []
    lone = lone_surrogates(doc)
    if lone:
        doc = _mask_at(doc, lone)
        repairs.append(LONE_SURROGATES)
    try:
        text = doc.decode("utf-8")
    except UnicodeDecodeError:
        text = doc.decode("utf-8", errors="replace")
        repairs.append("bytes that are not UTF-8 (shown as \ufffd)")
    nonfinite = _NONFINITE.search(doc) is not None
    try:
        value = json.loads(text, parse_float=Decimal) if exact_floats else json.loads(text)
    except ValueError:
        return None
    if nonfinite:
        repairs.append("NaN/Infinity tokens (not JSON; read as Python's json reads them)")
    return value, repairs


def mask_for_structure(text: Any) -> bytes:
    """A copy of ``text`` of the same length that strict JSON decoders accept, when
    the only trouble is ``NaN``/``Infinity`` tokens, bytes that are not UTF-8 or
    lone surrogate escapes.

    Good for finding *where* things are (offsets are unchanged), never for values:
    tokens become zeros (inside strings too: those stay strings) and bad bytes '?'.
    """
    return _mask_surrogates(_mask_tokens(_mask_utf8(text)))


def decode_masked(decode: Callable[[Any], T], text: Any, error: Exception) -> tuple[T, Any]:
    """``decode`` of ``text``, which just failed with ``error``, retried on a masked
    copy (see ``mask_for_structure``) for as long as the decoder complains about
    something a mask fixes; returns the value and the text it was decoded from.
    Only the kinds of trouble met are masked (a bad byte costs no token pass)."""
    done: set[str] = set()
    while True:
        message = str(error)
        kind = "utf8" if "UTF-8" in message else "token" if "invalid character" in message else ""
        lone: list[int] = []
        if (not kind or kind in done) and "surrogate" not in done:
            lone = lone_surrogates(text)  # msgspec names them in several ways ("truncated")
            kind = "surrogate" if lone else kind
        if not kind or kind in done:
            raise error
        done.add(kind)
        text = _mask_utf8(text) if kind == "utf8" else _mask_tokens(text) if kind == "token" \
            else _mask_at(text, lone)
        try:
            return decode(text), text
        except msgspec.DecodeError as exc:
            error = exc


def lone_surrogates(text: Any) -> list[int]:
    """Where each ``\\uXXXX`` escape of half a surrogate pair starts in ``text``:
    a high half not followed at once by a low one, or a low half on its own."""
    found = [(m.end() - 6, m.group()[-3:-2].lower() in b"89ab")
             for m in _SURROGATE_ESCAPE.finditer(bytes(text))]
    lone, i = [], 0
    while i < len(found):
        at, high = found[i]
        if high and i + 1 < len(found) and found[i + 1][0] == at + 6 and not found[i + 1][1]:
            i += 2  # a pair: one character
            continue
        lone.append(at)
        i += 1
    return lone


def _mask_surrogates(text: Any) -> bytes:
    """Each lone surrogate escape replaced by ``\\ufffd`` (same length)."""
    return _mask_at(text, lone_surrogates(text))


def _mask_at(text: Any, at: list[int]) -> bytes:
    """``text`` with the escapes starting at ``at`` (``lone_surrogates``) replaced."""
    if not at:
        return bytes(text)
    out = bytearray(text)
    for pos in at:
        out[pos : pos + 6] = _REPLACEMENT
    return bytes(out)


def _mask_tokens(text: Any) -> bytes:
    return _NONFINITE.sub(lambda m: _MASKS[m.group()], bytes(text))


def _mask_utf8(text: Any, block: int = 16 << 20) -> bytes:
    """Each byte that is not part of valid UTF-8 replaced by '?' (same length)."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    out: list[bytes] = []
    n = len(text)
    for pos in range(0, n, block):
        piece = decoder.decode(bytes(text[pos : pos + block]), final=pos + block >= n)
        out.append(piece.encode("utf-8", errors="replace"))
    if n == 0:
        return b""
    return b"".join(out)


# ---- field coercion ----


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _time_text(value: Any, absent: msgspec.Raw) -> msgspec.Raw:
    """The text of a time value for ``times.text_times_ns``; ``absent`` if no number.

    Booleans, null, lists and objects are no time (as before: a ``true`` duration
    is 0, a ``true`` ts is no usable ts).  A string is read as what it spells.
    """
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return absent
    # An int's digits, a Decimal's (exponent form goes the slow way), a float's
    # repr (only nan/inf reach here), a string's own text.
    text = str(value).strip()
    try:
        return msgspec.Raw(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate in a string: no number anyway
        return absent


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, Decimal):  # (range first: int() of 1e999999 is a huge number)
        if value.is_finite() and abs(value) < 2**63 and value == value.to_integral_value():
            return int(value)
        return None
    if isinstance(value, str) and value.isascii():
        try:
            number = int(value.strip())
        except ValueError:  # not a number, or too many digits to be one
            return None
        return number if -(2**63) <= number < 2**63 else None
    return None


def _as_id(value: Any) -> int | str:
    as_int = _as_int(value)
    if as_int is not None:
        return as_int
    return "" if value is None else str(value)
