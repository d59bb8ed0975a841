"""A pane showing a job's first rank alone grows to the whole job when it is loaded.

Mixed into ``TracePane``.  On a job's first open the loader hands the pane the
largest rank's session, with the whole job pending (``tui.job_progressive``).
After the first frame, ``await_rest`` starts that load and waits for it on a
daemon thread named as a loader (quitting never waits for it: ``tui.commands.open``),
where the whole job's first timeline model is made too (``first_screen.prepare``);
then the pane swaps itself to it (``RealignsJob.swap_session``, as a realigned job
is taken).  Folds and pins are not kept, the rows are not the same rows; the view,
the time window (moved by the rank's place in the whole job) and the cursor's and
the selection's places in the first rank are.  A failure is one notification; the
first rank stays, and the status line says the other ranks failed.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from profiling.analysis.job_merge import Job
from profiling.analysis.job_progressive import rest_failed
from tui.details import loader_notes
from tui.first_screen import prepare
from tui.job_progressive import RestOfJob, pending
from tui.job_session import job_of
from tui.session import error_line
from tui.timeline_model import TimelineModel
from tui.viewport import FIT_MARGIN

if TYPE_CHECKING:
    from tui.session import Session


def keep_place(part: Job | None, whole: Job | None) -> Any:
    """``keep(old, new)`` for ``swap_session`` from a first rank's job ``part`` to the
    whole job: the time window when zoomed in (else the whole job fits), and the
    cursor's group and the selected event, moved to where that rank lies now."""

    def keep(old: TimelineModel, model: TimelineModel) -> None:
        mine = part.ranks[0] if part is not None and part.ranks else None
        there = next((r for r in (whole.ranks if whole else []) if mine and r.rank == mine.rank),
                     None)
        if mine is None or there is None:
            return
        spec = old.cursor_spec
        if spec is not None and spec.group >= 0:
            header = ("group", spec.group + there.groups[0] - mine.groups[0], -1, None)
            model.cursor = next((i for i, s in enumerate(model.rows) if s.key == header),
                                model.cursor)
        if old.selected >= 0:
            model.select(old.selected - mine.rows[0] + there.rows[0])
        shift = there.offset_ns - mine.offset_ns  # step alignment: the rank moved
        view = old.viewport
        if view.span < view.total * (1 + 2 * FIT_MARGIN) * 0.999:  # zoomed in: keep the window
            start = old.origin + view.start + shift - model.origin
            model.viewport.show(start, start + view.span, margin=0.0)
            model.version += 1

    return keep


class AwaitsRestOfJob:
    """``await_rest``: a first rank's pane waits for its whole job, then shows it."""

    session: Session | None
    path: str

    if TYPE_CHECKING:

        def _post(self, fn: Any, *args: Any) -> None: ...
        def _update_status(self) -> None: ...
        def notify(self, message: str, **kwargs: Any) -> None: ...
        def post_message(self, message: Any) -> bool: ...
        async def swap_session(self, session: Session, keep: Any) -> None: ...

    def await_rest(self) -> None:
        """Start loading the whole job behind the pane's first rank (if it is one)."""
        rest = pending(self.session)
        if rest is None:
            return
        rest.start()
        threading.Thread(target=self._wait_rest, args=(rest,), daemon=True,
                         name=f"attn-tui load (whole job) {self.path}").start()

    def _wait_rest(self, rest: RestOfJob) -> None:
        try:
            whole = rest.wait()
        except BaseException as exc:  # noqa: BLE001 - one line; the first rank stays
            self._post(self._rest_failed, rest, error_line(exc))
            return
        prepare(whole)  # the whole job's first screen, here rather than on the UI thread
        self._post(self._take_rest, rest, whole)

    async def _take_rest(self, rest: RestOfJob, whole: Session) -> None:
        if pending(self.session) is not rest:
            return  # the pane moved on (it cannot today; a reload would)
        part = job_of(self.session)
        before = set(self.session.trace.warnings) if self.session is not None else set()
        await self.swap_session(whole, keep_place(part, job_of(whole)))
        self.notify(f"All {rest.ranks} ranks loaded: the whole job is shown", timeout=4,
                    markup=False)
        new = [w for w in whole.trace.warnings if w not in before]
        if new:
            self.notify(loader_notes("the job", new), severity="warning", timeout=8,
                        markup=False)
        self.post_message(type(self).Settled())  # type: ignore[attr-defined]

    def _rest_failed(self, rest: RestOfJob, line: str) -> None:
        job = job_of(self.session)
        if pending(self.session) is not rest or job is None:
            return
        rest_failed(job)
        self._update_status()
        self.notify(f"The job's other ranks failed to load ({line}); rank "
                    f"{job.ranks[0].rank} stays shown alone", severity="error", timeout=10,
                    markup=False)
