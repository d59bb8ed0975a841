"""``attn-tui open`` on a job: its ranks' traces become one tab, loaded as one session.

The app opens one tab per *target*: a trace path, or a job's key (its folder)
standing for the ranks' traces (``profiling.analysis.job``).  ``open_targets``
turns the PATHs into targets and a loader that knows which targets are jobs, so
the rest of the app (preloads, panes, file tabs) needs no change: a job's
session is a ``JobSession``, whose ``analysis`` is that of the merged trace, and
whose ``job`` the Ranks view reads.  Pure (no Textual).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.job import group_paths, name_stem
from profiling.analysis.job_merge import Job, job_of_trace, job_path
from profiling.analysis.job_open import open_job
from profiling.analysis.job_split import merged_file_job
from profiling.trace import load_trace
from tui.session import Progress, Session, load_session

if TYPE_CHECKING:
    from tui.job_progressive import RestOfJob


@dataclass
class JobSession(Session):
    """A session over a job's merged trace (``job`` has the ranks' places in it)."""

    job: Job | None = None
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per stage of the load (``bench/bench_job.py`` prints them)."""
    rest: RestOfJob | None = None
    """On a job's first open in the app, the session of its largest rank alone has the
    whole job pending here (``tui.job_progressive``): a ``Future`` of its session,
    which the pane waits for and then shows.  None for a whole job."""


def job_of(session: Any) -> Job | None:
    """The job behind a session, or None for a plain trace."""
    return getattr(session, "job", None)


def row_ranks(session: Any) -> Callable[[int], int] | None:
    """The rank of each merged row of a session's job; None for a plain trace or a job
    of one rank (nothing to tell apart)."""
    job = job_of(session)
    if job is None or len(job.ranks) < 2:
        return None
    return lambda row: job.rank_of_row(row).rank


class _RankProgress:
    """Each rank's load progress, reported as their mean (thread safe)."""

    def __init__(self, n: int, report: Progress) -> None:
        self._done = [0.0] * n
        self._lock = threading.Lock()
        self._report = report

    def of(self, k: int) -> Progress:
        def progress(stage: str, fraction: float) -> None:
            with self._lock:
                self._done[k] = fraction
                mean = sum(self._done) / len(self._done)
            # the pane's label says this stage as it is ("loading 8 ranks …"): the
            # bytes-decoded wording of one file would count a folder's size
            self._report(f"loading {len(self._done)} ranks", mean)

        return progress


def load_job_session(paths: list[str], key: str, progress: Progress | None = None, *,
                     no_cache: bool = False, alignment: str = "clock",
                     progressive: bool = False) -> JobSession:
    """Load a job's ranks into one session keyed ``key`` (``job_open.open_job``: the
    stored merge mapped, else the ranks parsed in processes of their own, mapped and
    merged, the merge then stored on a background thread).  ``progressive`` (the
    app's open): on a first open worth it, the largest rank's session alone, with the
    whole job pending in its ``rest`` (``tui.job_progressive``)."""
    report = progress or (lambda stage, fraction: None)
    if not no_cache:
        report(f"opening {len(paths)} ranks", 0.01)
    if progressive and not no_cache:
        from tui.job_progressive import first_stage

        first = first_stage(paths, key, report, alignment)
        if first is not None:
            return first  # type: ignore[no-any-return]
    ranks = _RankProgress(len(paths), report)
    index = {p: k for k, p in enumerate(paths)}

    def load(path: str):  # noqa: ANN202 - a Trace
        return load_trace(path, progress=ranks.of(index[path]), use_cache=not no_cache)

    timings: dict[str, float] = {}
    job = open_job(paths, load, alignment, key, use_index=not no_cache, timings=timings,
                   parsed=lambda done, n: report(f"parsing {n} ranks", 0.8 * done / n))
    report("done", 1.0)
    return JobSession(key, AnalysedTrace(job.trace), job=job, timings=timings)


