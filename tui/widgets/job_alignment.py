"""A job's tab placed on another time axis (clock ⇄ first ProfilerStep) while open.

Mixed into ``TracePane``: ``realign`` re-merges the job on a daemon thread
(``tui.job_session.realigned_session``: the ranks' times shifted, nothing read
again), then the pane takes the new session: its views are built again from it,
the timeline keeps its folds, pins and selection (rows are the same rows), and
the analysis runs again after the first frame.  The status line's job header
says which alignment is in force.  ``swap_session`` (taking a new session in a
pane) is shared with a job's first rank grown to the whole job
(``tui.widgets.job_rest``); while only that first rank is in, ``realign`` says
the other ranks are still loading.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.widgets import ContentSwitcher

from tui.first_screen import take
from tui.job_progressive import still_loading
from tui.job_session import job_of, realigned_session
from tui.rows import Folds
from tui.session import error_line
from tui.timeline_model import TimelineModel

if TYPE_CHECKING:
    from tui.session import Session

ALIGNMENT_WORDS = {"clock": "the traces' clocks", "step": "each rank's first ProfilerStep"}


class RealignsJob:
    """``realign``: the pane's job on another alignment, re-merged off the UI thread."""

    session: Session | None
    model: TimelineModel | None
    view: str
    realigning: str = ""  # the alignment being computed, '' when none

    if TYPE_CHECKING:

        def _post(self, fn: Any, *args: Any) -> None: ...
        def _make_view(self, view: str) -> Any: ...
        def show_view(self, view: str) -> None: ...
        def _start_analysis(self) -> None: ...
        def _update_status(self) -> None: ...
        def query_one(self, *args: Any) -> Any: ...
        def notify(self, message: str, **kwargs: Any) -> None: ...

    def realign(self, alignment: str | None = None) -> None:
        """Align the job's ranks on ``alignment`` (None: the other one of clock / step)."""
        job = job_of(self.session)
        if still_loading(self.session):  # a first rank's job: aligning it alone says nothing
            self.notify(still_loading(self.session), severity="warning", timeout=5, markup=False)
            return
        if job is None or len(job.ranks) < 2:
            self.notify("Alignment is for a job of several ranks; this is one trace",
                        severity="warning", timeout=4, markup=False)
            return
        if self.realigning:
            self.notify(f"Already aligning on {ALIGNMENT_WORDS[self.realigning]} …", timeout=3,
                        markup=False)
            return
        target = alignment or ("step" if job.alignment == "clock" else "clock")
        self.realigning = target
        self.notify(f"Aligning {len(job.ranks)} ranks on {ALIGNMENT_WORDS[target]} …",
                    timeout=3, markup=False)
        session = self.session
        threading.Thread(target=self._realign, args=(session, target), daemon=True,
                         name="attn-tui realign").start()

    def _realign(self, session: Session, alignment: str) -> None:
        try:
            new = realigned_session(session, alignment)
        except Exception as exc:  # noqa: BLE001 - one line, the old alignment stays
            self._post(self._realign_failed, error_line(exc))
            return
        self._post(self._adopt, new)

    def _realign_failed(self, line: str) -> None:
        self.realigning = ""
        self.notify(f"Could not align the ranks again: {line}", severity="error", timeout=8,
                    markup=False)

    async def _adopt(self, session: Session) -> None:
        """Take ``session`` (the same job, re-aligned) in place of the pane's own."""
        self.realigning = ""
        if session is self.session:
            self.notify("Already aligned that way", timeout=3, markup=False)
            return
        await self.swap_session(session, keep_folds)
        job = job_of(session)
        if job is not None:
            self.notify(f"Ranks aligned on {job.alignment_note}", timeout=4, markup=False)

    async def swap_session(self, session: Session,
                           keep: Callable[[TimelineModel, TimelineModel], None]) -> None:
        """Take ``session`` in place of the pane's own (a realigned job, or a first
        rank's job grown to the whole job, ``tui.widgets.job_rest``): its views are
        built again from it, ``keep(old, new)`` carries what the user had over to the
        new timeline model, and the analysis runs again after the first frame."""
        old = self.model
        switcher = self.query_one("#views", ContentSwitcher)
        for child in list(switcher.children):
            if child.id not in ("loading", "error", "analysing"):
                await child.remove()
        switcher.current = None  # the view shown again below is a new widget: make it visible
        self.session = session
        model = take(session)  # a job's first view, compact (prepared off this thread, or now)
        if old is not None:
            keep(old, model)
        self.model = model
        timeline = self._make_view("timeline")
        timeline.display = False
        await switcher.mount(timeline)
        self.show_view(self.view)
        self.call_after_refresh(self._start_analysis)  # type: ignore[attr-defined]


def keep_folds(old: TimelineModel, model: TimelineModel) -> None:
    """The same rows and lanes (a realigned job): keep what the user folded, pinned,
    selected, and the cursor's row."""
    f = old.folds
    model.folds = Folds(set(f.groups_folded), set(f.lanes_open), list(f.pinned), set(f.hidden))
    model.rebuild()
    model.cursor = min(old.cursor, max(len(model.rows) - 1, 0))
    if old.selected >= 0:
        model.select(old.selected)
