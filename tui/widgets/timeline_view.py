"""View 1: the ruler, the timeline and the details panel, kept in step."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from tui.guard import ReportsErrors
from tui.timeline_model import TimelineModel
from tui.widgets.details import Details, DetailsKeys
from tui.widgets.ruler import Ruler
from tui.widgets.timeline import Timeline


class TimelineView(ReportsErrors, DetailsKeys, Vertical):  # DetailsKeys: i, y
    def __init__(self, model: TimelineModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model

    def compose(self) -> ComposeResult:
        yield Ruler(self.model, id="ruler")
        yield Timeline(self.model, id="timeline")
        yield Details(id="details")

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def focus_view(self) -> None:
        self.timeline.focus()

    def on_mount(self) -> None:
        self.query_one(Details).show(self.model)

    def on_timeline_changed(self, message: Timeline.Changed) -> None:
        self.query_one(Ruler).refresh()
        self.query_one(Details).show(self.model)
