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

``warm`` asks exactly what the commands ask (the same instances in the same
order), so what it stores is what they look up; anything it could not store is
simply computed by the command that needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import summarize_trace
from profiling.analysis.findings import trace_findings
from profiling.analysis.instance_kernels import kernel_columns
from profiling.analysis.rank_breakdown import store_trace_figures
from profiling.analysis.region_choice import choose_regions, chosen_instances
from profiling.analysis.slices import whole_trace
from profiling.cores import usable_cores

SPLIT_MIN_CORES = 4
"""``warm`` runs its parts on three threads side by side from this many usable cores up."""


def warm(analysed: AnalysedTrace) -> None:
    """Compute and store the op table and the implementation of ``compare``'s
    default regions (``summarize_trace``); the kernel columns (and launches) of the
    regions ``kernels`` lists by default; the default findings (which read those
    launches); the whole trace's ``slices`` and its GPU figures for ``ranks``.

    The four share only parts that are built once (``AnalysedTrace``'s locks:
    the findings wait for the launches the kernel columns build, or build them
    while the kernel columns wait) and spend most of their time in NumPy, which
    lets another thread run, so with cores to spare they run side by side and the
    first open waits for the longest, not their sum.  On 2 cores, beside the
    command's own thread, that was slower (7.6-8.5 s against 7.3-7.9 s for the 1 GB
    trace's first open) and held 130 MB more, so below ``SPLIT_MIN_CORES`` they run
    one after the other.  Raises the first failure, once all have ended."""
    if usable_cores() < SPLIT_MIN_CORES:
        summarize_trace(analysed)
        _regions(analysed)
        _slices(analysed)
        return
    failed: list[BaseException] = []

    def caught(step: Callable[[AnalysedTrace], object]) -> Callable[[], None]:
        def run() -> None:
            try:
                step(analysed)
            except BaseException as exc:  # noqa: BLE001 - raised again below, on this thread
                failed.append(exc)
        return run

    # daemons, like the thread warm runs on: an interrupted command never waits for them
    others = [threading.Thread(target=caught(step), name=f"attn-tui-warm-{name}", daemon=True)
              for name, step in (("kernels", _kernels), ("findings", trace_findings))]
    for thread in others:
        thread.start()
    try:
        summarize_trace(analysed)
        _slices(analysed)  # after it, not on a thread of its own: one part fewer at the peak
    finally:
        for thread in others:
            thread.join()
    if failed:
        raise failed[0]


def _slices(analysed: AnalysedTrace) -> None:
    """The whole trace's ``slices`` (its groups and GPU figures, five passes over every
    row), then the GPU figures ``ranks`` gives this trace (``store_trace_figures``)."""
    whole_trace(analysed.trace)
    store_trace_figures(analysed.trace)


def _regions(analysed: AnalysedTrace) -> None:
    """The kernel columns, then the findings (one after the other: few cores)."""
    _kernels(analysed)
    trace_findings(analysed)


def _kernels(analysed: AnalysedTrace) -> None:
    """The kernel columns (and launches) of the regions ``kernels`` lists by default."""
    choice = choose_regions(analysed)
    if choice.names:
        kernel_columns(analysed, chosen_instances(analysed, choice.names))
