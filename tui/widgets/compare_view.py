"""View 4: every open file side by side: the ``attn-tui compare`` table and a bar chart.

It lives in its own tab beside the files, because it belongs to none of them.
The comparison runs on a worker thread once every tab has finished loading (a
failed tab is a failed row, not an error of the view), and again when a tab
reloads; until then the view says what it waits for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.console import JustifyMethod
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from tui.compare_data import DEFAULT_REGION, CompareResult, Row, Source, compare_sources, rows
from tui.compare_table import COLUMNS, NUMERIC_COLUMNS
from tui.guard import ReportsErrors
from tui.names import clip, short_name, visible
from tui.session import Session, error_line
from tui.themes import COPY_STYLE
from tui.widgets.compare_chart import CompareChart

_COPY_COLUMNS = {"memcpy": "memcpy", "memset": "memset"}


def _justify(column: str) -> JustifyMethod:
    return "right" if column in NUMERIC_COLUMNS else "left"


class PaneLike(Protocol):
    """What the view reads of a file tab (``TracePane``), without importing it."""

    path: str
    state: str  # loading | ready | error
    error: str
    session: Session | None


def source_of(pane: PaneLike) -> Source | None:
    """The comparison's input for one tab; None while it still loads."""
    if pane.state == "loading":
        return None
    session = pane.session
    if pane.state != "ready" or session is None:
        return Source(pane.path, error=pane.error or "failed to load")
    return Source(pane.path, session.analysis)


class CompareView(ReportsErrors, Vertical):
    """The compare table (the headless command's cells), the highlighted row in
    full, and the chart."""

    def __init__(self, region: str = DEFAULT_REGION, **kwargs) -> None:
        super().__init__(**kwargs)
        self.region_name = region
        self.result: CompareResult | None = None
        self.rows: list[Row] = []
        self.state = "idle"  # idle | waiting | running | ready | error
        self._inputs: tuple[int, ...] = ()
        self._worker: Worker | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="compare-status")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True,
                        fixed_columns=1)  # the trace stays when the table scrolls sideways
        yield Static(id="compare-row")
        yield CompareChart(id="compare-chart")

    @property
    def table(self) -> DataTable:
        return self.query_one("#compare-table", DataTable)

    def on_mount(self) -> None:
        table = self.table
        table.border_title = "Compare · the attn-tui compare table"
        for col in COLUMNS:
            table.add_column(Text(" " + col, justify=_justify(col)), key=col)
        self._status(Text("Press 4 to compare the open files.", style="dim"))

    def focus_view(self) -> None:
        self.table.focus()

    def _status(self, text: Text) -> None:
        self.query_one("#compare-status", Static).update(text)

    # ---- running the comparison ----

    def update_from(self, panes: Sequence[PaneLike]) -> None:
        """Compare the tabs once all have settled; again only when one has changed."""
        sources = [source_of(p) for p in panes]
        waiting = sum(s is None for s in sources)
        if waiting:
            self.state = "waiting"
            self._status(
                Text(f"Waiting for {waiting} of {len(panes)} files to load…", style="dim")
            )
            return
        ready = [s for s in sources if s is not None]
        key = tuple(id(s.analysed) if s.analysed is not None else -1 for s in ready)
        if key == self._inputs and self.state in ("running", "ready"):
            return
        self._inputs = key
        self.state = "running"
        self._status(Text(f"Comparing {len(ready)} files…", style="dim"))
        region = self.region_name
        self._worker = self.run_worker(
            lambda: compare_sources(ready, region), thread=True, exclusive=True,
            exit_on_error=False, name="compare", group="compare",
        )  # fmt: skip

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:  # another view's, or superseded by a reload
            return
        result = event.worker.result
        if event.state == WorkerState.SUCCESS and isinstance(result, CompareResult):
            self.show_result(result)
        elif event.state == WorkerState.ERROR:
            self.state = "error"
            self._inputs = ()
            err = event.worker.error or RuntimeError("compare failed")
            self._status(Text(f"compare failed: {error_line(err)}", style="bold"))

    # ---- showing it ----

    def show_result(self, result: CompareResult) -> None:
        self.state = "ready"
        self.result = result
        self.rows = rows(result)
        table = self.table
        table.clear()
        width = self.app.size.width  # at 80 cells the implementation gives up room to "vs first"
        limit = 12 if width < 100 else 20 if width < 120 else 32
        for i, row in enumerate(self.rows):
            table.add_row(*self._cells(row, limit), key=str(i))
        ok = len(result.entries) - len(result.failed)
        text = Text(f"{ok} of {len(result.entries)} files compared on region ", style="bold")
        text.append(visible(result.region), style="bold")
        text.append(
            " · averages per instance; vs first = GPU time per instance over the first file's"
        )
        for note in result.warnings:
            text.append("\n" + visible(note), style="dim")
        self._status(text)
        self.query_one(CompareChart).show(result)
        self._describe(0)

    def _cells(self, row: Row, limit: int) -> list[Text]:
        failed = row.region is None
        cells = []
        for col, value in zip(COLUMNS, row.cells, strict=True):
            shown = visible(value)
            if col == "implementation":
                shown = clip(shown, limit)
            style = ""
            if failed and col == "implementation":
                style = "bold red"
            elif col in _COPY_COLUMNS and value not in ("", "0"):
                style = COPY_STYLE[_COPY_COLUMNS[col]]
            cells.append(Text(shown, style=style, justify=_justify(col)))
        return cells

    def _describe(self, index: int) -> None:
        """The highlighted row in words: the implementation in full, or the error."""
        label = self.query_one("#compare-row", Static)
        if not 0 <= index < len(self.rows):
            label.update("")
            return
        row = self.rows[index]
        text = Text(visible(row.entry.label), style="bold")
        text.append(f" ({visible(row.entry.path)}): ")
        if row.region is None:
            text.append("failed to load: ", style="bold red")
            text.append(visible(row.entry.error))
        else:
            impl = row.region.implementation
            text.append(visible(impl.name) or "implementation unknown")
            if impl.evidence:
                text.append(f" · {short_name(impl.evidence, 80)}", style="dim")
        label.update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._describe(event.cursor_row)
