"""A listing of instances and their events, cut into chunks of bounded size.

``kernels`` writes each instance's head, then its events, for every instance
(``kernels_json``, ``tui.kernels_text``).  Its text is made a chunk at a time,
each chunk laid out as one array of pieces and joined once, so memory holds one
chunk's text, not the listing's.  A chunk counted in instances is unbounded: one
annotation around a whole run can hold every GPU event of the trace (300,000 on
a 1 GB trace), and its text was made at once, three times its size in memory.
Here a chunk is ``per`` units, a unit being an instance's head or one event, and
an instance whose events do not fit is split across chunks; its head stays
before its first event.

In the listing's order, the head of instance ``i`` is unit ``i + ptr[i]`` and its
event ``j`` is unit ``i + 1 + j``: both increase, so a chunk's heads and events
are each one contiguous range, found by binary search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

PART_UNITS = 1 << 13
"""Heads and events per part of a listing: on the 16-core H200, eight workers made a
1 GB trace's ``kernels --json`` in 46-57 ms with parts of 8,192, 59-71 ms with
16,384 (more parts to go round); one process took the same time with either."""


@dataclass(frozen=True)
class Chunk:
    """Heads ``h0:h1`` and events ``e0:e1`` of a listing, and where each one's
    pieces start in the chunk's array of pieces (``size`` pieces in all)."""

    h0: int
    h1: int
    e0: int
    e1: int
    head_at: np.ndarray
    event_at: np.ndarray
    size: int


class Chunks(Sequence[Chunk]):
    """The chunks of a listing whose instance ``i`` has events ``ptr[i]:ptr[i+1]``,
    each of at most ``per`` units (``head_pieces`` pieces per head,
    ``event_pieces`` per event), in order; each made when asked for, so that the
    parts of a listing can be handed out before any is made (``tui.parallel_write``)."""

    def __init__(self, ptr: np.ndarray, per: int, head_pieces: int, event_pieces: int) -> None:
        self.ptr = np.asarray(ptr, dtype=np.int64)
        k = self.ptr.shape[0] - 1
        n = int(self.ptr[-1]) if k >= 0 else 0
        self.per, self.pieces = max(per, 1), (head_pieces, event_pieces)
        self.owner = np.repeat(np.arange(k, dtype=np.int64), np.diff(self.ptr))
        self.head_unit = np.arange(k, dtype=np.int64) + self.ptr[:-1]
        self.event_unit = self.owner + 1 + np.arange(n, dtype=np.int64)
        self.units = k + n

    def __len__(self) -> int:
        return -(-self.units // self.per)

    @overload
    def __getitem__(self, j: int) -> Chunk: ...
    @overload
    def __getitem__(self, j: slice) -> list[Chunk]: ...

    def __getitem__(self, j: int | slice) -> Chunk | list[Chunk]:
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        if not -len(self) <= j < len(self):
            raise IndexError(j)
        u0 = (j % len(self)) * self.per
        u1, ptr, (hp, ep) = u0 + self.per, self.ptr, self.pieces
        h0, h1 = np.searchsorted(self.head_unit, [u0, u1]).tolist()
        e0, e1 = np.searchsorted(self.event_unit, [u0, u1]).tolist()
        head_at = hp * np.arange(h1 - h0, dtype=np.int64) + ep * (ptr[h0:h1] - e0)
        heads_before = np.maximum(self.owner[e0:e1] - h0 + 1, 0)
        event_at = hp * heads_before + ep * np.arange(e1 - e0, dtype=np.int64)
        return Chunk(h0, h1, e0, e1, head_at, event_at, hp * (h1 - h0) + ep * (e1 - e0))