def open_targets(paths: list[str], alignment: str = "clock", *,
                 progressive: bool = True) -> tuple[list[str], Any]:
    """The app's tabs for ``paths`` (a job's key in place of its ranks) and a loader
    (``tui.session.load_session``'s signature) that loads a job for its key (on a
    first open its largest rank first, unless not ``progressive``: ``load_job_session``)."""
    jobs: dict[str, list[str]] = {}
    targets: list[str] = []
    groups = group_paths(paths)
    folders = [job_path(g) for g in groups if len(g) > 1]
    for group in groups:
        if len(group) == 1:
            targets.append(group[0])
            continue
        key = job_path(group)
        if folders.count(key) > 1:  # one job per variant in a capture folder
            key = os.path.join(key, name_stem(group[0]).replace("rank.", "rank*."))
        while key in jobs or key in paths:
            key += "+"
        jobs[key] = group
        targets.append(key)

    def loader(path: str | os.PathLike[str], progress: Progress | None = None, *,
               no_cache: bool = False) -> Session:
        members = jobs.get(os.fspath(path))
        if members is None:
            return as_job_if_merged(load_session(path, progress, no_cache=no_cache), alignment)
        return load_job_session(members, os.fspath(path), progress, no_cache=no_cache,
                                alignment=alignment, progressive=progressive)

    return targets, loader


def as_job_if_merged(session: Session, alignment: str = "clock") -> Session:
    """A file that merges several ranks' traces (``job_split``) as the job it holds;
    any other trace's session as it is.  The cut and merge run on each open (they are
    not stored): a copy of the columns, on the loading thread."""
    job = merged_file_job(session.trace, session.path, alignment)
    if job is None:
        return session
    return JobSession(session.path, AnalysedTrace(job.trace), job=job,
                      file_state=session.file_state)


def fold_for_job(model: Any) -> None:
    """A job's first view (a ``TimelineModel``): each lane on one row (its nesting
    folded) and the groups with neither CPU nor GPU work (global instants, profiler
    spans) folded, so that eight ranks' threads and streams come close to one screen.
    ⏎ unfolds any of them; a plain trace is left as it is."""
    if job_of_trace(model.trace) is None:
        return
    model.folds.lanes_open.clear()
    model.folds.groups_folded |= {g.index for g in model.trace.groups if g.kind == "other"}
    model.rebuild()


def fold_rank(model: Any) -> str:
    """Fold (or unfold) every process group of the rank the cursor is in (a
    ``TimelineModel``): its host process, its GPU, its other groups, from any of
    their rows; the cursor lands on the rank's first header.  Unfolding leaves the
    groups with neither CPU nor GPU work folded, as a job opens.  '' when the
    cursor is on no rank; a plain trace says ``c`` folds its process."""
    job = job_of_trace(model.trace)
    if job is None:
        return ""
    spec = model.cursor_spec
    if spec is None or spec.kind == "pins" or spec.group < 0:
        return ""
    rank = next((r for r in job.ranks if r.groups[0] <= spec.group < r.groups[1]), None)
    if rank is None:
        return ""
    mine = set(range(*rank.groups))
    folded = model.folds.groups_folded
    fold = not mine <= folded
    if fold:
        folded |= mine
    else:
        folded -= {g for g in mine if model.trace.groups[g].kind != "other"}
    model.rebuild()
    header = ("group", rank.groups[0], -1, None)
    model.cursor = next((i for i, s in enumerate(model.rows) if s.key == header), model.cursor)
    n = len(mine)
    return (f"{'folded' if fold else 'unfolded'} rank {rank.rank} "
            f"({n} process group{'s' if n != 1 else ''}; R again "
            f"{'unfolds' if fold else 'folds'})")


def realigned_session(session: Any, alignment: str) -> JobSession:
    """A job's session with its ranks on another time axis (``job_align.realign``):
    the same key and file state, a new analysis (run it with ``Session.analyse``).
    Runs off the UI thread: it copies the time column of every rank."""
    from profiling.analysis.job_align import realign

    job = job_of(session)
    if job is None:
        raise ValueError("not a job")
    new = realign(job, alignment)
    if new is job:
        return session  # type: ignore[no-any-return]
    return JobSession(session.path, AnalysedTrace(new.trace), job=new,
                      file_state=session.file_state)
