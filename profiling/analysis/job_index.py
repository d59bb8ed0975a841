"""A job's big ranks parsed in processes of their own, before the job is loaded.

A 1 GB trace's first load is mostly work in the loading process itself (finding the
event list, merging the decoded chunks, building the columns): more decoding
processes buy under 2x (bench/README.md).  Eight such ranks loaded on eight threads
of one process would queue for that process.  So the ranks that have no current
index yet, and are big enough to be worth a process, are each parsed by a process
of their own first, which writes the rank's index (``profiling.trace.cache``) and
exits; the job then loads every rank by mapping its index (a reopen: well under a
second a GB).  The cores are shared out: N ranks on C cores each decode on C / N.

Without an index (``--no-cache``, or ``ATTN_TUI_JOB_THREADS=1`` for comparing the
two in ``bench``) the ranks load on threads of the loading process, and the big ones
are parsed there one at a time (``one_parse_at_a_time``): eight 1 GB parses at once
in one process did not finish in minutes on the 16-core machine.  The likely cause
(not reproduced at that size): each parse's loading thread and the decoding pool's
result thread need the GIL back after every pipe read, and with eight loads holding
it in turn (a 1 GB top-level scan, the column build) each such read waits out the
others' switch intervals, a convoy; here three busy threads made one 60 MB load 8x
slower (4.3 s against 0.55 s; 1.6 s with a 0.2 ms switch interval).  One parse at
a time decodes on every core and has no such wait.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import msgspec

from profiling.trace.cache import MIN_CACHE_BYTES, cache_dirs, cache_key
from profiling.trace.cache_store import cache_root
from profiling.trace.loader import PARALLEL_MIN_BYTES, default_jobs, load_trace
from profiling.trace.pool import shutdown_pools, start_method, start_tracker

OWN_PROCESS_MIN_BYTES = PARALLEL_MIN_BYTES
"""Ranks from this size on (the file's) are parsed in a process of their own."""


THREADS_ENV = "ATTN_TUI_JOB_THREADS"
"""Set to 1: no processes of their own, every rank loads on a thread (for comparing)."""


class _Key(msgspec.Struct):
    key: str


def has_index(path: str) -> bool:
    """Whether ``path`` has a current index (its key matches the file as it is now)."""
    try:
        key = cache_key(Path(path))
        folders = cache_dirs(Path(path))
    except OSError:
        return False
    for folder in folders:
        try:
            found = msgspec.json.decode((folder / "meta.json").read_bytes(), type=_Key)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            continue
        if found.key == key:
            return True
    return False


def to_index(paths: Sequence[str], min_bytes: int = OWN_PROCESS_MIN_BYTES) -> list[str]:
    """The ranks worth parsing in their own process: big, and with no current index."""
    out = []
    for p in paths:
        try:
            size = os.stat(p).st_size
        except OSError:
            continue  # the load says what is wrong
        if size >= max(min_bytes, MIN_CACHE_BYTES) and not has_index(p):
            out.append(p)
    return out


def _index_writable() -> bool:
    """Whether an index can be written at all (else the processes would parse the ranks
    for nothing, and the load parse them again)."""
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(root, os.W_OK)


def lower_priority(niceness: int) -> None:
    """Make this process ``niceness`` steps nicer (its decoding pool, started after,
    inherits it); nothing where the platform has no ``os.nice`` or refuses."""
    if niceness <= 0:
        return
    try:
        os.nice(niceness)
    except (AttributeError, OSError):
        pass


def _index_one(path: str, workers: int, niceness: int = 0) -> None:
    """In a child process: parse ``path``, which writes its index; keep nothing.  The
    child's own decoding pool is shut down before it returns, so the process ends as
    soon as the index is written."""
    lower_priority(niceness)
    try:
        load_trace(path, workers=workers)
    finally:
        shutdown_pools()


WORKERS_ENV = "ATTN_TUI_JOB_RANK_WORKERS"
"""Decoding processes per rank parsed in a process of its own (default: cores / ranks)."""


def rank_workers(cores: int, ranks: int) -> int:
    """Decoders each rank's process starts: ``ATTN_TUI_JOB_RANK_WORKERS`` when set to a
    whole number (for measuring other shares on a big machine: ``bench_job.py
    --rank-workers``), else the cores shared out, at least one."""
    value = os.environ.get(WORKERS_ENV, "")
    if value.strip().isdigit() and int(value) > 0:
        return int(value)
    return max(1, cores // max(ranks, 1))


_PARSE_LOCK = threading.Lock()


def one_parse_at_a_time(load: Callable[[str], Any], use_cache: bool = True,
                        min_bytes: int = OWN_PROCESS_MIN_BYTES) -> Callable[[str], Any]:
    """``load`` for ranks loaded on threads of one process: a rank big enough to be
    decoded on the process pool that has no index to map (or ``use_cache`` is off)
    waits for any other such parse to end first (see the module's docstring); ranks
    with an index, and small ranks, load at once."""

    def guarded(path: str) -> Any:
        try:
            big = os.stat(path).st_size >= min_bytes
        except OSError:
            big = False  # the load says what is wrong
        if big and (not use_cache or not has_index(path)):
            with _PARSE_LOCK:
                return load(path)
        return load(path)

    return guarded


def index_in_processes(
    paths: Sequence[str],
    report: Callable[[int, int], None] | None = None,
    min_bytes: int = OWN_PROCESS_MIN_BYTES,
    *,
    niceness: int = 0,
    min_ranks: int = 2,
) -> int:
    """Write the index of every rank of ``to_index(paths)``, each in its own process,
    at most one process a core at once; returns how many.  Failures are left for the
    load to report (it reads the file again and says what is wrong, as for any trace).
    ``report(done, n)`` after each rank.  ``niceness``: the processes run that much
    nicer (``tui.job_progressive`` parses a job's other ranks beside its first one,
    on the cores the first leaves idle).  Fewer than ``min_ranks`` to parse: none is
    (one rank alone decodes on every core in its own load anyway).

    Each rank is a plain ``Process`` that exits when its index is written, waited on
    by its sentinel.  Not a ``ProcessPoolExecutor``: its workers stay alive for more
    work and end only on a sentinel sent through a shared queue, and with eight 1 GB
    ranks (each worker running a decoding pool of its own) that shutdown was seen to
    hang for minutes on the 16-core machine after every index had been written."""
    if os.environ.get(THREADS_ENV) == "1":
        return 0
    todo = to_index(paths, min_bytes)
    if len(todo) < max(min_ranks, 1) or not _index_writable():
        return 0  # one rank alone: its load decodes on every core anyway
    cores = default_jobs()
    workers = rank_workers(cores, len(todo))
    context = multiprocessing.get_context(start_method())
    start_tracker()  # inside a running app, too (pool.start_tracker)
    waiting = list(todo)
    running: dict[Any, BaseProcess] = {}
    done = 0
    while waiting or running:
        while waiting and len(running) < min(len(todo), cores):
            process: BaseProcess = context.Process(  # type: ignore[attr-defined]
                target=_index_one, args=(waiting.pop(0), workers, niceness), name="attn-tui index"
            )
            process.start()
            running[process.sentinel] = process
        for sentinel in wait(list(running)):
            running.pop(sentinel).join()
            done += 1
            if report is not None:
                report(done, len(todo))
    return len(todo)
