"""The occurrences of one name (⏎ on an Ops row, a Regions GPU event, a range-panel
row; ``o`` on the timeline): start, duration, lane and launching op of each,
in time order.  ⏎ or ``z`` closes the list on the chosen one (the timeline shows
it, and ``n`` / ``N`` then step through them all); esc closes it.

The content is ``tui.occurrences``'s; names are data: every cell is a ``Text``.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from tui.keymap import bindings
from tui.occurrences import OccurrenceList

COLUMNS = ("#", "start", "duration", "lane", "launched by / inside")
_RIGHT = {"#", "start", "duration"}


class OccurrencesScreen(ModalScreen[int | None]):
    """Dismissed with the chosen occurrence's index (into ``found.rows``), or None."""

    DEFAULT_CSS = """
    OccurrencesScreen { align: center middle; }
    #occurrences-box {
        width: 100%; max-width: 140; height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    #occurrences-table { height: 1fr; }
    #occurrences-chain { height: auto; color: $text-muted; }
    """

    BINDINGS = bindings("occurrences")  # z, esc (tui/keymap.py); ⏎ is the table's own

    def __init__(self, found: OccurrenceList) -> None:
        super().__init__()
        self.found = found

    def compose(self) -> ComposeResult:
        with Vertical(id="occurrences-box") as box:
            box.border_title = escape(self.found.title)  # titles are markup; names are data
            table: DataTable = DataTable(id="occurrences-table", cursor_type="row",
                                         zebra_stripes=True)  # fmt: skip
            for title in COLUMNS:
                table.add_column(Text(title, justify="right" if title in _RIGHT else "left"))
            for i, row in enumerate(self.found.table):
                cells = zip(COLUMNS, row, strict=True)
                table.add_row(*(Text(c, justify="right" if t in _RIGHT else "left")
                                for t, c in cells), key=str(i))  # fmt: skip
            yield table
            yield Static(id="occurrences-chain")

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted occurrence's whole launch chain under the table (the
        column shows what fits)."""
        full = self.found.full
        text = full[event.cursor_row] if 0 <= event.cursor_row < len(full) else ""
        self.query_one("#occurrences-chain", Static).update(Text(text))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.dismiss(event.cursor_row)

    def action_choose(self) -> None:
        table = self.query_one(DataTable)
        if self.found.table:
            self.dismiss(table.cursor_row)

    def action_close(self) -> None:
        self.dismiss(None)
