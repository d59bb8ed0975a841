"""View 8: a job's ranks side by side, where each rank's GPU time went, and stragglers.

The per-rank table is ``attn-tui ranks`` (communication, compute, their overlap,
idle time, copies, each rank's wait in collectives); under it the straggler
items (per step and per region instance: the slowest rank and its excess over
the median), the findings and the collectives whose ranks arrived furthest
apart.  ``⏎``/``z`` shows the row on the timeline: a rank's first GPU event, a
straggler's instance on the slowest rank.  The report is computed on a worker
thread the first time the view is shown (``tui.ranks_data``).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from tui.guard import ReportsErrors
from tui.job_session import job_of
from tui.keymap import bindings
from tui.names import visible
from tui.ranks_data import (
    RANK_COLUMNS,
    STRAGGLER_COLUMNS,
    RanksData,
    bar_legend,
    collective_lines,
    rank_cells,
    ranks_data,
    straggler_cells,
    time_bar,
)
from tui.session import error_line
from tui.themes import SEVERITY_STYLE
from tui.widgets.regions_view import RegionsView
from tui.widgets.table_focus import RemembersTableFocus

_LEFT = {"device", "item", "measure", "where the time went"}
BAR_WIDTH = 24


class RanksView(ReportsErrors, RemembersTableFocus, Vertical):
    """Ranks table, stragglers table, findings and collectives below."""

    BINDINGS = bindings("ranks")  # every key: tui/keymap.py

    def __init__(self, session: Any, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.data: RanksData | None = None
        self.error = ""
        self._last_focus = "ranks-table"

    def compose(self) -> ComposeResult:
        yield Static(id="ranks-header")
        # the rank and the item stay when a table scrolls sideways
        yield DataTable(id="ranks-table", cursor_type="row", fixed_columns=1)
        yield DataTable(id="stragglers-table", cursor_type="row", fixed_columns=1)
        # always on screen below the tables, scrolled on its own (tab reaches it)
        with VerticalScroll(id="ranks-notes-box"):
            yield Static(id="ranks-notes")

    def on_mount(self) -> None:
        for table_id, columns in (("ranks-table", RANK_COLUMNS),
                                  ("stragglers-table", STRAGGLER_COLUMNS)):
            table = self.query_one(f"#{table_id}", DataTable)
            for label in columns:
                table.add_column(Text(label) if label in _LEFT else
                                 Text(label, justify="right"), key=label)
        self.query_one("#ranks-table", DataTable).border_title = "Ranks · computing…"
        self.query_one("#stragglers-table", DataTable).border_title = "Stragglers"
        self.run_worker(lambda: ranks_data(self.session), thread=True, exit_on_error=False,
                        name="ranks", group="ranks")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "ranks":
            return
        if event.state == WorkerState.SUCCESS and isinstance(event.worker.result, RanksData):
            self.show(event.worker.result)
        elif event.state == WorkerState.ERROR:
            self.error = error_line(event.worker.error or RuntimeError("ranks failed"))
            self.query_one("#ranks-table", DataTable).border_title = "Ranks · failed"
            self.query_one("#ranks-header", Static).update(Text(self.error, style="bold"))

    def show(self, data: RanksData) -> None:
        self.data = data
        header = Text(" " + visible(data.header) + "\n ")
        if data.warning:
            header.append(data.warning + "\n ", style="bold yellow")
        header.append_text(Text.assemble(*bar_legend()))
        header.append("(bars: each rank's span, on the longest's scale)", style="dim")
        self.query_one("#ranks-header", Static).update(header)
        table = self.query_one("#ranks-table", DataTable)
        table.clear()
        scale = max((r["span_us"] for r in data.ranks), default=0.0)
        for i, row in enumerate(data.ranks):
            cells = [Text(visible(c), justify="left" if j == 1 else "right")
                     for j, c in enumerate(rank_cells(row))]
            cells.append(Text.assemble(*time_bar(row, scale, BAR_WIDTH)))
            table.add_row(*cells, key=str(i))
        table.border_title = f"Ranks ({len(data.ranks)}) · ⏎/z timeline"
        slow = self.query_one("#stragglers-table", DataTable)
        slow.clear()
        for i, s in enumerate(data.stragglers):
            slow.add_row(*(Text(visible(c), justify="left" if j < 2 else "right")
                           for j, c in enumerate(straggler_cells(s))), key=str(i))
        slow.border_title = (f"Stragglers ({len(data.stragglers)}) · per step: busy = step "
                             "minus collective wait · ⏎/z the slowest rank's")
        self.query_one("#ranks-notes", Static).update(self._notes(data))

    def _notes(self, data: RanksData) -> Text:
        text = Text()
        for f in data.findings:
            text.append(f"{f.severity}: ", style=SEVERITY_STYLE.get(f.severity, "bold"))
            text.append(visible(f.title), style="bold")
            text.append(f" ({visible(f.detail)})\n", style="dim")
        ranks = [int(r["rank"] or 0) for r in data.ranks]
        lines = collective_lines(data, ranks)
        if lines:
            text.append("Collectives, ranks furthest apart (wait: last arrival minus the "
                        "rank's start):\n", style="bold")
            for line in lines:
                text.append("  " + visible(line) + "\n")
        if not data.findings and not lines:
            text.append("No straggler finding and no collective across ranks.", style="dim")
        return text

    # ---- actions ----

    def action_zoom(self) -> None:
        """Show the highlighted rank's first GPU event, or the straggler's instance."""
        data = self.data
        if data is None:
            return
        slow = self.query_one("#stragglers-table", DataTable)
        if slow.has_focus and data.stragglers:
            s = data.stragglers[min(max(slow.cursor_row, 0), len(data.stragglers) - 1)]
            ranks = [int(r["rank"] or 0) for r in data.ranks]
            row = s.rows[ranks.index(s.slowest)]
        else:
            table = self.query_one("#ranks-table", DataTable)
            row = data.jump_rows[min(max(table.cursor_row, 0), len(data.jump_rows) - 1)]
        trace = self.session.analysis.trace
        if not 0 <= row < len(trace):
            self.notify("No event to show", severity="warning", timeout=3)
            return
        t0 = int(trace.ts_ns[row])
        self.post_message(RegionsView.ZoomTo(t0, t0 + max(int(trace.dur_ns[row]), 1), row))

    def action_focus_rank(self) -> None:
        """The highlighted rank alone on the timeline: its CPU and GPU groups open, every
        other rank's groups folded (⏎ on a group opens it again), the view on its span."""
        data, model = self.data, self._model()
        job = job_of(self.session)
        if data is None or model is None or job is None:
            self.notify("Focus needs a job of several ranks", severity="warning", timeout=3)
            return
        table = self.query_one("#ranks-table", DataTable)
        r = job.ranks[min(max(table.cursor_row, 0), len(job.ranks) - 1)]
        mine = range(*r.groups)
        groups = model.trace.groups
        model.folds.groups_folded = {g.index for g in groups
                                     if g.index not in mine or g.kind == "other"}
        model.rebuild()
        trace, lo, hi = model.trace, *r.rows
        row = data.jump_rows[job.ranks.index(r)]
        if hi <= lo or row < 0:
            return
        t0 = int(trace.ts_ns[lo:hi].min())
        t1 = int((trace.ts_ns[lo:hi] + trace.dur_ns[lo:hi]).max())
        self.post_message(RegionsView.ZoomTo(t0, max(t1, t0 + 1), row))

    def action_align(self) -> None:
        """``a``: the job's ranks on the other alignment (clock ⇄ first ProfilerStep),
        re-merged by the pane (``tui.widgets.job_alignment``)."""
        for node in self.ancestors:
            realign = getattr(node, "realign", None)
            if callable(realign):
                realign()
                return

    def _model(self) -> Any:
        """The timeline model of the pane this view is in (the pane owns it)."""
        for node in self.ancestors:
            model = getattr(node, "model", None)
            if model is not None and hasattr(model, "folds"):
                return model
        return None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_zoom()
