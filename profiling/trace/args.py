"""Lazy ``args``: read an event's args from the file only when someone asks.

Kineto's ``args`` (input shapes, grid, occupancy...) are most of a trace's bytes
but are read for a handful of events at a time (the details pane, a finding).
The loader keeps no copy: it remembers where each chunk of whole events lies in
the text and, on demand, re-reads that chunk as raw JSON entries (fast: no
objects are built) and decodes the one entry asked for.
"""

from __future__ import annotations

import bisect
import mmap
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec

from profiling.errors import TraceError
from profiling.trace.decode import chunk_entries


class ChunkedArgs:
    """``args`` by entry index, from the text of a loaded trace."""

    def __init__(
        self,
        text: bytes | mmap.mmap | Callable[[], bytes | mmap.mmap],
        spans: list[tuple[int, int]],
        entry_starts: list[int],
    ) -> None:
        # A callable opens the text on first use (a trace reopened from the cache
        # never maps or decompresses its file unless args are asked for).
        self._text = text
        self._spans = spans  # (lo, hi) bytes of each chunk
        self._entry_starts = entry_starts  # index of each chunk's first entry
        self._cache: OrderedDict[int, list[msgspec.Raw]] = OrderedDict()

    def args(self, entry: int) -> dict[str, Any]:
        return self.args_many([entry])[0]

    def args_many(self, entries: list[int]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for entry in entries:
            k = bisect.bisect_right(self._entry_starts, entry) - 1
            raws = self._chunk(k)
            j = entry - self._entry_starts[k]
            out.append(_args_of(raws[j]) if 0 <= j < len(raws) else {})
        return out

    def _chunk(self, k: int) -> list[msgspec.Raw]:
        raws = self._cache.get(k)
        if raws is None:
            lo, hi = self._spans[k]
            try:
                if callable(self._text):
                    self._text = self._text()
                raws = chunk_entries(self._text, lo, hi)
            except (msgspec.DecodeError, ValueError, OSError, TraceError):
                raws = []  # the file changed under us; show no args rather than wrong ones
            self._cache[k] = raws
            while len(self._cache) > 4:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(k)
        return raws


class _ArgsOnly(msgspec.Struct):
    args: Any = None


def _args_of(raw: msgspec.Raw) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(raw, type=_ArgsOnly).args
    except (msgspec.ValidationError, msgspec.DecodeError):
        return {}
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"args": value}
