"""The time ruler above the timeline (one line; text from ``tui.ruler``).

With a marked range the corner gives its length, the labels count from its
start, and its cells are drawn reversed (so it shows without colour too)."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from tui.guard import ReportsErrors
from tui.marks import overlay_marks
from tui.names import clip
from tui.ruler import range_cells, ruler_text, span_text
from tui.timeline_model import TimelineModel


class Ruler(ReportsErrors, Widget):
    COMPONENT_CLASSES = {"ruler--corner", "ruler--range"}

    def __init__(self, model: TimelineModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y != 0 or width <= 0:
            return Strip.blank(width, self.rich_style)
        model, vp = self.model, self.model.viewport
        corner = model.label_cells
        left = clip(span_text(vp, model.range), corner - 1).ljust(corner)
        corner_style = self.get_component_rich_style("ruler--corner")
        zero = float(model.range[0]) if model.range is not None else 0.0
        ticks = overlay_marks(ruler_text(vp, zero), vp, model.marks)
        segments = [Segment(left, corner_style)]
        cells = range_cells(vp, model.range)
        if cells is None:
            segments.append(Segment(ticks, self.rich_style))
        else:
            a, b = cells
            marked = self.get_component_rich_style("ruler--range")
            segments += [Segment(ticks[:a], self.rich_style), Segment(ticks[a:b], marked),
                         Segment(ticks[b:], self.rich_style)]  # fmt: skip
        return Strip(segments).adjust_cell_length(width, self.rich_style)
