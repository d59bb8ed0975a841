"""Spent arrays of ``columns.build_trace``, handed out again for the columns it makes next.

WHY: on the VMs the loader runs on, the first touch of a fresh array's pages (a
page fault per 4 KB) costs several times the copy into it: putting 25 MB of int64
in sorted order took 15-20 ms into a fresh array and 4 ms into one already
touched.  ``build_trace`` makes most columns more than once (merged, narrowed, in
sorted order), and each time it has just finished with an array of the same dtype
and length; writing the new one there saves those faults.  The peak stays as it
was: a spent array waits here instead of being freed, and is taken by the next
array made, which would otherwise have been new memory beside it.

Only arrays that own their memory are kept (never a view, nor a column mapped from
a file), and a caller gives back only an array it holds no other reference to.
Steps on threads (``column_threads``) share one: taking and giving hold a lock.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from profiling.trace.model import fits

PIECE = 1 << 16
"""Rows per piece of a piecewise pass (``build_trace``'s scratch over every row is
done in pieces): a piece's scratch comes back from the allocator each time, where
one over every row of a 1 GB trace would be 25 MB of fresh memory."""


class SpareArrays:
    """Spent 1-d arrays by (dtype, length)."""

    def __init__(self) -> None:
        self._free: dict[tuple[str, int], list[np.ndarray]] = {}
        self._lock = threading.Lock()

    def give(self, *arrays: np.ndarray) -> None:
        """Arrays the caller is done with (it keeps no reference to them)."""
        for array in arrays:
            if array.ndim == 1 and array.flags.owndata and array.flags.writeable:
                with self._lock:
                    self._free.setdefault((array.dtype.str, array.shape[0]), []).append(array)

    def empty(self, length: int, dtype: Any) -> np.ndarray:
        """An array to fill: a spent one of that dtype and length if there is one."""
        with self._lock:
            free = self._free.get((np.dtype(dtype).str, length))
            if free:
                return free.pop()
        return np.empty(length, dtype=dtype)

    def reorder(self, values: np.ndarray, order: np.ndarray) -> np.ndarray:
        """``values[order]`` (``order``: valid row indices); ``values`` is spent."""
        # mode "clip": the indices are valid, and "raise" would fill a copy first
        out = np.take(values, order, out=self.empty(order.shape[0], values.dtype), mode="clip")
        self.give(values)
        return out

    def narrow(self, values: np.ndarray, to: type = np.int32, wide: type = np.int64) -> np.ndarray:
        """``model.narrow`` (``to`` when every value fits, else ``wide``); ``values``
        is spent when it is copied."""
        if values.dtype == to:
            return values
        if not fits(values, to):
            return values.astype(wide, copy=False)
        out = self.empty(values.shape[0], to)
        np.copyto(out, values, casting="unsafe")  # every value fits: exact
        self.give(values)
        return out

    def narrow_reorder(
        self, values: np.ndarray, order: np.ndarray, to: type = np.int32, wide: type = np.int64
    ) -> np.ndarray:
        """``model.narrow(values[order], to, wide)``; narrowed before it is put in order
        when every value fits (half the bytes to move), which gives the same array.
        ``values`` is spent."""
        if fits(values, to):
            return self.reorder(self.narrow(values, to, wide), order)
        return self.narrow(self.reorder(values, order), to, wide)
