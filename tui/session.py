"""Everything the app shows about one file, computed off the UI thread (pure).

``load_session`` reads the trace (reporting progress) and returns as soon as the
columns exist, so the timeline can paint; ``Session.analyse`` then builds the
links, regions and op table (seconds on a 1 GB trace), on a background thread
started after that first frame.  They are parts of the session's one
``AnalysedTrace``, which every view of the file (and the Compare view) shares.
A failure in one analysis does not lose the others: the op table, say, shows
its one-line error while the timeline works.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from profiling.analysis.analysed import AnalysedTrace
from profiling.errors import AttnTuiError
from profiling.trace import load_trace
from profiling.trace.model import Trace
from tui.file_watch import FileState
from tui.links import LinkLookup
from tui.ops_table import PreparedOps, Totals, prepared_ops
from tui.regions_data import Region, region_list

if TYPE_CHECKING:
    from tui.timeline_model import TimelineModel

Progress = Callable[[str, float], None]


@dataclass
class Session:
    path: str
    analysis: AnalysedTrace
    regions: list[Region] = field(default_factory=list)
    regions_error: str = ""
    ops: list[dict[str, Any]] | None = None
    ops_totals: Totals | None = None
    ops_error: str = ""
    prepared_ops: PreparedOps | None = None  # the Ops view's rows, columns' widths
    analysed: bool = False  # regions and ops are set (read them only once this is True)
    file_state: FileState | None = None  # the file as it was when loading began
    timeline: TimelineModel | None = None  # made on the loading thread (tui.first_screen)

    @property
    def trace(self) -> Trace:
        return self.analysis.trace

    @cached_property
    def links(self) -> LinkLookup:
        """The timeline's link questions over the analysis (computed on first use)."""
        return LinkLookup(self.analysis)

    def analyse(self, progress: Progress | None = None) -> None:
        """Links, regions and the op table (idempotent; run off the UI thread).

        Never raises for an analysis failure: each one is recorded as its view's
        one-line error."""
        if self.analysed:
            return
        report = progress or (lambda stage, fraction: None)
        report("links", 0.0)
        try:
            self.analysis.links  # noqa: B018 - computes the lazy links once, here
            self.analysis.ops  # noqa: B018 - the op tree too: a view's first launch chains read it
        except Exception as exc:  # noqa: BLE001 - both views need the links
            self.regions_error = self.ops_error = error_line(exc)
            self.analysed = True
            return
        report("regions", 0.3)
        try:
            self.regions = region_list(self.analysis)
        except Exception as exc:  # noqa: BLE001 - shown in the regions view
            self.regions_error = error_line(exc)
        report("op table", 0.4)
        try:
            self.ops, self.ops_totals = key_averages(self.analysis)
            self.prepared_ops = prepared_ops(self.ops, self.ops_totals)
        except Exception as exc:  # noqa: BLE001 - shown in the ops view
            self.ops_error = error_line(exc)
        report("done", 1.0)
        self.analysed = True

    def warm(self) -> None:
        """On a first open (the load wrote the index), what the Findings view, the
        Regions view's GPU event lists and the next commands ask for, computed and
        stored as a headless command's first open does (``profiling.analysis.warm``).
        Run after ``analyse`` on its thread: the views it serves wait for their part
        (``AnalysedTrace.stored``'s lock) rather than compute it again.  Best effort."""
        from tui.loading import should_warm, warm_quietly

        if should_warm(self.trace):
            warm_quietly(self.analysis)


def error_line(exc: BaseException) -> str:
    """The one line the headless commands would print for ``exc``."""
    if isinstance(exc, AttnTuiError):
        return exc.line()
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"{where}{exc.strerror or exc}"
    return f"unexpected {type(exc).__name__}: {exc} (please report this with the file)"


def key_averages(analysed: AnalysedTrace) -> tuple[list[dict[str, Any]], Totals]:
    """torch's op table rows (as dicts) and its two footer totals (the analysis's part)."""
    table = analysed.key_averages
    rows = [r.as_json() for r in table.rows]
    return rows, Totals(table.self_cpu_time_total, table.self_device_time_total)


def load_session(
    path: str | os.PathLike[str], progress: Progress | None = None, *, no_cache: bool = False
) -> Session:
    """Load ``path`` into a session whose analysis is still to run
    (``Session.analyse``).  Raises only for the trace itself (one-line
    ``AttnTuiError``)."""
    state = FileState.of(os.fspath(path))  # before reading: a change while loading shows too
    trace = load_trace(path, progress=progress, use_cache=not no_cache)
    return Session(os.fspath(path), AnalysedTrace(trace), file_state=state)
