"""The details panel under the timeline: the selected event, in full."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.details import describe
from tui.guard import ReportsErrors
from tui.names import visible
from tui.timeline_model import TimelineModel

HINT = (
    "No event selected: h/l (or click) select events on the cursor row, j/k move rows, "
    "⏎ folds, w/s zoom, a/d pan, ? shows every key."
)


class Details(ReportsErrors, Static):
    """Label/value lines from ``tui.details.describe`` as plain ``Text`` (no markup)."""

    def show(self, model: TimelineModel) -> None:
        row = model.selected
        if row < 0:
            text = Text(HINT, style="dim")
            warnings = model.trace.warnings
            if warnings:
                text.append(
                    f"\nThe loader repaired this file ({len(warnings)} notes): ", style="bold"
                )
                text.append("; ".join(visible(w) for w in warnings[:3]))
                if len(warnings) > 3:
                    text.append(" …")
            self.update(text)
            return
        launch, op, gpu = model.linked(row)
        lines = describe(model.trace, row, launch, op, gpu, origin=model.origin)
        text = Text(no_wrap=False, overflow="fold")
        width = max(len(k) for k, _ in lines)
        for i, (key, value) in enumerate(lines):
            if i:
                text.append("\n")
            text.append(key.rjust(width) + "  ", style="bold")
            text.append(value, style="bold" if key == "name" else "")
        self.update(text)
