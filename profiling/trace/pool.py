"""Decoding chunks on other cores, safe when several traces load at once.

Workers never inherit the text they decode.  Each job names its text (a
``TextRef``: a file's path, size and mtime; for a gzip trace, a temporary file
in memory holding its decompressed text) plus one chunk's byte range, and the
worker maps that text itself; chunks come back with their columns in a memory
file (``shared_columns``), pickled where there is none.
So two loads running in two threads cannot see each other's text, and no
process is forked from the (possibly threaded: Textual runs several) loading
process: the pool's workers come from a ``forkserver`` (a clean, single-threaded
process started with fork+exec), or are spawned where there is none.  A pool
of each size is created once per process and shared by every load; its workers
are started on first use and live until the process exits.

A file that changed between the parent's mapping and a worker's (its size or
mtime differ) is not decoded against the wrong text: the worker refuses
(``SourceMoved``) and the loader decodes in its own process instead; so does a
load whose pool broke (a worker killed), and the next load starts a new pool.

As with any ``forkserver``/``spawn`` pool, workers import the main module of a
script run by path: such a script must keep its top-level work under
``if __name__ == "__main__":`` (``attn-tui`` and ``python -m`` are fine).
"""

from __future__ import annotations

import contextlib
import mmap
import multiprocessing
import os
import sys
import tempfile
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from profiling.trace import shared_columns
from profiling.trace.decode import Chunk, decode_chunk
from profiling.trace.reader import release_pages


class SourceMoved(Exception):
    """The worker's view of the file is not the parent's (it changed or went away)."""


@dataclass(frozen=True)
class TextRef:
    """Where a worker finds the text, and how to know it is the text the parent read."""

    path: str  # the file mapped: the trace, or a gzip trace's text (``SharedText``)
    size: int
    mtime_ns: int
    where: str  # the trace's path, for messages
    owner: int = field(default_factory=os.getpid)  # the loading process (names its files)


@dataclass(frozen=True)
class Job:
    """One chunk: ``text[lo:hi]``, and what ``decode_chunk`` needs to know about it."""

    lo: int
    hi: int
    last: bool
    open_end: bool
    exact: bool


def decode_job(ref: TextRef, job: Job) -> Chunk:
    """Run in a worker: map the text named by ``ref`` and decode one chunk of it."""
    try:
        with open(ref.path, "rb") as f:
            st = os.fstat(f.fileno())
            if (st.st_size, st.st_mtime_ns) != (ref.size, ref.mtime_ns) or not st.st_size:
                raise SourceMoved(ref.path)
            text = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise SourceMoved(f"{ref.path}: {exc}") from None
    try:
        chunk = decode_chunk(text, job.lo, job.hi, job.last, ref.where, job.open_end, job.exact)
        release_pages(text, job.lo, job.hi)
        return shared_columns.export(chunk, ref.owner)  # columns wait in memory, not pickled
    finally:
        text.close()


class SharedText:
    """A gzip file's decompressed text in a temporary file that workers map (in
    ``/dev/shm``, memory, where it has room; else the temporary folder).  The parent
    creates and removes it: use as a context manager.  Raises OSError when neither
    place has room (the caller then decodes in its own process)."""

    def __init__(self, text: bytes, where: str) -> None:
        self.path = _write_temp(text)
        st = os.stat(self.path)
        self.ref = TextRef(self.path, st.st_size, st.st_mtime_ns, where)

    def __enter__(self) -> SharedText:
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def _write_temp(text: bytes) -> str:
    last: OSError | None = None
    for folder in ("/dev/shm", None):
        if folder is not None and not os.path.isdir(folder):
            continue
        fd, path = tempfile.mkstemp(prefix="attn-tui-text-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(text)
            return path
        except OSError as exc:  # no room there
            last = exc
            with contextlib.suppress(OSError):
                os.unlink(path)
    assert last is not None
    raise last


PRELOAD = ["profiling.trace.pool"]
"""What the forkserver imports before forking workers (``tui.prestart`` starts it
early with the same list)."""

_POOLS: dict[int, ProcessPoolExecutor] = {}
_LOCK = threading.Lock()


def start_method() -> str:
    """``forkserver`` where the platform has it (Linux, macOS), else ``spawn``: never
    ``fork``, which copies a threaded process's locks in whatever state they are."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def start_tracker() -> None:
    """Start multiprocessing's resource tracker (every pool, queue and forkserver
    needs it) with a stderr it can pass on.

    The tracker's start hands ``sys.stderr.fileno()`` to its process.  Inside a
    running Textual app ``sys.stderr`` is the app's print capture, whose
    ``fileno()`` is -1, and the start failed with "bad value(s) in fds_to_keep":
    a trace first parsed after the app had started (a reload after the file
    changed, a load that reached its pool late) could not be opened.  For the
    start only, the process's own stderr stands in."""
    from multiprocessing import resource_tracker

    with _LOCK:
        stream = sys.stderr
        try:
            usable = stream is not None and stream.fileno() >= 0
        except (AttributeError, OSError, ValueError):
            usable = True  # the tracker itself passes no stderr then, and starts
        if not usable and sys.__stderr__ is not None:
            sys.stderr = sys.__stderr__
        try:
            resource_tracker.ensure_running()
        finally:
            sys.stderr = stream


def get_pool(workers: int) -> ProcessPoolExecutor:
    """The process's pool of ``workers`` decoders, created on first use (thread-safe)."""
    with _LOCK:
        pool = _POOLS.get(workers)
    if pool is None:
        start_tracker()
    with _LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            context = multiprocessing.get_context(start_method())
            if context.get_start_method() == "forkserver":
                # the server imports the decoder once; each worker forks with it loaded
                context.set_forkserver_preload(PRELOAD)
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
            _POOLS[workers] = pool
        return pool


def warm(workers: int) -> None:
    """Start the pool's workers now, so that their start (the forkserver importing the
    decoder, then forking) overlaps the parent's scan of the text instead of following it."""
    pool = get_pool(workers)
    try:
        for _ in range(workers):
            pool.submit(int)
    except BrokenProcessPool:  # the decode will start a new one
        discard_pool(pool)


def discard_pool(pool: ProcessPoolExecutor) -> None:
    """Forget a pool that broke (a worker was killed): the next load starts a new one."""
    with _LOCK:
        for size, known in list(_POOLS.items()):
            if known is pool:
                del _POOLS[size]
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pools() -> None:
    """End every pool of this process and wait for its workers: for a process that
    loads one trace and exits (a job's rank indexed in a process of its own)."""
    with _LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def submit_all(pool: ProcessPoolExecutor, ref: TextRef, jobs: list[Job]) -> list[Future[Chunk]]:
    return [pool.submit(decode_job, ref, job) for job in jobs]
