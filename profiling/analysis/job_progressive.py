"""A job's first open in two stages: its largest rank alone, then the whole job.

A job's first open is CPU-bound: eight 1 GB ranks are eight times the decoding of
one, and one rank alone already decodes on every core, so the whole job can never
be ready in the time of one rank (H200, 16 cores: largest rank 1.9 s, the job of
eight 7.4 s).  What can be ready that soon is one rank.  So the app
(``tui.job_progressive``) parses the largest rank first, on every core (the plain
single-trace load, which writes its index), shows it as a one-rank job
(``first_rank_job``: merged and aligned as ``job_merge.load_job`` would a job of
that rank alone), and then loads the whole job the usual way (``job_open.open_job``,
the first rank's index now mapped, not parsed again).  The other ranks are parsed
meanwhile, at the lowest priority, from the moment the first rank's decoding is
done (``tui.job_progressive.OtherRanks``: from the start they slowed the first
rank down; after it, they delayed the whole job).

Only where it pays (``first_rank``): a first open (the caller has found no stored
job), with the index in use and ranks parsed in processes (not ``--no-cache``, not
``ATTN_TUI_JOB_THREADS=1``), and at least two ranks that would be parsed (no index
of their own, at least ``progressive_min_bytes``, ``job_index``'s process
threshold unless ``ATTN_TUI_JOB_PROGRESSIVE_MIN_BYTES`` says otherwise: tests set
it to 0 to take this path on small ranks).  The headless commands never take it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from profiling.analysis.job import Loader, align_offsets, rank_info_of
from profiling.analysis.job_index import OWN_PROCESS_MIN_BYTES, THREADS_ENV, has_index
from profiling.analysis.job_merge import Job, merge_ranks
from profiling.errors import AttnTuiError

MIN_BYTES_ENV = "ATTN_TUI_JOB_PROGRESSIVE_MIN_BYTES"
"""Ranks from this size on (bytes) count as parsed on a first open (default: the size
from which ``job_index`` parses a rank in a process of its own).  0 in tests."""


def progressive_min_bytes() -> int:
    """``ATTN_TUI_JOB_PROGRESSIVE_MIN_BYTES`` when a whole number, else the process
    threshold of ``job_index``."""
    value = os.environ.get(MIN_BYTES_ENV, "").strip()
    return int(value) if value.isdigit() else OWN_PROCESS_MIN_BYTES


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def first_rank(paths: Sequence[str], use_index: bool = True) -> int | None:
    """Which of ``paths`` (rank order) to show first, or None when the job opens in
    one stage: the largest rank (ties: the lowest rank number, the first in
    ``paths``), when at least two ranks would be parsed (see the module's
    docstring).  The caller has checked that no stored job exists."""
    if not use_index or os.environ.get(THREADS_ENV) == "1" or len(paths) < 2:
        return None
    sizes = [_size(p) for p in paths]
    least = progressive_min_bytes()
    parsed = [p for p, s in zip(paths, sizes, strict=True)
              if s is not None and s >= least and not has_index(p)]
    if len(parsed) < 2:
        return None
    known = [(s, -k) for k, s in enumerate(sizes) if s is not None]
    return -max(known)[1]


def first_rank_job(path: str, load: Loader, alignment: str, key: str, ranks: int) -> Job:
    """The job of ``path``'s rank alone, named ``key``, aligned on ``alignment`` as
    ``job_merge.load_job`` aligns a job's ranks, and marked as the first of
    ``ranks`` (``ranks_in_job``).  Raises what ``load`` raises, and ``AttnTuiError``
    when the trace names no rank (the whole job's load then says what is wrong)."""
    trace = load(path)
    info = rank_info_of(path, trace.metadata)
    if info is None:
        raise AttnTuiError("no rank in distributedInfo", path, "give one job's rank traces")
    offsets, note = align_offsets([trace], alignment)
    job = merge_ranks([trace], [info], offsets, key, alignment, note)
    job.partial_of = int(ranks)
    return job


def ranks_in_job(job: Job | None) -> int:
    """For a first rank's job (``first_rank_job``): how many ranks the whole job has;
    0 for any other job (the whole one, or None)."""
    return job.partial_of if job is not None else 0


def rest_failed(job: Job) -> None:
    """Record that the rest of ``job``'s ranks failed to load: it stays the first
    rank alone, and says so (the failure itself is the app's notification)."""
    job.others_failed = True


def partial_header(job: Job) -> str:
    """The status line's job header while the other ranks load:
    ``rank 3 of 8 shown · loading 7 more ranks …`` (``… · 7 more ranks failed to
    load`` once they did)."""
    n = ranks_in_job(job)
    rest = n - len(job.ranks)
    shown = ", ".join(str(r.rank) for r in job.ranks)
    more = f"{rest} more rank{'s' if rest != 1 else ''}"
    if job.others_failed:
        return f"rank {shown} of {n} shown · {more} failed to load"
    return f"rank {shown} of {n} shown · loading {more} …"


def loading_line(job: Job) -> str:
    """What a key that needs the whole job says on a first rank's job."""
    rest = ranks_in_job(job) - len(job.ranks)
    others = f"The job's other {rest} rank{'s' if rest != 1 else ''}"
    if job.others_failed:
        return f"{others} failed to load: this needs the whole job (open the folder again)"
    return (f"{others} {'are' if rest != 1 else 'is'} still loading: this works on the whole "
            "job once they are in (the status line says when)")
