"""One opened file: a progress bar while it loads, then its three views
(or its one-line error).  Loading runs on a daemon thread, so the screen never
freezes and quitting never waits for a half-read file."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import ContentSwitcher, Label, ProgressBar, Static

from profiling.analysis.ranks import rank_text, trace_rank  # noqa: F401  (pure; moved)
from tui.details import loader_notes
from tui.file_watch import POLL_SECONDS, FileState, change, change_message
from tui.first_screen import prepare, take
from tui.fmt import counted, fmt_ns
from tui.gc_settle import freeze_long_lived, thaw
from tui.guard import ReportsErrors
from tui.job_progressive import header_of, still_loading
from tui.job_session import job_of, row_ranks
from tui.marks import cursor_ns, distance_text
from tui.names import visible
from tui.search import Query, QueryError, find, next_match, parse_query
from tui.session import Session, error_line, load_session
from tui.timeline_model import TimelineModel
from tui.widgets.findings_view import FindingsView
from tui.widgets.job_alignment import RealignsJob
from tui.widgets.job_rest import AwaitsRestOfJob
from tui.widgets.occurrence_jumps import OccurrenceJumps
from tui.widgets.ops_view import OpsView
from tui.widgets.ranks_view import RanksView
from tui.widgets.regions_view import RegionsView
from tui.widgets.timeline_view import TimelineView

VIEWS = ("timeline", "regions", "ops", "findings", "ranks")
VIEW_TITLES = {
    "timeline": "1 Timeline", "regions": "2 Regions", "ops": "3 Ops", "findings": "5 Findings",
    "ranks": "8 Ranks",
}

Loader = Callable[..., Session]
PROGRESS_EVERY_S = 0.25
WAIT_FOR_ANALYSIS = ("regions", "ops", "findings", "ranks")
"""Views built from ``Session.analyse``'s results (shown once it has finished)."""


def progress_text(stage: str, fraction: float, size: int) -> str:
    """What the loading line says: the stage, and the bytes decoded so far.

    The loader's decode stage runs on 0.05..0.85 of the bar, chunk by chunk, so
    proportional to bytes; the analysis runs after the first frame, not here."""
    mb = size / 1e6
    if stage == "decode" and size:
        done = min(max((fraction - 0.05) / 0.8, 0.0), 1.0)
        return f"decoding events, {done * mb:.1f} of {mb:.1f} MB"
    if stage == "read":
        return f"reading {mb:.1f} MB"
    if stage == "build":
        return "building columns, lanes and nesting"
    if stage in ("links", "regions", "op table"):
        return f"analysing: {stage}"
    return f"{stage} …"


