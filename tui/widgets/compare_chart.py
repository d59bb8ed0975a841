"""The compare bar chart: GPU time per instance of each open file, one bar each.

Drawn as Unicode eighth blocks in Rich ``Text`` (names appended as data, never
markup) at whatever width the widget has, so it re-lays itself out on resize
and exports to SVG unchanged.  Colours come from component classes, so the
light and dark themes both read.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from tui.compare_data import CompareResult, chart_lines
from tui.guard import ReportsErrors
from tui.themes import COPY_STYLE


class CompareChart(ReportsErrors, Widget):
    COMPONENT_CLASSES = {
        "compare-chart--bar",
        "compare-chart--label",
        "compare-chart--impl",
        "compare-chart--failed",
    }

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.result: CompareResult | None = None

    def show(self, result: CompareResult | None) -> None:
        self.result = result
        self.refresh(layout=True)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"compare-chart--{name}", partial=True)

    def chart_text(self, width: int) -> Text:
        """The chart as ``Text``: a title line, then one line per bar."""
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.result is None:
            return text
        lines = chart_lines(self.result, width)
        text.append(f"GPU time per {self.result.region} instance (average)", style="bold")
        for line in lines:
            text.append("\n")
            text.append(line.label, style=self._style("label"))
            text.append(" ")
            if line.error:
                text.append(line.error, style=self._style("failed"))
                continue
            text.append(line.bar, style=self._style("bar"))
            text.append(line.value)
            text.append("  ")
            text.append(line.implementation, style=self._style("impl"))
            text.append(line.copies, style=COPY_STYLE["memcpy"])
        return text

    def render(self) -> Text:
        return self.chart_text(max(self.size.width, 20))

    def get_content_height(self, container, viewport, width: int) -> int:
        if self.result is None:
            return 0
        return 1 + len(chart_lines(self.result, max(width, 20)))
