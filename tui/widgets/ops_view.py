"""View 3: torch's key_averages table, sortable by any column, filterable by name."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from tui.fmt import fmt_us
from tui.guard import ReportsErrors
from tui.names import clip, short_name, visible
from tui.ops_table import (
    COLUMN_KEYS,
    COLUMNS,
    DEFAULT_SORT,
    QueryError,
    Totals,
    cell,
    filter_rows,
    prepare,
    sort_rows,
    visible_columns,
)
from tui.themes import COPY_STYLE


class OpsView(ReportsErrors, Vertical):
    BINDINGS = [
        Binding("o", "next_sort(1)", "Sort by next col."),
        Binding("O", "next_sort(-1)", "Sort by prev col.", show=False),
        Binding("r", "reverse", "Reverse"),
        Binding("f,ctrl+f", "focus_filter", "Filter"),
    ]

    def __init__(
        self,
        rows: list[dict[str, Any]] | None,
        totals: Totals | None = None,
        error: str = "",
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.totals = totals or Totals(0.0, 0.0)  # no analysis: no rows either
        self.all_rows = prepare(rows or [], self.totals)
        self.sort_key = DEFAULT_SORT
        self.descending = True
        self.filter_text = ""
        self.shown: list[dict[str, Any]] = []
        self.columns = COLUMNS

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter ops by name (f); re:<regex> for a regex", id="ops-filter")
        yield DataTable(id="ops-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="ops-name")
        yield Static(id="ops-footer")

    @property
    def table(self) -> DataTable:
        return self.query_one("#ops-table", DataTable)

    def on_mount(self) -> None:
        self.refill()
        footer = self.query_one("#ops-footer", Static)
        if self.error:
            footer.update(Text(self.error, style="bold"))
        else:
            footer.update(
                Text(
                    f"Self CPU time total: {fmt_us(self.totals.self_cpu_us)}\n"
                    f"Self CUDA time total: {fmt_us(self.totals.self_device_us)}"
                )
            )

    def focus_view(self) -> None:
        self.table.focus()

    def refill(self) -> None:
        try:
            rows = filter_rows(self.all_rows, self.filter_text)
        except QueryError as exc:
            self.notify(str(exc), severity="error")
            rows = self.all_rows
        self.shown = sort_rows(rows, self.sort_key, self.descending)
        table = self.table
        table.clear(columns=True)
        columns = self.columns = visible_columns(self.app.size.width)
        for col in columns:
            mark = ""
            if col.key == self.sort_key:
                mark = " ▼" if self.descending else " ▲"
            title = Text(col.title + mark, justify="left" if col.kind == "str" else "right")
            table.add_column(title, key=col.key)
        width = self.app.size.width
        limit = 24 if width < 100 else 30 if width < 120 else 60
        for i, row in enumerate(self.shown):
            cells = []
            for col in columns:
                if col.key == "key":
                    copy = row["key"].startswith(("Memcpy", "Memset"))
                    style = COPY_STYLE["memcpy" if row["key"].startswith("Memcpy") else "memset"]
                    name = clip(short_name(row["key"], limit), limit)
                    cells.append(Text(name, style=style if copy else ""))
                elif col.kind == "str":
                    cells.append(Text(visible(cell(row, col))))
                else:
                    cells.append(Text(cell(row, col), justify="right"))
            table.add_row(*cells, key=str(i))
        table.border_title = (
            f"Ops ({len(self.shown)} of {len(self.all_rows)}) sorted by "
            f"{COLUMNS[COLUMN_KEYS.index(self.sort_key)].title}"
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        label = self.query_one("#ops-name", Static)
        i = event.cursor_row
        if 0 <= i < len(self.shown):
            row = self.shown[i]
            text = Text(f"{row['device_type']}: ", style="bold")
            text.append(visible(row["key"]))
            label.update(text)
        else:
            label.update("")

    def sort_by(self, key: str, descending: bool | None = None) -> None:
        if descending is None:
            descending = not self.descending if key == self.sort_key else True
        self.sort_key = key
        self.descending = descending
        self.refill()

    def action_next_sort(self, step: int) -> None:
        keys = [c.key for c in self.columns]
        i = keys.index(self.sort_key) if self.sort_key in keys else -1
        self.sort_by(keys[(i + step) % len(keys)], True)

    def action_reverse(self) -> None:
        self.sort_by(self.sort_key, not self.descending)

    def action_focus_filter(self) -> None:
        self.query_one("#ops-filter", Input).focus()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self.refill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()
