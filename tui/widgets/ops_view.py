"""View 3: torch's key_averages table, sortable by any column, filterable by name."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from tui.fmt import fmt_us
from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.names import clip, short_name, visible
from tui.ops_table import (
    BY_KEY,
    COLUMN_KEYS,
    COLUMNS,
    DEFAULT_SORT,
    PreparedOps,
    QueryError,
    cell,
    filter_rows,
    layout,
    prepared_ops,
    sort_rows,
)
from tui.themes import COPY_STYLE
from tui.widgets.occurrence_jumps import ShowOccurrences
from tui.widgets.table_window import RowWindow, WindowTable, row_at_cursor

SCROLLBAR = 2
"""Cells the table's vertical scrollbar takes from its width."""
OVER_100 = (
    "Self CUDA % above 100: torch's Self CUDA total leaves out GPU annotations "
    "(attn_fwd on CUDA), whose rows still count the kernels under them."
)


def more_columns(n: int) -> str:
    """The title's pointer to the columns past the window's edge."""
    return f"{n} more column{'s' if n != 1 else ''} → (scroll: ←/→)"


class OpsView(ReportsErrors, Vertical):
    """The op table: the columns that fit the window first (name, device, the
    sorted column, # of Calls always), the rest past its edge (scroll with ←/→);
    the name filter applies each valid pattern and shows a broken one's error
    in one line under it.  The table holds a window of the shown rows around the
    cursor (``table_window``): a trace can name 20,000 ops, and filling the table
    with all of them took 4 s, again at every sort, filter key and resize."""

    BINDINGS = bindings("ops")  # every key: tui/keymap.py

    def __init__(self, ops: PreparedOps | None = None, error: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.error = error
        ops = ops or prepared_ops(None, None)  # no analysis: no rows
        self.totals = ops.totals
        self.all_rows = ops.rows
        self.sort_key = DEFAULT_SORT
        self.descending = True
        self.filter_text = ""  # the last valid filter (the one applied)
        self.filter_error = ""
        self.shown: list[dict[str, Any]] = []
        self.columns = COLUMNS
        self.name_width = 24
        self._width = 0
        self._cell_widths = ops.widths  # over every row: filtering does not move columns
        self._longest = ops.longest
        self._rows = RowWindow()  # the shown rows the table holds
        # every row in each order asked for so far (sort key, descending): a sort or a
        # resize without a filter does not sort 20,000 rows again
        self._orders = {(DEFAULT_SORT, True): ops.first_order}

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter ops by name (f); re:<regex> for a regex", id="ops-filter")
        yield Static(id="ops-filter-error")
        yield WindowTable(self._rows, id="ops-table", cursor_type="row", zebra_stripes=True,
                          fixed_columns=1)  # the name stays when the table scrolls sideways
        yield Static(id="ops-name")
        yield Static(id="ops-footer")

    @property
    def table(self) -> DataTable:
        return self.query_one("#ops-table", DataTable)

    def on_mount(self) -> None:
        self.query_one("#ops-filter-error").display = False
        self.refill()
        footer = self.query_one("#ops-footer", Static)
        if self.error:
            footer.update(Text(self.error, style="bold"))
            return
        text = Text(
            f"Self CPU time total: {fmt_us(self.totals.self_cpu_us)}\n"
            f"Self CUDA time total: {fmt_us(self.totals.self_device_us)}"
        )
        if any(r["self_device_pct"] > 100 for r in self.all_rows):
            text.append("\n" + OVER_100, style="dim")
        footer.update(text)

    def on_resize(self, event: events.Resize) -> None:
        if self.app.size.width != self._width:
            self.refill(row_at_cursor(self.table) or 0)

    def focus_view(self) -> None:
        self.table.focus()

    def refill(self, around: int = 0) -> None:
        """Filter, sort and lay out the rows again; the cursor on shown row ``around``."""
        order = (self.sort_key, self.descending)
        if self.filter_text.strip():
            self.shown = sort_rows(filter_rows(self.all_rows, self.filter_text), *order)
        else:
            if order not in self._orders:
                self._orders[order] = sort_rows(self.all_rows, *order)
            self.shown = self._orders[order]
        self._width = self.app.size.width
        widths = {  # the sorted column's title gains an arrow (2 cells)
            k: max(w, len(BY_KEY[k].title) + (2 if k == self.sort_key else 0))
            for k, w in self._cell_widths.items()
        }
        plan = layout(widths, self._width - SCROLLBAR, self.sort_key, self._longest)
        self.columns, self.name_width = plan.columns, plan.name_width
        table = self.table
        table.clear(columns=True)
        for col in self.columns:
            mark = ""
            if col.key == self.sort_key:
                mark = " ▼" if self.descending else " ▲"
            title = Text(col.title + mark, justify="left" if col.kind == "str" else "right")
            width = self.name_width if col.key == "key" else widths[col.key]
            table.add_column(title, key=col.key, width=width)
        self._fill(around)
        table.border_title = (
            f"Ops ({len(self.shown)} of {len(self.all_rows)}) sorted by "
            f"{BY_KEY[self.sort_key].title}"
            + (f" · {more_columns(len(plan.overflow))}" if plan.overflow else "")
        )

    def _fill(self, around: int) -> None:
        """The table holds the shown rows of the window around ``around``."""
        table = self.table

        def add(i: int) -> None:
            table.add_row(*self._cells(self.shown[i]), key=str(i))

        self._rows.fill(table, len(self.shown), around, add)

    def _cells(self, row: dict[str, Any]) -> list[Text]:
        cells = []
        limit = self.name_width
        for col in self.columns:
            if col.key == "key":
                copy = row["key"].startswith(("Memcpy", "Memset"))
                style = COPY_STYLE["memcpy" if row["key"].startswith("Memcpy") else "memset"]
                name = clip(short_name(row["key"], limit), limit)
                cells.append(Text(name, style=style if copy else ""))
            elif col.kind == "str":
                cells.append(Text(visible(cell(row, col))))
            else:
                cells.append(Text(cell(row, col), justify="right"))
        return cells

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The full name of the row under the cursor below the table; near an end of
        the rows the table holds, hold those around the cursor."""
        label = self.query_one("#ops-name", Static)
        i = row_at_cursor(event.data_table)
        if i is None or not 0 <= i < len(self.shown):
            label.update("")
            return
        if event.row_key.value != str(i):
            return  # from before the window moved: the cursor is elsewhere now
        row = self.shown[i]
        text = Text(f"{row['device_type']}: ", style="bold")
        text.append(visible(row["key"]))
        label.update(text)
        if self._rows.follows(i):
            self._fill(i)

    def sort_by(self, key: str, descending: bool | None = None) -> None:
        if descending is None:
            descending = not self.descending if key == self.sort_key else True
        self.sort_key = key
        self.descending = descending
        self.refill()

    def action_sort_by(self, key: str) -> None:
        """Sort by ``key`` (the palette's "Ops: sort by ..."); again: reverse."""
        if key in COLUMN_KEYS:
            self.sort_by(key)

    def action_next_sort(self, step: int) -> None:
        """The next / previous column in the table's full order, shown or not."""
        i = COLUMN_KEYS.index(self.sort_key)
        self.sort_by(COLUMN_KEYS[(i + step) % len(COLUMN_KEYS)], True)

    def action_reverse(self) -> None:
        self.sort_by(self.sort_key, not self.descending)

    def action_focus_filter(self) -> None:
        self.query_one("#ops-filter", Input).focus()

    def action_focus_table(self) -> None:
        self.table.focus()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def on_input_changed(self, event: Input.Changed) -> None:
        """Apply the pattern when it is valid; a broken one (half-typed, say) shows
        its error in the line below and the last valid filter stays."""
        try:
            filter_rows(self.all_rows[:1], event.value)
        except QueryError as exc:
            self._show_filter_error(str(exc))
            return
        self._show_filter_error("")
        self.filter_text = event.value
        self.refill()

    def _show_filter_error(self, message: str) -> None:
        self.filter_error = message
        line = self.query_one("#ops-filter-error", Static)
        line.display = bool(message)
        if message:
            text = Text(visible(message), style="bold")
            text.append("  (the last valid filter stays applied)", style="dim")
            line.update(text)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """⏎ on a row: every occurrence of the op on the timeline (a list)."""
        i = row_at_cursor(event.data_table)
        if i is not None and 0 <= i < len(self.shown):
            row = self.shown[i]
            lanes = "cpu" if row["device_type"] == "CPU" else "gpu"
            self.post_message(ShowOccurrences(row["key"], lanes))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()
