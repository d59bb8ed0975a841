"""A job opened the fastest way it can be: its stored merge, else its ranks parsed in
processes of their own, mapped and merged (then stored for the next open).

One function for the TUI (``tui.job_session``) and the commands that read a job
(``ranks``, ``findings``, through ``job_report.load_ranks``), so both take the same
path and a job opened by one is reopened fast by the other:

1. ``job_store.read_job``: the merged job's own index, mapped (a reopen);
2. else ``job_index.index_in_processes``: the big ranks without an index are
   parsed each in a process of its own (cores shared out), which writes their
   indexes; then ``job_merge.load_job`` maps every rank (threads) and merges them;
   ranks parsed in this process (``--no-cache``, ``ATTN_TUI_JOB_THREADS=1``) go one
   big one at a time (``job_index.one_parse_at_a_time``);
3. the merged job is written as its own index on a background thread
   (``job_store.write_in_background``) when every rank made it in.

``use_index=False`` (``--no-cache``) skips 1 and 3 and parses every rank here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from profiling.analysis.job import Loader
from profiling.analysis.job_merge import Job, load_job
from profiling.analysis.job_store import read_job, write_in_background


def open_job(
    paths: Sequence[str],
    load: Loader,
    alignment: str,
    key: str,
    *,
    use_index: bool = True,
    timings: dict[str, float] | None = None,
    parsed: Callable[[int, int], None] | None = None,
) -> Job:
    """The job of ``paths`` (rank order), its merged trace named ``key``.

    ``load`` loads one rank (``load_trace`` with the caller's options); ``timings``
    gets the seconds of each stage; ``parsed(done, n)`` after each rank parsed in a
    process of its own.  Raises as ``job_merge.load_job`` does."""
    timings = {} if timings is None else timings
    clock = [time.perf_counter()]

    def lap(stage: str) -> None:
        now = time.perf_counter()
        timings[stage] = now - clock[0]
        clock[0] = now

    if use_index:
        stored = read_job(paths, alignment, key)
        lap("job index")
        if stored is not None:
            return stored
    # the parse machinery (process pool, decoders) only now: a reopen maps the job's
    # stored merge and never uses it
    from profiling.analysis.job_index import index_in_processes, one_parse_at_a_time

    if use_index:
        index_in_processes(paths, parsed)
        lap("rank indexes")
    job = load_job(paths, one_parse_at_a_time(load, use_index), alignment, path=key,
                   timings=timings)
    if use_index and len(job.ranks) == len(paths):  # every rank in it: worth keeping
        write_in_background(job, paths)
    return job
