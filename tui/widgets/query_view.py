"""View 6: SQL over the open files (DuckDB, the ``[sql]`` extra), as ``attn-tui sql``.

It lives in its own tab, added the first time ``6`` is pressed (a file's tabs and
screenshots stay as they were for those who never ask for it).  Type a query,
⏎ runs it on a worker thread (a new query interrupts the one running); the
result shows as a table whose cells are ``Text`` (names are data, never
markup).  ⏎ on a result row with a ``row`` column shows that event on its
file's timeline (the ``trace`` column says which file).  Without the extra, one
line says how to install it.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static
from textual.worker import Worker, WorkerState

from tui.fmt import fmt_ns
from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.names import clip
from tui.query_data import EXAMPLE, Answer, History, QueryFiles, extra_missing, jump_target
from tui.session import error_line
from tui.sql_cells import cell_text, is_numeric
from tui.widgets.table_window import RowWindow, WindowTable, row_at_cursor

CELL_WIDTH = 60
"""A cell longer than this is clipped (kernel names run to thousands of characters)."""

VIEWS_LINE = (
    "views: events · kernels · ops · regions · lanes · traces (each with a trace "
    "column) · ⏎ runs · ⏎ on a row with a row column shows it on the timeline"
)


class QueryInput(Input):
    """The query field: ↑ / ↓ walk the queries run before; a pasted query keeps all its
    lines (Textual's Input keeps the first), joined by spaces."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.history = History()

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "escape":  # out of the field: 1-8, ? and q are keys again
            event.stop()
            event.prevent_default()
            self.query_ancestor(QueryView).table.focus()
            return
        if event.key in ("up", "down"):
            event.stop()
            event.prevent_default()
            found = self.history.step(-1 if event.key == "up" else 1, self.value)
            if found is not None:
                self.value = found
                self.cursor_position = len(found)
        # other keys: Textual runs Input's own handler after this one (not prevented)

    def _on_paste(self, event: events.Paste) -> None:
        text = " ".join(line.strip() for line in event.text.splitlines() if line.strip())
        if text and self.selection.is_empty:
            self.insert_text_at_cursor(text)
        elif text:
            self.replace(text, *self.selection)
        event.stop()
        event.prevent_default()  # Input's handler would paste the first line again


class QueryView(ReportsErrors, Vertical):
    """The query field, a status line and the result table."""

    BINDINGS = bindings("query")  # every key: tui/keymap.py

    DEFAULT_CSS = """
    QueryView { height: 1fr; }
    QueryView > #query-status { height: auto; max-height: 3; padding: 0 1; background: $panel; }
    QueryView > #query-table { height: 1fr; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.files = QueryFiles()
        self.answer: Answer | None = None
        self.missing = ""
        self.state = "idle"  # idle | running | ready | error | missing
        self._worker: Worker | None = None
        self._panes: list[Any] = []
        self._started = 0.0
        self._rows = RowWindow()  # the answer's rows the table holds
        self._numeric: list[bool] = []  # per column: right-aligned

    def compose(self) -> ComposeResult:
        yield QueryInput(EXAMPLE, placeholder="SELECT ... FROM events ...", id="query-input")
        yield Static(id="query-status")
        yield WindowTable(self._rows, id="query-table", cursor_type="row", zebra_stripes=True)

    @property
    def table(self) -> DataTable:
        return self.query_one("#query-table", DataTable)

    @property
    def field(self) -> Input:
        return self.query_one("#query-input", Input)

    def on_mount(self) -> None:
        self.missing = extra_missing()
        if self.missing:
            self.state = "missing"
            self.field.disabled = True
            self._status(Text(self.missing, style="bold"))
        else:
            self._status(Text(VIEWS_LINE, style="dim"))

    def focus_view(self) -> None:
        (self.table if self.missing else self.field).focus()

    def _status(self, text: Text) -> None:
        self.query_one("#query-status", Static).update(text)

    def update_from(self, panes: list[Any]) -> None:
        """The open files (``TracePane``s); the DB follows them on the next query."""
        self._panes = list(panes)

    # ---- running ----

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run_query(event.value)

    def run_query(self, query: str) -> None:
        if self.missing or not query.strip():
            return
        self.query_one(QueryInput).history.add(query)
        loaded, total = self.files.update(self._panes)
        if not loaded:
            self._status(Text("No file has loaded yet: the query runs once one has.", style="dim"))
            return
        self.files.interrupt()
        self.state = "running"
        waiting = f" ({total - loaded} of {total} still loading)" if loaded < total else ""
        self._status(
            Text(f"Running over {loaded} file{'s' if loaded != 1 else ''}{waiting}…", style="dim")
        )
        files = self.files
        self._started = time.monotonic()
        self._worker = self.run_worker(
            lambda: files.run(query),
            thread=True,
            exclusive=True,
            exit_on_error=False,
            name="query",
            group="query",
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:  # another view's, or a query replaced
            return
        if event.state == WorkerState.SUCCESS and isinstance(event.worker.result, Answer):
            self.show(event.worker.result)
        elif event.state == WorkerState.ERROR:
            self.state = "error"
            err = event.worker.error or RuntimeError("the query failed")
            self._status(Text(error_line(err), style="bold red"))

    # ---- showing ----

    def show(self, answer: Answer) -> None:
        self.state = "ready"
        self.answer = answer
        table = self.table
        table.clear(columns=True)
        numeric = [is_numeric(t) for t in answer.types]
        for name, right in zip(answer.columns, numeric, strict=True):
            table.add_column(
                Text(clip(cell_text(name), CELL_WIDTH), justify="right" if right else "left")
            )
        self._numeric = numeric
        self._fill(0)
        n = len(answer.rows)
        text = Text(f"{n}{'+' if answer.more else ''} row{'s' if n != 1 else ''}", style="bold")
        text.append(f" in {fmt_ns((time.monotonic() - self._started) * 1e9)}")
        if answer.more:
            text.append(f" (the first {n} shown: add a LIMIT or an aggregate)")
        if "row" in answer.columns:
            text.append(" · ⏎ on a row shows that event on the timeline", style="dim")
        self._status(text)
        if n:
            table.focus()

    def _fill(self, around: int) -> None:
        """The table holds a window of the answer's rows around ``around``
        (``table_window``: 5,000 rows took seconds on the UI thread)."""
        answer, table, numeric = self.answer, self.table, self._numeric
        if answer is None:
            return

        def add(i: int) -> None:
            table.add_row(
                *[
                    Text(clip(cell_text(v), CELL_WIDTH), justify="right" if right else "left")
                    for v, right in zip(answer.rows[i], numeric, strict=True)
                ],
                key=str(i),
            )

        self._rows.fill(table, len(answer.rows), around, add)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Near an end of the rows the table holds, hold those around the cursor."""
        answer = self.answer
        index = row_at_cursor(event.data_table)
        if answer is None or index is None or event.row_key.value != str(index):
            return  # none, or from before the window moved
        if self._rows.follows(index):
            self._fill(index)

    # ---- actions ----

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_jump()

    def action_jump(self) -> None:
        """Show the highlighted result row's event on its file's timeline."""
        answer = self.answer
        if answer is None:
            return
        index = row_at_cursor(self.table)
        target = None if index is None else jump_target(answer, index, self.files.labels,
                                                          self.files.files)
        if target is None:
            self.notify(
                "⏎ jumps from a row with a row column (and a trace column when "
                "several files are open)",
                timeout=4,
                markup=False,
            )
            return
        file, row = target
        pane = self._panes[file] if file < len(self._panes) else None
        session = getattr(pane, "session", None)
        if pane is None or session is None or row >= len(session.trace):
            return
        from tui.widgets.regions_view import RegionsView

        t0 = int(session.trace.ts_ns[row])
        t1 = t0 + max(int(session.trace.dur_ns[row]), 1)
        self.app.show_file(file)  # type: ignore[attr-defined]
        pane.post_message(RegionsView.ZoomTo(t0, t1, row))

    def action_edit(self) -> None:
        """Back to the query field."""
        if not self.missing:
            self.field.focus()


async def show_query_tab(app: Any) -> None:
    """Key ``6``: add the Query tab the first time, then show it with its field focused."""
    from textual.content import Content
    from textual.widgets import TabbedContent

    from tui.widgets.kept_tab import KeptTab

    tabs = app.query_one("#files", TabbedContent)
    found = app.query(QueryView)
    if not found:
        await tabs.add_pane(KeptTab(Content("6 Query"), QueryView(id="query-view"), id="query"))
    view = app.query_one(QueryView)
    view.update_from(app.panes)
    app._switch_tab("query")
    app.call_after_refresh(view.focus_view)
