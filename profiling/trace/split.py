"""Find the event list inside the JSON text and cut it into chunks of whole events.

Chunks let a big trace be decoded a piece at a time (bounded memory), on both
cores, and let one event's ``args`` be found again later by re-reading only its
chunk.  A cut is placed between two events (``}`` ``,`` ``{``); if a cut ever
lands inside a string, that chunk fails to decode and the caller falls back to
one chunk, so a heuristic cut can cost time but never correctness.
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from profiling.errors import TraceError
from profiling.trace.lenient import decode_masked, loads_lenient

CHUNK_BYTES = 16 << 20
_BETWEEN_EVENTS = re.compile(rb"\}\s*,\s*\{")
_TRACE_HINT = "expected a Chrome trace from torch.profiler (export_chrome_trace / on_trace_ready)"


@dataclass
class EventsSpan:
    """Where the event list's items lie in the text: ``text[begin:end]`` (no brackets)."""

    begin: int
    end: int
    closed: bool  # the list had its closing ']' (else: cut short, or the open array form)
    cut_short: bool = False  # an object-form file that ends inside its event list
    closed_by_guess: bool = False  # a bare array ending in ']': maybe a value's, if cut short
    quick: bool = False  # found by ``quick_object_span``, not by decoding the whole text
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def find_events(
    text: bytes | mmap.mmap, start: int, where: str, quick: bool = True
) -> EventsSpan:
    """Locate the event list of an object-form or bare-array-form trace.

    ``quick``: for a big object-form file, try ``quick_object_span`` first (reads
    only the text around the list); its span is marked ``quick``, and a caller whose
    decode of that span fails asks again with ``quick=False``, so the whole text's
    verdict (an error, or a span found in a masked copy) is the one that counts.
    """
    first = _first_non_space(text, start)
    opener = bytes(text[first : first + 1])
    end = _end_of_content(text, first)
    if opener == b"[":
        span = _array_span(text, first, end)
    elif opener == b"{":
        found = quick_object_span(text, first, end) if quick else None
        span = found or _object_span(text, first, end, where)
    else:
        _raise_not_a_trace(text, first, where)
        raise AssertionError("unreachable")
    if end < len(text) and bytes(text[end:]).count(b"\x00"):
        span.warnings.append(
            f"ignored {len(text) - end} bytes of zeros and blanks after the JSON "
            "(padding, e.g. from a crash or a preallocated file)"
        )
    return span


_BLANK = b" \t\n\r"
_BLOCK = 1 << 16


def _first_non_space(text: bytes | mmap.mmap, pos: int) -> int:
    while pos < len(text):
        block = bytes(text[pos : pos + _BLOCK])
        rest = block.lstrip(_BLANK)
        if rest:
            return pos + len(block) - len(rest)
        pos += len(block)
    return pos


def _end_of_content(text: bytes | mmap.mmap, first: int) -> int:
    """Where the text ends without trailing blanks and zero bytes (padding)."""
    end = len(text)
    while end > first:
        lo = max(first, end - _BLOCK)
        kept = bytes(text[lo:end]).rstrip(_BLANK + b"\x00")
        if kept:
            return lo + len(kept)
        end = lo
    return end


def _array_span(text: bytes | mmap.mmap, first: int, end: int) -> EventsSpan:
    end = max(end, first + 1)
    closed = end > first + 1 and text[end - 1 : end] == b"]"
    return EventsSpan(first + 1, end - 1 if closed else end, closed, closed_by_guess=closed)


def reopened(span: EventsSpan) -> EventsSpan:
    """A bare array taken as closed by its last ']', now read as cut short instead
    (the ']' closed a list inside its last, unfinished event)."""
    return EventsSpan(span.begin, span.end + 1, False, warnings=list(span.warnings))


