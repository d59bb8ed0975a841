"""The range panel under the timeline: what the marked range holds (``m``).

Shown only while a range is marked.  Its content is ``tui.range_data``'s (the
numbers of ``attn-tui slices`` over the same range), rebuilt when the range
changes, not on every redraw of the timeline.  Names are data: every cell is a
``Text``, never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.range_data import COLUMNS, RangeReport, range_report
from tui.timeline_model import TimelineModel
from tui.widgets.occurrence_jumps import ShowOccurrences
from tui.widgets.table_window import RowWindow, WindowTable, row_at_cursor

_LEFT = ("Lane", "Name")


class RangePanel(ReportsErrors, Vertical):
    """A headline (range, length, GPU busy %, Memcpy/Memset totals) over a table
    of lane kind and name: count, total inside the range, avg, min, max, share."""

    BINDINGS = bindings("range")  # esc: back to the timeline (tui/keymap.py)

    def __init__(self, model: TimelineModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.shown: tuple[int, int] | None = None
        self.report: RangeReport | None = None
        self._rows = RowWindow()  # the report's rows the table holds

    def compose(self) -> ComposeResult:
        yield Static(id="range-headline")
        table: DataTable = WindowTable(self._rows, id="range-table", cursor_type="row",
                                       zebra_stripes=True)
        for title in COLUMNS:
            table.add_column(Text(title, justify="left" if title in _LEFT else "right"), key=title)
        yield table

    def on_mount(self) -> None:
        self.sync()

    def action_leave(self) -> None:
        """From the table back to the timeline above."""
        focus_view = getattr(self.parent, "focus_view", None)  # the TimelineView
        if focus_view is not None:
            focus_view()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """⏎ on a row: every occurrence of its name on its kind of lane (a list)."""
        report = self.report
        index = row_at_cursor(event.data_table)
        if report is not None and index is not None and 0 <= index < len(report.names):
            lanes = report.rows[index][0].lower()
            origin, shown = self.model.trace.start_ns, self.shown  # ns from the first event
            within = None if shown is None else (origin + shown[0], origin + shown[1])
            self.post_message(ShowOccurrences(report.names[index], lanes, within))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Near an end of the rows the table holds, hold those around the cursor."""
        if event.row_key is None or event.row_key.value is None:
            return
        index = int(event.row_key.value)
        if row_at_cursor(event.data_table) == index and self._rows.follows(index):
            self._fill(index)

    def _fill(self, around: int) -> None:
        """The table holds a window of the report's rows around ``around``
        (``table_window``: a range over a trace with stacks can hold 20,000 names)."""
        report = self.report
        table = self.query_one("#range-table", DataTable)
        if report is None:
            table.clear()
            return

        def add(i: int) -> None:
            table.add_row(*(Text(cell, justify="left" if title in _LEFT else "right")
                            for title, cell in zip(COLUMNS, report.rows[i], strict=True)),
                          key=str(i))

        self._rows.fill(table, len(report.rows), around, add)

    def sync(self) -> None:
        """Show the model's range (fold away without one); rebuild only when it changed.

        Without a range the panel is folded by a class, not ``display``: the
        details panel sets its siblings' ``display`` when it expands and collapses."""
        rng = self.model.range
        self.set_class(rng is None, "-none")
        self.query_one("#range-table", DataTable).can_focus = rng is not None
        if rng is None or rng == self.shown:
            return
        self.shown = rng
        self.report = range_report(self.model.trace, rng[0], rng[1])
        self.query_one("#range-headline", Static).update(Text(self.report.headline))
        self._fill(0)
