"""A decoded chunk's columns handed from a worker to the loading process through a
file in ``/dev/shm`` (memory) instead of a pickle through a pipe.

A pickled chunk is copied four times on its way (into the pickle, through the
pipe twice, out of the pickle), and the parent's share of that runs in one
thread, serially: on a 1 GB trace, about 220 MB of columns.  Here the worker
writes each column once into a memory file of its own; the parent maps it (one
madvise to map its pages) and views the column where it lies: ``columns.build_trace``'s
merge is its only copy in the parent, after which the column's memory goes (a file
per column, so it goes column by column).  The parent removes each file as soon
as it is mapped (the mapping lives on until the column is dropped).

Where there is no ``/dev/shm`` (or no room in it) the chunk travels pickled, as
before.  A chunk's file that the parent never maps (a load stopped by an error
in another chunk) is removed by ``discard``.  Files left by a killed loader are
named ``attn-tui-columns-PID-*`` in ``/dev/shm`` (PID: the loading process), and
``sweep`` removes those of processes that are gone.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile

import numpy as np

from profiling.trace.chunk import Chunk
from profiling.trace.reader import populate_pages

COLUMNS = (
    "entry", "ts_ns", "dur_ns", "correlation", "external_id", "stream",
    "name_id", "cat_id", "lane", "ts_state", "dur_state", "ph", "op_input",
)
SHM = "/dev/shm"
_PREFIX = "attn-tui-columns-"


def export(chunk: Chunk, owner: int = 0) -> Chunk:
    """In a worker: move the chunk's columns into memory files, one per column (so
    the parent's memory for each goes as soon as ``build_trace`` has merged it);
    ``chunk.shared`` names them.  The chunk unchanged where that is not possible."""
    if not os.path.isdir(SHM):
        return chunk
    shared: list[tuple[str, str, int]] = []
    try:
        for name in COLUMNS:
            array = np.ascontiguousarray(getattr(chunk, name))
            shared.append((_write(array, owner), array.dtype.str, array.shape[0]))
    except OSError:  # no room: send it pickled
        for path, _dtype, _count in shared:
            _unlink(path)
        return chunk
    chunk.shared = shared
    for name in COLUMNS:
        setattr(chunk, name, _EMPTY)
    return chunk


def _write(array: np.ndarray, owner: int) -> str:
    fd, path = tempfile.mkstemp(prefix=f"{_PREFIX}{owner}-", dir=SHM)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(array.data)
    except OSError:
        _unlink(path)
        raise
    return path


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


_EMPTY = np.zeros(0, dtype=np.int8)


def attach(chunk: Chunk) -> Chunk:
    """In the parent: view the columns of a chunk sent by ``export`` in their files
    (each mapped, then removed).  Raises OSError if a file cannot be read."""
    if chunk.shared is None:
        return chunk
    shared, chunk.shared = chunk.shared, None
    try:
        for name, (path, dtype, count) in zip(COLUMNS, shared, strict=True):
            setattr(chunk, name, _view(path, np.dtype(dtype), count))
    finally:
        for path, _dtype, _count in shared:
            _unlink(path)
    return chunk


def _view(path: str, dtype: np.dtype, count: int) -> np.ndarray:
    if not count:
        return np.zeros(0, dtype=dtype)
    with open(path, "rb") as f:
        text = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    populate_pages(text, 0, len(text))
    return np.frombuffer(text, dtype=dtype, count=count)


def discard(chunk: Chunk) -> None:
    """Remove the files of a chunk that will not be attached."""
    if chunk.shared is not None:
        for path, _dtype, _count in chunk.shared:
            _unlink(path)
        chunk.shared = None


def sweep() -> None:
    """Remove column files left by loading processes that no longer run (killed mid-load)."""
    try:
        names = [n for n in os.listdir(SHM) if n.startswith(_PREFIX)]
    except OSError:
        return
    alive: dict[str, bool] = {}
    for name in names:
        owner = name[len(_PREFIX) :].split("-", 1)[0]
        if owner not in alive:
            alive[owner] = _running(owner)
        if not alive[owner]:
            _unlink(os.path.join(SHM, name))


def _running(pid: str) -> bool:
    if not pid.isdigit() or int(pid) <= 0:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: alive
        return True
    return True
