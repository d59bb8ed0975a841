"""Independent numpy steps run side by side on threads: ``columns.build_trace``'s, and
the pieces of the analysis' longest serial steps (nesting, launch chains).

WHY: ``build_trace`` runs serially in the loading process after the parallel
decode, and on a 1 GB trace most of its time is numpy filling fresh arrays
(merges, gathers in sorted order, per-lane depths): first touches of new memory,
slow on VMs.  NumPy releases the GIL in fancy indexing, ``concatenate``, sorts
and ufuncs, so steps that do not depend on one another overlap on threads.  No
process is forked: the columns stay where they are.

The pool is made on first use and kept (one per process: a forked child makes its
own; ``usable_cores`` threads, at most ``MAX_THREADS``); with one core the steps
run inline, in order.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from profiling.cores import usable_cores

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MAX_THREADS = 8
MIN_ROWS = 1 << 18
"""Under this many rows the steps run inline: handing them to threads (about 0.2 ms
a call) cost more than it saved on the real traces (up to 100 k rows)."""


def in_threads(*steps: Callable[[], Any], rows: int) -> list[Any]:
    """Each step's result, in the order given; the steps run at once on the pool
    (inline when there is one step or one core, or ``rows``, the rows the steps
    cover together, are under ``MIN_ROWS``).  The first exception a step raises
    is raised here, once every step has finished (none is left writing into
    arrays the caller goes on with).  A step must not call ``in_threads``: it
    would wait on the pool it holds a thread of."""
    pool = _pool() if len(steps) > 1 and rows >= MIN_ROWS else None
    if pool is None:
        return [step() for step in steps]
    from concurrent.futures import wait

    futures = [pool.submit(step) for step in steps]
    wait(futures)
    return [future.result() for future in futures]


def threads() -> int:
    """How many steps ``in_threads`` runs at once (1: one after the other)."""
    return max(1, min(MAX_THREADS, usable_cores()))


PIECES_MIN_CORES = 4
"""The analysis cuts its work into pieces (``pieces``) from this many usable cores."""


def pieces() -> int:
    """How many pieces the analysis cuts a long step into: ``threads()`` from
    ``PIECES_MIN_CORES`` cores, else 1.  WHY: on fewer, a first open's command and
    its warm-up already keep every core busy, and pieces side by side only held
    more memory at once (2 cores, 1 GB: 0.65 GB at the peak, not 0.59)."""
    return threads() if usable_cores() >= PIECES_MIN_CORES else 1


def shares(weight: np.ndarray, least: int) -> list[int]:
    """Bounds ``[0, ..., n]`` that cut ``n`` items of ``weight`` (the work each one
    brings: rows, GPU events) into runs of about equal total weight, as many as
    ``pieces()``, none lighter than ``least`` (handing one over costs more than that)."""
    n = weight.shape[0]
    total = int(weight.sum()) if n else 0
    count = min(pieces(), total // max(least, 1))
    if count < 2:
        return [0, n]
    ends = np.cumsum(weight)
    cuts = np.searchsorted(ends, [total * k // count for k in range(1, count)], side="right")
    return sorted({0, n, *(int(c) for c in cuts if 0 < c < n)})


def close_pool() -> None:
    """End this process's pool, if it has one (the next step starts a new one): a
    process about to fork keeps no idle thread (``tui.parallel_write``)."""
    with _POOLS_LOCK:
        pool = _POOLS.pop(os.getpid(), None)
    if pool is not None:
        pool.shutdown(wait=True)


_POOLS: dict[int, ThreadPoolExecutor | None] = {}
"""Each process's pool, by process id: a forked child has none of its parent's threads."""
_POOLS_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor | None:
    pid = os.getpid()
    with _POOLS_LOCK:  # the TUI loads several traces at once, each on a thread
        if pid not in _POOLS:
            workers = min(MAX_THREADS, usable_cores())
            _POOLS[pid] = None if workers < 2 else _new_pool(workers)
        return _POOLS[pid]


def _new_pool(workers: int) -> ThreadPoolExecutor:
    # here, not at the top: a reopen (no build_trace) skips concurrent.futures
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="attn-tui columns")
