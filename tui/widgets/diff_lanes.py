"""The Diff view's two GPU lanes, A above B on the base's time axis, and an axis line.

Drawn as ``Text`` at whatever width the widget has (``tui.diff_data.strip``), so
it re-lays itself out on resize.  Matched kernels are blocks (a pair shares its
glyph, alternating ``█``/``▓``), kernels only in A are ``-`` and only in B are
``+``: the glyph says it, colour only helps.  The table's current row is shown
in reverse video on both lanes.  Labels come from file names: appended as data.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from tui.diff_data import DiffData, strip
from tui.fmt import fmt_time
from tui.guard import ReportsErrors
from tui.names import fit, visible

LABEL_WIDTH = 12


class DiffLanes(ReportsErrors, Widget):
    COMPONENT_CLASSES = {"diff-lanes--match", "diff-lanes--added", "diff-lanes--deleted",
                         "diff-lanes--label", "diff-lanes--idle"}
    DEFAULT_CSS = """
    DiffLanes { height: auto; padding: 0 1; }
    DiffLanes > .diff-lanes--match { color: $primary; }
    DiffLanes > .diff-lanes--added { color: $success; text-style: bold; }
    DiffLanes > .diff-lanes--deleted { color: $error; text-style: bold; }
    DiffLanes > .diff-lanes--label { text-style: bold; }
    DiffLanes > .diff-lanes--idle { color: $foreground-muted; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data: DiffData | None = None
        self.current: int | None = None  # the table's row, shown reversed
        self._strips: dict[tuple[str, int], list[tuple[str, int | None]]] = {}

    def show(self, data: DiffData | None, current: int | None = None) -> None:
        self.data = data
        self.current = current
        self._strips = {}  # the lanes' cells, by side and width: a row move redraws only
        self.refresh(layout=True)

    def select(self, index: int | None) -> None:
        if index != self.current:
            self.current = index
            self.refresh()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"diff-lanes--{name}", partial=True)

    def lanes_text(self, width: int) -> Text:
        """Two lane lines and the axis line, ``width`` cells wide."""
        text = Text(no_wrap=True, overflow="ellipsis")
        data = self.data
        if data is None:
            return text
        cells = max(width - LABEL_WIDTH - 1, 8)
        styles = {"+": self._style("added"), "-": self._style("deleted"),
                  "·": self._style("idle")}
        match = self._style("match")
        for side, lane in (("a", data.a_lane), ("b", data.b_lane)):
            label = getattr(data.diff, side).label
            text.append(fit(f"{side.upper()} {visible(label)}", LABEL_WIDTH),
                        style=self._style("label"))
            text.append(" ")
            key = (side, cells)
            if key not in self._strips:
                self._strips[key] = strip(lane, data.span_us, cells)
            for glyph, index in self._strips[key]:
                style = styles.get(glyph, match)
                if index is not None and index == self.current:
                    style = style + Style(reverse=True)
                text.append(glyph, style=style)
            text.append("\n")
        end = fmt_time(data.span_us, "us")
        axis = "0".ljust(max(cells - len(end), 1)) + end
        text.append(" " * (LABEL_WIDTH + 1) + axis, style=self._style("idle"))
        return text

    def render(self) -> Text:
        return self.lanes_text(max(self.size.width, 24))

    def get_content_height(self, container, viewport, width: int) -> int:
        return 0 if self.data is None else 3
