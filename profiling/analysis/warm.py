"""What a trace's first open stores for the commands after it.

The index (``profiling.trace.cache``) makes a reopen map the trace instead of
parsing it, and ``AnalysedTrace`` keeps each analysis result with it once it is
computed.  Left at that, the first ``compare``, ``table``, ``kernels`` or
``findings`` after a first ``stats`` would still compute the op table, the
default regions' launches and kernel columns, and the findings: on a 1 GB trace
0.3-1 s each, where a mapped copy takes a tenth of that.  Those are the results
every view and command asks for, so the first open computes them too (``warm``),
beside the command's own work, and a reopen finds them all.  The cost is the
first open's: on 2 cores, 1 GB, 0.3-0.9 s more, and 90 MB more at its peak.

Where it runs: on a big trace whose decode started the process pool, with cores
to spare, the two halves run in that pool's processes, each on the trace mapped
from the new index (``warm_in_processes``); otherwise on threads of this process.

``warm`` asks exactly what the commands ask (the same instances in the same
order), so what it stores is what they look up; anything it could not store is
simply computed by the command that needs it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import wait as wait_all
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import summarize_trace
from profiling.analysis.findings import trace_findings
from profiling.analysis.instance_kernels import kernel_columns
from profiling.analysis.region_choice import choose_regions, chosen_instances
from profiling.cores import usable_cores
from profiling.trace.cache import index_of
from profiling.trace.loader import load_indexed
from profiling.trace.pool import existing_pool

SPLIT_MIN_CORES = 4
"""``warm`` runs its two halves on two threads from this many usable cores up."""

PROCESS_MIN_ROWS = 1_000_000
"""From this many rows, with the decoding pool started and ``SPLIT_MIN_CORES``,
the halves run in the pool's processes (``warm_in_processes``)."""


def warm(analysed: AnalysedTrace) -> None:
    """Compute and store the op table and the implementation of ``compare``'s
    default regions (``summarize_trace``); the kernel columns (and launches) of the
    regions ``kernels`` lists by default, then the default findings (which read
    those launches).

    The two halves share only parts that are built once (``AnalysedTrace``'s
    locks) and spend most of their time in NumPy, which lets another thread run, so
    with cores to spare they run side by side and the first open waits for the
    longer, not their sum.  On 2 cores, beside the command's own thread, that was
    slower (7.6-8.5 s against 7.3-7.9 s for the 1 GB trace's first open) and held
    130 MB more, so below ``SPLIT_MIN_CORES`` they run one after the other.  Raises
    the first failure, once both have ended."""
    if usable_cores() < SPLIT_MIN_CORES:
        summarize_trace(analysed)
        _regions(analysed)
        return
    failed: list[BaseException] = []

    def regions() -> None:
        try:
            _regions(analysed)
        except BaseException as exc:  # noqa: BLE001 - raised again below, on this thread
            failed.append(exc)

    # a daemon, like the thread warm runs on: an interrupted command never waits for it
    other = threading.Thread(target=regions, name="attn-tui-warm-regions", daemon=True)
    other.start()
    try:
        summarize_trace(analysed)
    finally:
        other.join()
    if failed:
        raise failed[0]


def _regions(analysed: AnalysedTrace) -> None:
    choice = choose_regions(analysed)
    if choice.names:
        kernel_columns(analysed, chosen_instances(analysed, choice.names))
    trace_findings(analysed)


def warm_in_processes(analysed: AnalysedTrace) -> Callable[[], None] | None:
    """Start the two halves of ``warm`` in the decoding pool's processes, each on
    the trace mapped from the index this open has just written; the returned call
    waits for both.  None when that does not pay: no pool started (a small trace,
    ``--jobs 1``), fewer than ``SPLIT_MIN_CORES`` cores, under ``PROCESS_MIN_ROWS``
    rows, or no index; the caller then runs ``warm`` on a thread.

    WHY: on threads the halves and the command's own analysis share one GIL.  On
    the 16-core machine, 1 GB trace, the command's ``stats`` took 0.8 s and the
    warm-up ended 0.7 s after it: the first open waited for work that idle cores
    could have done beside it.  In processes each half computes the links again
    (its own copy; the index maps in milliseconds) and stores what it built; of two
    writers of one part one wins (``analysis_store``), with equal contents."""
    index = index_of(analysed.trace)
    pool = existing_pool()
    if (index is None or pool is None or len(analysed.trace) < PROCESS_MIN_ROWS
            or usable_cores() < SPLIT_MIN_CORES):
        return None
    try:
        futures = [pool.submit(warm_part, analysed.trace.path, str(index[0]), part, _settings())
                   for part in _PARTS]
    except (BrokenProcessPool, RuntimeError):  # broken, or shut down: threads instead
        return None

    def finish() -> None:
        wait_all(futures)  # best effort: a half that failed is computed when asked
    return finish


def warm_part(path: str, folder: str, part: str, settings: dict[str, str]) -> bool:
    """Run in a worker process: one half of ``warm`` on the trace indexed in
    ``folder``, with the loading process's ``ATTN_TUI_*`` settings; False when that
    index is gone or no longer the file's."""
    for name in [n for n in os.environ if n.startswith(_SETTINGS) and n not in settings]:
        del os.environ[name]
    os.environ.update(settings)
    trace = load_indexed(path, Path(folder))
    if trace is None:
        return False
    _PARTS[part](AnalysedTrace(trace))
    return True


_SETTINGS = "ATTN_TUI_"


def _settings() -> dict[str, str]:
    """The settings a worker must share with this process (where the analysis is
    stored, whether it is): the pool's processes keep the environment of the moment
    the pool started, which may not be this moment's."""
    return {n: v for n, v in os.environ.items() if n.startswith(_SETTINGS)}


_PARTS: dict[str, Callable[[AnalysedTrace], object]] = {
    "op table": summarize_trace,
    "regions": lambda analysed: _regions(analysed),  # looked up when run: tests replace it
}
