"""From a name to every place it happens (issue 11 item 4), on the file's pane.

Any view posts ``ShowOccurrences(name, lanes)`` (⏎ on an Ops row, a Regions GPU
event or a range-panel row; ``o`` on the timeline).  The pane (``TracePane``
mixes in ``OccurrenceJumps``) opens the list; the chosen occurrence is shown on
the timeline, and every occurrence becomes the pane's match list, so ``n`` /
``N`` step through them exactly as through search matches (``tui.search``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from textual.message import Message

from tui.occurrences import occurrence_list
from tui.search import Query

if TYPE_CHECKING:
    from tui.session import Session
    from tui.timeline_model import TimelineModel
    from tui.widgets.timeline_view import TimelineView

LIST_WIDTH = 140
"""The list's widest (``OccurrencesScreen``'s max-width): its launch chains fit in it."""
CONTEXT = 4.0
"""A jump from the list shows the occurrence over a fifth of the window, centred."""


class ShowOccurrences(Message):
    """List the occurrences of ``name`` on ``lanes`` (``all``, ``cpu`` or ``gpu``);
    from a range-panel row, only those in the range (``within``, absolute ns)."""

    def __init__(self, name: str, lanes: str = "all",
                 within: tuple[int, int] | None = None) -> None:
        super().__init__()
        self.name = name
        self.lanes = lanes
        self.within = within


class OccurrenceJumps:
    """Mixed into ``TracePane``: the list, the jump, and ``n``/``N`` over the list."""

    session: Session | None
    model: TimelineModel | None
    query_: Query | None
    matches: np.ndarray
    match_index: int

    if TYPE_CHECKING:

        @property
        def timeline_view(self) -> TimelineView: ...
        def show_view(self, view: str) -> None: ...
        def _update_status(self) -> None: ...
        def notify(self, message: str, **kwargs) -> None: ...

    def on_show_occurrences(self, message: ShowOccurrences) -> None:
        from tui.screens.occurrences import OccurrencesScreen

        message.stop()
        if self.session is None or self.model is None:
            return
        width = min(self.app.size.width, LIST_WIDTH)  # type: ignore[attr-defined]
        found = occurrence_list(self.session.trace, self.model.links, message.name,
                                message.lanes, width=width, within=message.within)  # fmt: skip
        if not len(found.rows):
            self.notify("No events of that name on the timeline", severity="warning", timeout=3)
            return

        def chosen(index: int | None) -> None:
            if index is not None:
                self.jump_to_occurrence(found.rows, index, message.name)

        self.app.push_screen(OccurrencesScreen(found), chosen)  # type: ignore[attr-defined]

    def jump_to_occurrence(self, rows: np.ndarray, index: int, name: str) -> None:
        """Show occurrence ``index`` of ``rows`` on the timeline (zoomed to it with
        some context); ``n`` / ``N`` step through ``rows`` from there."""
        model = self.model
        if model is None or not 0 <= index < len(rows):
            return
        self.query_ = Query(name, False, label=f"occurrences of {name!r}")
        self.matches = rows
        self.match_index = index
        row = int(rows[index])
        self.show_view("timeline")
        model.select(row)
        t0, t1 = model.rel(row)
        pad = max(t1 - t0, 1.0) * (CONTEXT - 1) / 2
        model.viewport.show(t0 - pad, t1 + pad, margin=0.0)
        model.version += 1
        self.timeline_view.timeline._sync()
        self._update_status()
