"""Loading a trace for a headless command: the cache switch and a progress bar.

The bar goes to stderr, only when stderr is a terminal and the file is big
enough to make someone wait, so pipes and ``--json`` output stay clean.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from profiling.trace import Trace, load_trace

if TYPE_CHECKING:
    from profiling.analysis.analysed import AnalysedTrace

PROGRESS_MIN_BYTES = 4 << 20

_STAGES = {"read": "reading", "decode": "decoding", "build": "building", "done": "done"}


def load_for_command(path: str, args: Any = None) -> Trace:
    """``load_trace`` with ``--no-cache`` honoured and a progress bar for big files.
    Once a trace is reopened from its index, the allocator keeps freed memory for
    the command's next chunk (``malloc_tuning``)."""
    from profiling.trace.cache import index_of, is_new_index

    trace = _load(path, args)
    if index_of(trace) is not None and not is_new_index(trace):
        from tui.malloc_tuning import keep_freed_memory

        keep_freed_memory()
    return trace


def _load(path: str, args: Any) -> Trace:
    use_cache = not getattr(args, "no_cache", False)
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0  # load_trace reports the real problem
    if size < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return load_trace(path, use_cache=use_cache)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{os.path.basename(path)}: reading", total=1.0)

        def report(stage: str, fraction: float) -> None:
            label = _STAGES.get(stage, stage)
            bar.update(task, completed=fraction, description=f"{os.path.basename(path)}: {label}")

        return load_trace(path, use_cache=use_cache, progress=report)


def analysed_for_command(path: str, args: Any = None) -> AnalysedTrace:
    """``load_for_command``'s trace, analysed.  When this load wrote the trace's index
    (a first open), the results the next commands ask for are computed beside this
    command's own work and stored with it (``profiling.analysis.warm``);
    ``finish_warming`` waits for them before the process exits."""
    from profiling.analysis.analysed import AnalysedTrace

    trace = load_for_command(path, args)
    return _warming(trace) or AnalysedTrace(trace)


def analysed_each(paths: Sequence[str], args: Any = None) -> list[AnalysedTrace]:
    """``analysed_for_command`` of each path, in order; a path given more than once is
    loaded and analysed once (``diff A A``: one index read, one set of parts)."""
    loaded: dict[str, AnalysedTrace] = {}
    for path in paths:
        if path not in loaded:
            loaded[path] = analysed_for_command(path, args)
    return [loaded[path] for path in paths]


def trace_for_command(path: str, args: Any = None) -> Trace:
    """``load_for_command``'s trace, for a command that reads the trace alone
    (``slices``): a first open still warms the analysis for the next commands, but a
    reopen imports none of it (30 ms of a 0.3 s command)."""
    trace = load_for_command(path, args)
    _warming(trace)
    return trace


def _warming(trace: Trace) -> AnalysedTrace | None:
    """On a first open (this load wrote the index), ``trace`` analysed, its warm-up
    started on a thread; else None."""
    if not should_warm(trace):
        return None
    from profiling.analysis.analysed import AnalysedTrace

    analysed = AnalysedTrace(trace)
    thread = threading.Thread(target=warm_quietly, args=(analysed,),
                              name="attn-tui-warm", daemon=True)
    thread.start()
    _WARMING.append(thread)
    return analysed


_WARMING: list[threading.Thread] = []


def should_warm(trace: Trace) -> bool:
    """Whether this load wrote ``trace``'s index (a first open) and the analysis can
    be stored with it: then the next commands and views should find it there."""
    from profiling.trace.cache import is_new_index

    if not is_new_index(trace):
        return False
    from profiling.analysis import analysis_store

    return analysis_store.available(trace)


def warm_quietly(analysed: AnalysedTrace) -> None:
    """``warm``, best effort: what it fails to store, the command that needs it
    computes (and reports any real problem with the trace itself)."""
    from profiling.analysis.warm import warm

    try:
        warm(analysed)
    except Exception:  # noqa: BLE001,S110 - see the docstring
        pass


def finish_warming() -> None:
    """Wait for every ``analysed_for_command`` warm-up of this process (the command's
    output is flushed first, so a reader of it need not wait)."""
    if not _WARMING:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # a closed pipe: the command's own exit code says so
    while _WARMING:
        _WARMING.pop().join()


def load_job_for_command(paths: list[str], args: Any, command: str) -> Any:
    """The job of ``paths`` (its stored merge, else its ranks loaded; see ``job_open``),
    with each rank left out or read with repairs said on stderr: not fatal, but its
    figures are missing or partial, and the user must know which."""
    from profiling.analysis.job_report import load_ranks
    from tui.names import visible

    job = load_ranks(paths, lambda p: load_for_command(p, args), args.align,
                     use_index=not getattr(args, "no_cache", False))
    for line in job.trace.warnings:
        if line.endswith("(left out of the job)"):
            print(f"attn-tui {command}: {visible(line)}", file=sys.stderr)
        else:
            print(f"attn-tui {command}: warning: {visible(line)}", file=sys.stderr)
    return job