def _object_span(text: bytes | mmap.mmap, first: int, end: int, where: str) -> EventsSpan:
    view = memoryview(text)[first:end] if first or end < len(text) else text
    try:
        top = _decode_top(view)
        base, shift = text, 0
    except msgspec.ValidationError:
        raise TraceError("JSON, but not a trace (odd top-level keys)", where, _TRACE_HINT) from None
    except msgspec.DecodeError as exc:
        if ends_early(exc, len(view)):
            return _truncated_object_span(text, first, where)
        # NaN/Infinity tokens or bytes that are not UTF-8 (the chunk decoder reads
        # those leniently): find the structure in a masked copy with the same offsets.
        try:
            top, masked = decode_masked(_decode_top, view, exc)
        except msgspec.ValidationError:
            raise TraceError(
                "JSON, but not a trace (odd top-level keys)", where, _TRACE_HINT
            ) from None
        except msgspec.DecodeError as again:
            if ends_early(again, len(view)):
                return _truncated_object_span(text, first, where)
            raise_malformed(again, where)  # what is wrong besides NaN and bad bytes
            raise
        base, shift = masked, first
    if "traceEvents" not in top:
        keys = ", ".join(sorted(top)[:5]) or "none"
        raise TraceError(
            f"JSON, but not a trace: no 'traceEvents' list (top-level keys: {keys})",
            where,
            _TRACE_HINT,
        )
    events = top.pop("traceEvents")
    span = EventsSpan(0, 0, True)
    for key, raw in top.items():
        at = offset_in(raw, base) + shift
        value = _decode_value(bytes(text[at : at + len(raw)]))
        if value is _UNREADABLE:
            span.warnings.append(f"top-level key {key!r} could not be decoded and was ignored")
        else:
            span.metadata[key] = value
    begin = offset_in(events, base) + shift
    body = bytes(memoryview(events)[:1])
    if body != b"[":
        raise TraceError("JSON, but 'traceEvents' is not a list", where, _TRACE_HINT)
    span.begin, span.end = begin + 1, begin + len(events) - 1
    _warn_duplicate_events_key(text, first, span)
    return span


_UNREADABLE = object()
_BYTE_AT = re.compile(r"\(byte (\d+)\)")


def ends_early(exc: msgspec.DecodeError, length: int) -> bool:
    """Whether a decode error says the text stopped before its JSON did: msgspec says
    "truncated", or it wanted more (``expected ',' or '}'``) at the very end."""
    message = str(exc)
    if "truncated" in message:
        return True
    at = _BYTE_AT.search(message)
    return at is not None and int(at.group(1)) >= length


def _decode_top(text: Any) -> dict[str, msgspec.Raw]:
    return msgspec.json.decode(text, type=dict[str, msgspec.Raw])


