"""A decoded chunk's columns handed from a worker to the loading process through a
file in ``/dev/shm`` (memory) instead of a pickle through a pipe.

A pickled chunk is copied four times on its way (into the pickle, through the
pipe twice, out of the pickle), and the parent's share of that runs in one
thread, serially: on a 1 GB trace, about 220 MB of columns.  Here the worker
writes its columns once into a memory file; the parent maps it (one madvise to
map its pages) and views the columns where they lie: ``columns.build_trace``'s
concatenation is their only copy in the parent.  The parent removes the file as
soon as it is mapped (the mapping lives on until the columns are dropped).

Where there is no ``/dev/shm`` (or no room in it) the chunk travels pickled, as
before.  A chunk's file that the parent never maps (a load stopped by an error
in another chunk) is removed by ``discard``.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile

import numpy as np

from profiling.trace.chunk import Chunk
from profiling.trace.reader import populate_pages

COLUMNS = (  # widest first, so every column starts aligned to its item size
    "entry", "ts_ns", "dur_ns", "correlation", "external_id", "stream",
    "name_id", "cat_id", "lane", "ts_state", "dur_state", "ph",
)
SHM = "/dev/shm"
_PREFIX = "attn-tui-columns-"


def export(chunk: Chunk) -> Chunk:
    """In a worker: move the chunk's columns into a memory file (``chunk.shared``
    names it and their layout); the chunk unchanged where that is not possible."""
    arrays = [np.ascontiguousarray(getattr(chunk, name)) for name in COLUMNS]
    if not os.path.isdir(SHM) or not sum(a.nbytes for a in arrays):
        return chunk
    try:
        fd, path = tempfile.mkstemp(prefix=_PREFIX, dir=SHM)
    except OSError:
        return chunk
    try:
        with os.fdopen(fd, "wb") as f:
            for array in arrays:
                f.write(array.data)
    except OSError:  # no room: send it pickled
        with contextlib.suppress(OSError):
            os.unlink(path)
        return chunk
    chunk.shared = (path, [(a.dtype.str, a.shape[0]) for a in arrays])
    for name in COLUMNS:
        setattr(chunk, name, _EMPTY)
    return chunk


_EMPTY = np.zeros(0, dtype=np.int8)


def attach(chunk: Chunk) -> Chunk:
    """In the parent: view the columns of a chunk sent by ``export`` in its file
    (mapped, then removed).  Raises OSError if the file cannot be read."""
    if chunk.shared is None:
        return chunk
    path, layout = chunk.shared
    try:
        with open(path, "rb") as f:
            text = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
    populate_pages(text, 0, len(text))
    offset = 0
    for name, (dtype, count) in zip(COLUMNS, layout, strict=True):
        column = np.frombuffer(text, dtype=np.dtype(dtype), count=count, offset=offset)
        setattr(chunk, name, column)
        offset += column.nbytes
    chunk.shared = None
    return chunk


def discard(chunk: Chunk) -> None:
    """Remove the file of a chunk that will not be attached."""
    if chunk.shared is not None:
        with contextlib.suppress(OSError):
            os.unlink(chunk.shared[0])
        chunk.shared = None