class TracePane(ReportsErrors, OccurrenceJumps, RealignsJob, AwaitsRestOfJob, Vertical):
    """Owns one ``Session`` and its views; ``state`` is loading, ready or error.  Mixed in:
    n/N jumps, a job realigned, a job's first rank grown to the whole job."""

    class Settled(Message):
        """Loading ended (ready or error): the Compare view waits for every tab."""

    def __init__(
        self, path: str, *, loader: Loader = load_session, no_cache: bool = False, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.loader = loader
        self.no_cache = no_cache
        self.state = "loading"
        self.error = ""
        self.session: Session | None = None
        self._analysis_shown: Session | None = None  # whose analysis the screen shows
        self.model: TimelineModel | None = None
        self.view = "timeline"
        self.query_: Query | None = None
        self.matches = np.zeros(0, dtype=np.int64)
        self.match_index = -1
        self._stage = ("read", 0.0)
        self._started = 0.0
        self._file_bytes = 0
        self.file_change = ""  # '', 'changed' or 'vanished' (tui.file_watch)
        self._mark_text = ""  # the cursor's distance to the nearest mark (tui.marks)
        self._stage_posted, self._posted_at = "", 0.0  # the last progress shown (thread side)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with ContentSwitcher(initial="loading", id="views"):
            with Vertical(id="loading"):
                yield Label(Text(f"Loading {visible(self.path)} …"), id="loading-label")
                yield ProgressBar(total=100, show_eta=False, id="loading-bar")
            yield Static(id="error")
            yield Static(Text("\n  Analysing links, regions and the op table …"), id="analysing")

    def on_mount(self) -> None:
        self._started = time.monotonic()
        try:
            self._file_bytes = os.path.getsize(self.path)
        except OSError:
            self._file_bytes = 0
        self._update_status()
        thread = threading.Thread(target=self._load, name=f"attn-tui load {self.path}", daemon=True)
        thread.start()

    # ---- loading (thread side) ----

    def _load(self) -> None:
        try:
            session = self.loader(self.path, self._progress, no_cache=self.no_cache)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes one line
            self._post(self._failed, error_line(exc))
            return
        prepare(session)  # the first screen's tracks, here rather than on the UI thread
        self._post(self._loaded, session)

    def _post(self, fn: Callable, *args) -> None:
        try:
            app = self.app
        except Exception:  # noqa: BLE001 - unmounted: the app is gone
            return
        if not app.is_running:
            return
        try:
            app.call_from_thread(fn, *args)
        except RuntimeError:  # the app stopped between the check and the call
            pass

    def _progress(self, stage: str, fraction: float) -> None:
        # At most a few repaints a second: on two cores, each one (a few ms of the
        # main process) is taken from the decoding workers.
        now = time.monotonic()
        if stage == self._stage_posted and now - self._posted_at < PROGRESS_EVERY_S:
            return
        self._stage_posted, self._posted_at = stage, now
        self._post(self._show_progress, stage, fraction)

    # ---- loading (UI side) ----

    def _show_progress(self, stage: str, fraction: float) -> None:
        if self.state != "loading":
            return
        self._stage = (stage, fraction)
        self.query_one("#loading-bar", ProgressBar).update(progress=100 * fraction)
        self.query_one("#loading-label", Label).update(
            Text(
                f"Loading {visible(self.path)}: {progress_text(stage, fraction, self._file_bytes)}"
            )
        )

    def _failed(self, line: str) -> None:
        self.state = "error"
        self.error = line
        text = Text(line, style="bold")
        text.append("\n\nThe other files stay open ([ and ] switch files); q quits.", style="dim")
        self.query_one("#error", Static).update(text)
        self.query_one("#views", ContentSwitcher).current = "error"
        self._update_status()
        self.post_message(self.Settled())

    async def _loaded(self, session: Session) -> None:
        try:
            self.session = session
            self.model = take(session)  # made on the loading thread (a job: ranks compact)
            timeline = self._make_view("timeline")
            timeline.display = False
            await self.query_one("#views", ContentSwitcher).mount(timeline)
        except Exception as exc:  # noqa: BLE001 - a bug must not freeze the pane
            self._failed(error_line(exc))
            return
        self.state = "ready"
        self.show_view(self.view)
        freeze_long_lived()  # the trace and its views: no more full GC passes over them
        self.post_message(self.Settled())
        self.call_after_refresh(self.await_rest)  # a job's first rank: the rest, after it
        self.call_after_refresh(self._start_analysis)  # after the timeline's first frame
        name = os.path.basename(self.path) or self.path
        if session.trace.warnings:
            self.notify(loader_notes(name, session.trace.warnings), severity="warning",
                        timeout=8, markup=False)  # fmt: skip
        self.set_interval(POLL_SECONDS, self._watch_file)

    def on_unmount(self) -> None:
        thaw()  # its cycles are collectable again (tui.gc_settle)

    def _watch_file(self) -> None:
        """Say once when the file on disk changes or vanishes; the views keep what was loaded."""
        session = self.session
        what = change(session.file_state, FileState.of(self.path)) if session else ""
        if what == self.file_change:
            return
        self.file_change = what
        self._update_status()
        if what:
            name = visible(os.path.basename(self.path) or self.path)
            self.notify(change_message(name, what), title="File changed", severity="warning",
                        timeout=10, markup=False)  # fmt: skip

    # ---- analysis (after the first frame, off the UI thread) ----

    @property
    def busy(self) -> bool:
        """Loading, or analysing as far as the screen goes.

        ``session.analysed`` turns true on the analysis thread a moment before
        ``_analysed`` has redrawn the status line and the waiting views on this
        one; whatever waits for a settled screen (a screenshot, a test) waits on
        this, not on that flag."""
        shown = self.session is None or self._analysis_shown is self.session
        return self.state == "loading" or not shown

    def _start_analysis(self) -> None:
        session = self.session
        if session is None or session.analysed:
            self._analysis_shown = session  # analysed already (a job's swap): shown as loaded
            return
        name = f"attn-tui load (analysis) {self.path}"  # open.py does not wait for it on quit
        threading.Thread(target=self._analyse, args=(session,), name=name, daemon=True).start()

    def _analyse(self, session: Session) -> None:
        session.analyse()  # records failures itself, never raises for them
        self._post(self._analysed, session)
        session.warm()  # a first open: the other views' parts, stored for the next open

    def _analysed(self, session: Session) -> None:
        self._analysis_shown = session
        freeze_long_lived()  # and the analysis (links, regions, the op table)
        self._update_status()
        if self.view in WAIT_FOR_ANALYSIS and self.state == "ready":
            self.show_view(self.view)

    # ---- views ----

    def _make_view(self, view: str):
        session = self.session
        assert session is not None and self.model is not None
        if view == "timeline":
            return TimelineView(self.model, id="timeline")
        if view == "regions":
            return RegionsView(session.trace, session.links, session.regions,
                               session.regions_error, rank_of=row_ranks(session), id="regions")
        if view == "ranks":
            return RanksView(session, id="ranks")
        if view == "findings":
            return FindingsView(session.trace, session.links, id="findings")
        return OpsView(session.prepared_ops, session.ops_error, id="ops")

    def show_view(self, view: str) -> None:
        """Switch to ``view``; the regions and ops views are built the first time
        they are shown, so opening a file costs only its timeline."""
        if view == "ranks" and still_loading(self.session):  # a job's first rank alone
            self.notify(still_loading(self.session), severity="warning", timeout=5, markup=False)
            return
        self.view = view
        self._update_status()
        if self.state != "ready":
            if getattr(self.app, "pane", None) is self:
                self.screen.set_focus(None)  # keep focus out of the hidden tabs
            return
        switcher = self.query_one("#views", ContentSwitcher)
        if switcher.query_children(f"#{view}"):
            self._activate(view)
        elif view in WAIT_FOR_ANALYSIS and not (self.session and self.session.analysed):
            switcher.current = "analysing"  # _analysed shows the view when it can
        else:
            self.call_later(self._mount_view, view)

    async def _mount_view(self, view: str) -> None:
        switcher = self.query_one("#views", ContentSwitcher)
        if not switcher.query_children(f"#{view}"):
            widget = self._make_view(view)
            widget.display = False
            await switcher.mount(widget)
        if self.view == view:
            self._activate(view)

    def _activate(self, view: str) -> None:
        self.query_one("#views", ContentSwitcher).current = view
        if getattr(self.app, "pane", self) is self:  # never pull focus into a hidden tab
            widget = self.query_one(f"#{view}")
            focus_view = getattr(widget, "focus_view", None)  # every view defines it
            if focus_view is not None:
                focus_view()

    def _update_status(self) -> None:
        status = self.query_one("#status", Static)
        text = Text(no_wrap=True, overflow="ellipsis")
        job = job_of(self.session)
        for v in VIEWS:
            if v == "ranks" and job is None and self.view != v:
                continue  # a job's view: named on a job's tab (8 shows it on any)
            style = "reverse bold" if v == self.view else "dim"
            text.append(f" {VIEW_TITLES[v]} ", style=style)
        text.append("  ")
        text.append(visible(os.path.basename(self.path) or self.path), style="bold")
        rank = rank_text(self.session.trace.metadata) if self.session is not None else ""
        if rank:
            text.append(f" · {rank}", style="bold")
        if job is not None:
            text.append(f" · {visible(header_of(job))}", style="bold")
        text.append(" · ")
        if self.state == "loading":
            text.append("loading…")
        elif self.state == "error":
            text.append("failed to load", style="bold")
        elif self.session is not None:
            if not self.session.analysed:
                text.append("analysing… · ", style="italic")
            t = self.session.trace
            text.append(
                f"{counted(len(t), 'event')} · {counted(len(t.lanes), 'lane')} · "
                f"{fmt_ns(float(t.end_ns_max - t.start_ns))}"
            )
            if t.warnings:
                text.append(f" · {counted(len(t.warnings), 'warning')}")
            if self.file_change:
                gone = "file deleted or moved" if self.file_change == "vanished" else ""
                text.append(f" · {gone or 'file changed on disk'}", style="bold")
            if self.query_ is not None:
                n = len(self.matches)
                pos = f"{self.match_index + 1}/{n}" if n else "no matches"
                text.append(f" · search {self.query_.describe()}: {pos}", style="bold")
            if self._mark_text:
                text.append(f" · {self._mark_text}")
        status.update(text)

    def on_timeline_changed(self) -> None:
        """The cursor or the marks changed: redraw the status line when its mark text does."""
        model = self.model
        now = distance_text(model.marks, cursor_ns(model)) if model is not None else ""
        if now != self._mark_text:
            self._mark_text = now
            self._update_status()

    def on_regions_view_zoom_to(self, message: RegionsView.ZoomTo) -> None:
        if self.model is None:
            return
        self.model.select(message.row)
        self.model.show_range(message.t0, message.t1)
        self.show_view("timeline")
        self.timeline_view.timeline._sync()

    on_findings_view_zoom_to = on_regions_view_zoom_to  # the same jump, from evidence

    @property
    def timeline_view(self) -> TimelineView:
        return self.query_one(TimelineView)

    # ---- search ----

    def search(self, text: str) -> str:
        """Run a search; returns a one-line outcome for a notification."""
        if self.session is None or self.model is None:
            return "nothing loaded to search"
        try:
            self.query_ = parse_query(text)
        except QueryError as exc:
            return str(exc)
        self.matches = find(self.session.trace, self.query_)
        self.match_index = -1
        if len(self.matches) == 0:
            self._update_status()
            return f"no event names match {self.query_.describe()}"
        self.step_match(1)
        return f"{len(self.matches)} events match {self.query_.describe()}"

    def step_match(self, direction: int) -> bool:
        if self.model is None or len(self.matches) == 0:
            return False
        if self.match_index < 0:
            i = 0 if direction > 0 else len(self.matches) - 1
        else:
            current = int(self.matches[self.match_index])
            if self.model.selected == current:
                i = (self.match_index + direction) % len(self.matches)
            else:
                i = next_match(self.model.trace, self.matches, self.model.selected, direction)
        self.match_index = i
        if self.view != "timeline":
            self.show_view("timeline")
        self.timeline_view.timeline.select_row(int(self.matches[i]))
        self._update_status()
        return True
