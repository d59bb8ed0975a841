"""View 1: the ruler, the timeline and the details panel, kept in step."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.timeline_model import TimelineModel
from tui.widgets.details import Details, DetailsKeys
from tui.widgets.range_panel import RangePanel
from tui.widgets.ruler import Ruler
from tui.widgets.timeline import Timeline


class TimelineView(ReportsErrors, DetailsKeys, Vertical):  # DetailsKeys: i, y
    """The timeline's keys are bound here, on the view, so they work wherever the
    focus is in it: on the timeline, or on the details panel (whose own keys,
    j/k and the page keys, scroll it while it has the focus; esc leaves it)."""

    BINDINGS = bindings("timeline", via="timeline")

    def __init__(self, model: TimelineModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model

    def compose(self) -> ComposeResult:
        yield Ruler(self.model, id="ruler")
        yield Timeline(self.model, id="timeline")
        yield Details(id="details")
        yield RangePanel(self.model, id="range-panel")

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def focus_view(self) -> None:
        self.timeline.focus()

    async def action_timeline(self, action: str) -> None:
        """Run one of the timeline's actions (a key bound here)."""
        await self.timeline.run_action(action)

    def on_mount(self) -> None:
        self.query_one(Details).show(self.model)

    def on_timeline_changed(self, message: Timeline.Changed) -> None:
        self.query_one(Ruler).refresh()
        details = self.query_one(Details)
        details.show(self.model)
        ranged = self.model.range is not None
        if ranged != details.has_class("-range"):
            # the range panel unfolds or folds: the next frame lays the screen out anew
            # (without this it first repaints the old layout, a frame more at 1 M events);
            # the class is the details' own, as restyling the whole view cost ~10 ms
            self.screen.refresh(layout=True, repaint=False)
            details.set_class(ranged, "-range")
        self.query_one(RangePanel).sync()
