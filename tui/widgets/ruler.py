"""The time ruler above the timeline (one line; text from ``tui.ruler``)."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from tui.guard import ReportsErrors
from tui.names import clip
from tui.ruler import ruler_text, span_text
from tui.timeline_model import TimelineModel


class Ruler(ReportsErrors, Widget):
    COMPONENT_CLASSES = {"ruler--corner"}

    def __init__(self, model: TimelineModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y != 0 or width <= 0:
            return Strip.blank(width, self.rich_style)
        corner = self.model.label_cells
        left = clip(span_text(self.model.viewport), corner - 1).ljust(corner)
        corner_style = self.get_component_rich_style("ruler--corner")
        ticks = ruler_text(self.model.viewport)
        segments = [Segment(left, corner_style), Segment(ticks, self.rich_style)]
        return Strip(segments).adjust_cell_length(width, self.rich_style)
