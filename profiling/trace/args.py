"""Lazy ``args``: read an event's args from the file only when someone asks.

Kineto's ``args`` (input shapes, grid, occupancy...) are most of a trace's bytes
but are read for a handful of events at a time (the details pane, a finding).
The loader keeps no copy: it remembers where each chunk of whole events lies in
the text and, on demand, re-reads that chunk as raw JSON entries (fast: no
objects are built) and decodes the one entry asked for.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from typing import Any, Protocol

import msgspec

from profiling.errors import TraceError


class SpanSource(Protocol):
    """The trace's JSON text, by byte range (None when the file has changed)."""

    def read(self, lo: int, hi: int) -> bytes | None: ...


class ChunkedArgs:
    """``args`` by entry index, from the text of a loaded trace.

    Safe to share between threads (the TUI's details pane and its analysis
    threads ask at the same time).  ``stale`` becomes True once a chunk could not
    be read because the file changed or vanished since it was loaded: args asked
    for after that come back empty (chunks read before still answer), and a
    viewer can say why rather than show an event without its args.
    """

    def __init__(
        self, text: SpanSource, spans: list[tuple[int, int]], entry_starts: list[int]
    ) -> None:
        # The text is read on first use (a trace reopened from the cache never
        # reads or decompresses its file unless args are asked for).
        self._text = text
        self._spans = spans  # (lo, hi) bytes of each chunk
        self._entry_starts = entry_starts  # index of each chunk's first entry
        self._cache: OrderedDict[int, list[msgspec.Raw]] = OrderedDict()
        self._lock = threading.Lock()
        self.stale = False

    def args(self, entry: int) -> dict[str, Any]:
        return self.args_many([entry])[0]

    def args_many(self, entries: list[int]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for entry in entries:
            k = bisect.bisect_right(self._entry_starts, entry) - 1
            with self._lock:
                raws = self._chunk(k)
            j = entry - self._entry_starts[k]
            try:
                out.append(_args_of(raws[j]) if 0 <= j < len(raws) else {})
            except RecursionError:  # args nested thousands of levels deep
                out.append({})
        return out

    def _chunk(self, k: int) -> list[Any]:
        raws = self._cache.get(k)
        if raws is None:
            # here, not at the top: a reopened trace reads no args unless asked, so its
            # commands never import the decoder
            from profiling.trace.decode import chunk_entries

            lo, hi = self._spans[k]
            try:
                text = self._text.read(lo, hi)
                raws = [] if text is None else chunk_entries(text, 0, hi - lo)
                self.stale = self.stale or text is None
            except (msgspec.DecodeError, ValueError, OSError, TraceError, RecursionError):
                raws = []  # the file changed under us; show no args rather than wrong ones
                self.stale = True
            self._cache[k] = raws
            while len(self._cache) > 4:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(k)
        return raws


class _ArgsOnly(msgspec.Struct):
    args: Any = None


def _args_of(raw: Any) -> dict[str, Any]:
    """The ``args`` of one entry: raw JSON, or a value the lenient reader decoded."""
    if isinstance(raw, msgspec.Raw):
        try:
            raw = {"args": msgspec.json.decode(raw, type=_ArgsOnly).args}
        except msgspec.ValidationError:
            return {}
        except msgspec.DecodeError:  # NaN tokens or bytes that are not UTF-8
            from profiling.trace.lenient import loads_lenient  # rare: see ChunkedArgs._chunk

            lenient = loads_lenient(bytes(raw))
            raw = None if lenient is None else lenient[0]
    value = raw.get("args") if isinstance(raw, dict) else None
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"args": value}
