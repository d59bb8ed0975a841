"""One chunk of the event list -> its events, then its columns (``chunk``).

Decoding is typed (msgspec Structs with only the fields the model needs) because
that is several times faster and leaner than decoding into dicts; ``args`` other
than the few id fields are not decoded at all (``ArgsReader`` reads them lazily).
Times are decoded as numbers where that is exact, else as their text (``times``).
A chunk whose events do not fit the types (a string ``pid``, a float ``External
id``) is decoded event by event instead, keeping every event that can be made
sense of; a chunk cut short is cut back to its last complete event.
"""

from __future__ import annotations

import gc
import mmap
import re
from collections.abc import Iterator
from contextlib import contextmanager

import msgspec
import numpy as np

from profiling.errors import TraceError
from profiling.trace.chunk import WRONG_TYPES, Chunk, chunk_columns, exact_chunk_columns
from profiling.trace.events import AnyEvent, Event, TextEvent, TsTextEvent
from profiling.trace.lenient import (
    decode_masked,
    event_from_value,
    lenient_event,
    loads_lenient,
    mask_for_structure,
)
from profiling.trace.reader import populate_pages
from profiling.trace.split import ends_early, raise_malformed

__all__ = ["Chunk", "chunk_entries", "decode_chunk", "split_entries"]


# Each level reads more of the times as text (see events.py); a chunk moves up a
# level when its numbers cannot give exact nanoseconds.
_LEVELS: tuple[msgspec.json.Decoder, ...] = (
    msgspec.json.Decoder(list[Event]),
    msgspec.json.Decoder(list[TsTextEvent]),
    msgspec.json.Decoder(list[TextEvent]),
)
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_BYTE = re.compile(r"\(byte (\d+)\)")


def decode_chunk(
    text: bytes | mmap.mmap,
    lo: int,
    hi: int,
    last: bool,
    where: str,
    open_end: bool = False,
    exact: bool = False,
) -> Chunk:
    """Decode the events in ``text[lo:hi]`` (whole events separated by commas), with
    the cyclic garbage collector paused: see ``_decode_chunk`` and ``gc_paused``."""
    with gc_paused():
        return _decode_chunk(text, lo, hi, last, where, open_end, exact)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic collector while one chunk is decoded.

    Decoding allocates hundreds of thousands of objects (one Struct per event),
    and every 700 of them start a collection (some of which walk every tracked
    object of the process, the TUI's included): about half of msgspec's decode
    time, spent finding nothing, since decoded events hold no cycles.  Reference
    counting still frees everything; the collector is switched back on after the
    chunk (if it was on: a caller that turned it off keeps it off).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _decode_chunk(
    text: bytes | mmap.mmap,
    lo: int,
    hi: int,
    last: bool,
    where: str,
    open_end: bool,
    exact: bool,
) -> Chunk:
    """Decode the events in ``text[lo:hi]`` (whole events separated by commas).

    ``open_end``: this is the last chunk of a list with no closing ``]`` (cut
    short, or the open array form), so an unfinished last event is cut off.
    ``exact``: read times from their text from the start (the loader saw
    epoch-sized decimals); otherwise numbers are tried first and the text only
    when a number cannot give exact nanoseconds.
    """
    stop = _content_end(text, lo, hi)
    warnings: list[str] = []
    end = lo + stop
    if stop and text[lo + stop - 1 : lo + stop] == b",":  # cut after the comma between events
        stop -= 1
    if _NON_BLANK.search(text, lo, lo + stop) is None:
        return _no_events(lo)
    populate_pages(text, lo, lo + stop)
    doc = b"".join((b"[", memoryview(text)[lo : lo + stop], b"]"))  # the one copy of the text
    level = 1 if exact else 0
    events = _typed(doc, level)
    if events is None and last and open_end:
        unfinished = _structure_error(doc)
        if unfinished is not None:  # cut back to the last complete event
            doc, end = _repair_cut(doc[1:-1], lo, where, warnings, unfinished)
            events = _typed(doc, level)
    while events is not None:
        chunk = chunk_columns(events, end, warnings)
        if chunk is not None:
            return chunk
        level += 1  # numbers too large to be exact: read (more of) their text
        events = _typed(doc, level)
    # Slow path: fields of the wrong types, or text only a lenient reader accepts.
    lenient, skipped = _decode_leniently(doc, lo, where, warnings)
    if skipped:
        warnings.append(f"skipped {skipped} entries that are not events (wrong types or shape)")
    chunk = exact_chunk_columns(lenient, end, warnings, placeholders=skipped > 0)
    chunk.skipped = skipped
    return chunk


def _typed(doc: bytes, level: int) -> list[AnyEvent] | None:
    """The events of ``doc`` decoded by type, or None where they do not fit the types."""
    try:
        events: list[AnyEvent] = _LEVELS[level].decode(doc)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return events


def _no_events(end: int) -> Chunk:
    return exact_chunk_columns([], end, [])


def _content_end(text: bytes | mmap.mmap, lo: int, hi: int) -> int:
    """Length of ``text[lo:hi]`` without trailing whitespace (no copy of the bytes)."""
    stop = hi
    while stop > lo and text[stop - 1] in b" \t\r\n\x00":
        stop -= 1
    return stop - lo


_NON_BLANK = re.compile(rb"\S")  # \s is what bytes.strip() strips


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
    if not ends_early(exc, len(body) + 1):  # damaged before its end: say where
        # (the probe document is "[" + body + "]": wanting more at its "]" is a cut)
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
) -> tuple[list[TextEvent], int]:
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
    events: list[TextEvent] = []
    skipped = coerced = relaxed = 0
    for entry in entries:
        event = None
        try:
            event = _TEXT_EVENT.decode(entry)
        except msgspec.ValidationError:
            event = lenient_event(entry)
            coerced += event is not None
        except msgspec.DecodeError:  # bad bytes or NaN inside this entry
            lenient = loads_lenient(bytes(entry), exact_floats=True)
            if lenient is not None:
                event = event_from_value(lenient[0])
                repairs.update(dict.fromkeys(lenient[1]))
                relaxed += event is not None
        if event is None:
            skipped += 1
            events.append(TextEvent(ph="\x00"))  # placeholder, dropped by _columns
        else:
            events.append(event)
    if repairs:
        warnings.append(
            f"read {relaxed} events with a lenient JSON reader: the text holds "
            + " and ".join(repairs)
        )
    if coerced:
        warnings.append(WRONG_TYPES.format(coerced))
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


_TEXT_EVENT = msgspec.json.Decoder(TextEvent)


def _raise_at(exc: msgspec.DecodeError, offset: int, where: str) -> None:
    """Re-raise a decode error with the byte position in the file, not in the chunk."""
    message = _BYTE.sub(lambda m: f"(byte {int(m.group(1)) + offset})", str(exc))
    raise_malformed(msgspec.DecodeError(message), where)
