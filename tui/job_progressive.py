"""A job's first open in the app: its largest rank shown first, the whole job after.

``attn-tui open DIR`` on a job with no stored merge, whose ranks would be parsed
(``profiling.analysis.job_progressive.first_rank``), loads the largest rank alone
on every core and hands the pane a *partial* ``JobSession`` of that rank
(``first_stage``), so the first frame comes in about the time of that rank's own
open instead of the whole job's (issue 14).  The session's ``rest`` is a
``RestOfJob``: a ``concurrent.futures.Future`` of the whole job's session, computed
on a daemon thread once started: it waits for the other ranks' parse
(``OtherRanks``, begun during the first rank's load), then maps and merges every
rank (``job_session.load_job_session`` as in a one-stage open).  The pane starts
it after its first frame and swaps itself to the whole job when it is done
(``tui.widgets.job_rest``).  Nothing here imports Textual.

The headless commands (``ranks``, ``findings``, ``compare``), a reopen (a stored
merge), ``--no-cache`` and ``ATTN_TUI_JOB_THREADS=1`` open the whole job at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.job_index import index_in_processes
from profiling.analysis.job_merge import job_of_trace
from profiling.analysis.job_progressive import (
    first_rank,
    first_rank_job,
    loading_line,
    partial_header,
    progressive_min_bytes,
    ranks_in_job,
)
from profiling.analysis.job_store import read_job
from profiling.trace import load_trace
from tui.session import Progress

if TYPE_CHECKING:
    from tui.job_session import JobSession

REST_THREAD = "attn-tui load (rest of job) "
"""The rest's thread name: ``tui.commands.open``'s loader prefix, so quitting never
waits for it (nor for the processes parsing the other ranks)."""


class RestOfJob:
    """The whole job behind a first rank's session: ``future`` gets its ``JobSession``
    (or the exception that kept it from loading), computed on a daemon thread from
    ``start`` on: the pane starts it after drawing the first rank, so that mapping
    and merging the job does not delay that frame (``wait`` starts it too, for
    callers with no pane)."""

    def __init__(self, compute: Callable[[], JobSession], name: str, ranks: int) -> None:
        self.future: Future[JobSession] = Future()
        self.ranks = ranks  # how many ranks the whole job has
        self._compute = compute
        self._name = name
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Begin loading the whole job (once; later calls do nothing)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._run, name=REST_THREAD + self._name, daemon=True).start()

    def _run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            self.future.set_result(self._compute())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            self.future.set_exception(exc)

    def wait(self, timeout: float | None = None) -> JobSession:
        """The whole job's session (started if it was not); raises its load's error."""
        self.start()
        return self.future.result(timeout)


def first_stage(paths: list[str], key: str, report: Progress, alignment: str) -> Any:
    """The session a job's first open shows first: the stored job when there is one
    (a reopen, complete), a partial session of its largest rank (with ``rest``), or
    None when the job opens in one stage (``first_rank``) or its first rank fails
    to load (the whole job's load then says what is wrong, as before)."""
    from tui.job_session import JobSession, load_job_session

    timings: dict[str, float] = {}
    start = time.perf_counter()
    stored = read_job(paths, alignment, key)
    timings["job index"] = time.perf_counter() - start
    if stored is not None:
        return JobSession(key, AnalysedTrace(stored.trace), job=stored, timings=timings)
    k = first_rank(paths)
    if k is None:
        return None
    others = OtherRanks(paths[:k] + paths[k + 1:], key)
    stage = f"loading the largest rank first, then {len(paths) - 1} more"

    def progress(step: str, fraction: float) -> None:
        if step == "build":  # its decoding is done: the others may take the idle cores
            others.start()
        report(stage, fraction)

    try:
        job = first_rank_job(paths[k], lambda p: load_trace(p, progress=progress), alignment,
                             key, len(paths))
    except Exception:  # noqa: BLE001 - the one-stage open reports it
        others.join()  # its ranks indexed: the one-stage open maps them, not parse again
        return None
    others.start()  # if its load said no "build" (the others wait no longer)
    timings["first rank"] = time.perf_counter() - start

    def whole() -> JobSession:
        others.join()
        return load_job_session(paths, key, alignment=alignment)

    session = JobSession(key, AnalysedTrace(job.trace), job=job, timings=timings)
    session.rest = RestOfJob(whole, key, len(paths))
    report("done", 1.0)
    return session


REST_NICENESS = 19
"""How much nicer the other ranks' parsing runs than the first rank's (the most)."""


class OtherRanks:
    """A job's other ranks parsed (their indexes written, each in a process of its own:
    ``job_index.index_in_processes``) at the lowest priority, from the moment the
    first rank's decoding is done (``start``).  Its serial rest (building the columns,
    writing its index: a second or more of a 1 GB rank's load on one core) then leaves
    15 of 16 cores to the others.  Measured on the H200, 8 x 1 GB: parsed after the
    first rank, the whole job came 2.5 s later than in one stage (13.4 s against
    10.9 s); parsed from the start beside it, the first rank's frame came 1.43x its
    own open's, not 1.10x (the decoders share the machine's memory and caches)."""

    def __init__(self, paths: list[str], key: str) -> None:
        self._thread = threading.Thread(
            target=index_in_processes, args=(paths,), name=f"{REST_THREAD}(parsing) {key}",
            kwargs={"min_bytes": progressive_min_bytes(), "niceness": REST_NICENESS,
                    "min_ranks": 1},
            daemon=True)
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Begin parsing them (once; later calls do nothing)."""
        with self._lock:
            if not self._started:
                self._started = True
                self._thread.start()

    def join(self) -> None:
        """Wait until every one is indexed (started now if it was not)."""
        self.start()
        self._thread.join()


def pending(session: Any) -> RestOfJob | None:
    """The whole job a session is waiting for (None: a trace, or a whole job)."""
    rest = getattr(session, "rest", None)
    return rest if isinstance(rest, RestOfJob) else None


def header_of(job: Any) -> str:
    """The status line's job header: the partial's while the other ranks load."""
    return partial_header(job) if ranks_in_job(job) else str(job.header())


def still_loading(trace_or_session: Any) -> str:
    """The one line a whole-job key says on a first rank's job (``''`` otherwise);
    given a session, or a timeline's trace."""
    trace = getattr(trace_or_session, "trace", trace_or_session)
    job = job_of_trace(trace) if trace is not None else None
    return loading_line(job) if job is not None and ranks_in_job(job) else ""