def _decode_value(raw: bytes) -> Any:
    """A top-level value, strict JSON first, then as Python's json would read it."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        lenient = loads_lenient(raw)
        return _UNREADABLE if lenient is None else lenient[0]


def _warn_duplicate_events_key(text: bytes | mmap.mmap, first: int, span: EventsSpan) -> None:
    """JSON readers keep the last of duplicate keys; say so when 'traceEvents' repeats.

    Only the text outside the chosen list is searched (the top-level keys around it).
    """
    key = b'"traceEvents"'
    chosen = text.rfind(key, first, span.begin)
    if text.find(key, first, max(chosen, first)) >= 0 or text.find(key, span.end) >= 0:
        span.warnings.append(
            "the file has more than one 'traceEvents' list; used the last, as JSON readers do"
        )


QUICK_MIN_BYTES = 8 << 20
"""Below this, decoding the whole top level costs under about 10 ms: not worth a shortcut."""

_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_EDGE_BYTES = 1 << 20
_TAIL_TRIES = 64


def quick_object_span(text: bytes | mmap.mmap, first: int, end: int) -> EventsSpan | None:
    """The event list of an object-form trace found by reading only its edges, or
    None when that cannot be sure (the caller then decodes the whole top level).

    Decoding the whole top level to find one list parses every event once more,
    serially, before the parallel decode starts (about 1.4 s of a 1 GB trace's
    first open on a 16-core machine).  Instead: the keys before ``"traceEvents"``
    must decode as an object of their own (so the key is at the top level); the
    list's closing ``]`` is a ``]`` near the end after which the text decodes as
    the rest of that object, and before which the last events decode as a list
    of their own.  The events in between are checked by their chunks' decoders.
    """
    if end - first < QUICK_MIN_BYTES:
        return None
    head_text = bytes(text[first : min(end, first + _EDGE_BYTES)])
    key = _EVENTS_KEY.search(head_text)
    if key is None:
        return None
    keys_before = head_text[1 : key.start()].rstrip()
    if keys_before and keys_before[-1:] != b",":
        return None
    head = _object_part(b"{" + keys_before[:-1] + b"}")
    begin = first + key.end()
    tail_lo = max(begin, end - _EDGE_BYTES)
    tail_text = bytes(text[tail_lo:end])
    cut = _BETWEEN_EVENTS.search(tail_text)
    if head is None or "traceEvents" in head or cut is None:
        return None
    close = len(tail_text)
    for _ in range(_TAIL_TRIES):
        close = tail_text.rfind(b"]", cut.end(), close)
        if close < 0:
            return None
        rest = tail_text[close + 1 :].strip()
        after = {} if rest == b"}" else _object_part(b"{" + rest[1:]) if rest[:1] == b"," else None
        if after is None or "traceEvents" in after or not _decodes_as_list(
            b"[" + tail_text[cut.end() - 1 : close + 1]
        ):
            continue
        span = EventsSpan(begin, tail_lo + close, True, quick=True)
        for name, raw in {**head, **after}.items():
            value = _decode_value(bytes(raw))
            if value is _UNREADABLE:
                return None
            span.metadata[name] = value
        _warn_duplicate_events_key(text, first, span)
        return span
    return None


def _object_part(doc: bytes) -> dict[str, msgspec.Raw] | None:
    try:
        return _decode_top(doc)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _decodes_as_list(doc: bytes) -> bool:
    """Whether ``doc`` is a list of events (objects with a string ``ph``): a list of
    other objects near the end (a key's value after the event list) is not."""
    try:
        _PHASED_LIST.decode(doc)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


class _Phased(msgspec.Struct):
    ph: str


_PHASED_LIST = msgspec.json.Decoder(list[_Phased])


def _truncated_object_span(text: bytes | mmap.mmap, first: int, where: str) -> EventsSpan:
    """An object-form file cut short: metadata before ``traceEvents``, then its items."""
    key = text.find(b'"traceEvents"', first)
    if key < 0:
        raise TraceError(
            "file ends early, before any 'traceEvents' list", where, "capture the trace again"
        )
    bracket = text.find(b"[", key)
    if bracket < 0:
        raise TraceError("file ends early, inside 'traceEvents'", where, "capture it again")
    span = EventsSpan(bracket + 1, len(text), False, cut_short=True)
    head = bytes(text[first:key]).rstrip().rstrip(b",")
    if head.strip() != b"{":
        value = _decode_value(head + b"}")
        if isinstance(value, dict):
            span.metadata = value
        else:
            span.warnings.append("the top-level keys before 'traceEvents' could not be read")
    return span


def offset_in(raw: msgspec.Raw | bytes, text: bytes | mmap.mmap) -> int:
    """Byte offset of a zero-copy view (a msgspec.Raw) within the buffer it views."""
    inner = np.frombuffer(raw, dtype=np.uint8)
    outer = np.frombuffer(text, dtype=np.uint8)
    offset = inner.ctypes.data - outer.ctypes.data
    if not 0 <= offset <= len(text):
        raise ValueError("view is not inside the buffer")
    return int(offset)


def chunk_bounds(text: bytes | mmap.mmap, span: EventsSpan, size: int = CHUNK_BYTES) -> list[int]:
    """Cut points ``b0 < b1 < ... < bn`` with each ``text[bi:bi+1]`` a chunk of whole events.

    The first chunk starts at ``span.begin``, the last ends at ``span.end``; every
    inner cut is the position of a ``{`` that starts an event.
    """
    bounds = [span.begin]
    target = span.begin + size
    while target < span.end - size // 4:
        match = _BETWEEN_EVENTS.search(text, target, min(span.end, target + size))
        if match is None:
            break
        bounds.append(match.end() - 1)
        target = match.end() - 1 + size
    bounds.append(span.end)
    return bounds


def raise_malformed(exc: msgspec.DecodeError, where: str) -> None:
    message = str(exc)
    if "UTF-8" in message or "utf-8" in message:
        raise TraceError(
            "not valid UTF-8 text", where, "convert the file to UTF-8 (e.g. with iconv)"
        ) from None
    detail = message.replace("JSON is malformed: ", "")
    raise TraceError(f"not valid JSON ({detail})", where, _TRACE_HINT) from None


def _raise_not_a_trace(text: bytes | mmap.mmap, first: int, where: str) -> None:
    try:
        value = msgspec.json.decode(memoryview(text)[first:])
    except msgspec.DecodeError:
        snippet = bytes(text[first : first + 8])
        what = f"not JSON (byte {first} starts {snippet!r})"
        raise TraceError(what, where, _TRACE_HINT) from None
    raise TraceError(
        f"JSON, but not a trace (the top level is a {type(value).__name__})", where, _TRACE_HINT
    )
