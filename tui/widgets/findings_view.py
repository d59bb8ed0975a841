"""View 5: what an expert would point out in this trace, each point with its evidence.

A view of its own rather than a panel in the Regions view: a finding needs its
title, what to try and a list of evidence events, and the Regions view already
stacks three tables (at 80x24 a fourth would leave each a line or two).
Findings also span regions (the attention region, or the profiler steps of a
trace without one), so they read best on their own page.  The findings are
computed on a worker thread the first time the view is shown (the links too,
if the tab has not made them yet).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from profiling.analysis.findings import Finding, TraceFindings
from profiling.trace.model import Trace
from tui.findings_data import (
    EVIDENCE_COLUMNS,
    FINDING_COLUMNS,
    evidence_cells,
    find,
    finding_cells,
    jump_of,
)
from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.links import LinkLookup
from tui.names import visible
from tui.session import error_line
from tui.themes import COPY_STYLE, SEVERITY_STYLE
from tui.widgets.regions_view import RegionsView
from tui.widgets.table_focus import RemembersTableFocus

_RIGHT = {"evidence", "start", "duration"}


def _header(label: str) -> Text:
    return Text(" " + label, justify="right") if label in _RIGHT else Text(label)


class FindingsView(ReportsErrors, RemembersTableFocus, Vertical):
    """Findings table, the chosen finding's detail and suggestion, its evidence.

    ``⏎`` on a finding moves to its evidence; ``⏎`` or ``z`` on evidence shows the
    event on the timeline (``z`` on a finding shows its first evidence).
    """

    BINDINGS = bindings("findings")  # every key: tui/keymap.py

    class ZoomTo(RegionsView.ZoomTo):
        """Show an evidence event on the timeline: the pane handles it as the
        Regions view's ``z`` (select the row, zoom to its time range)."""

    def __init__(self, trace: Trace, links: LinkLookup, **kwargs) -> None:
        super().__init__(**kwargs)
        self.trace = trace
        self.links = links
        self.result: TraceFindings | None = None
        self.error = ""
        self.current: Finding | None = None
        self._last_focus = "findings-table"

    def compose(self) -> ComposeResult:
        yield DataTable(id="findings-table", cursor_type="row")
        # scrolls, and tab reaches it: on a small terminal a suggestion is longer than
        # the lines the panel may take
        with VerticalScroll(id="finding-detail-box"):
            yield Static(id="finding-detail")
        yield DataTable(id="evidence-table", cursor_type="row")

    @property
    def findings_table(self) -> DataTable:
        return self.query_one("#findings-table", DataTable)

    @property
    def evidence_table(self) -> DataTable:
        return self.query_one("#evidence-table", DataTable)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.result.findings if self.result is not None else ()

    def on_mount(self) -> None:
        table = self.findings_table
        table.border_title = "Findings · looking…"
        for label in FINDING_COLUMNS:
            table.add_column(_header(label), key=label)
        ev = self.evidence_table
        ev.border_title = "Evidence · ⏎/z show on timeline"
        for label in EVIDENCE_COLUMNS:
            ev.add_column(_header(label), key=label)
        self._detail(Text("Looking for findings…", style="dim"))
        self.run_worker(
            lambda: find(self.links.analysed), thread=True, exit_on_error=False,
            name="findings", group="findings",
        )  # fmt: skip

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "findings":
            return
        result = event.worker.result
        if event.state == WorkerState.SUCCESS and isinstance(result, TraceFindings):
            self.show_findings(result)
        elif event.state == WorkerState.ERROR:
            self.error = error_line(event.worker.error or RuntimeError("findings failed"))
            self.findings_table.border_title = "Findings · failed"
            self._detail(Text(self.error, style="bold"))

    # ---- filling the tables ----

    def show_findings(self, result: TraceFindings) -> None:
        self.result = result
        table = self.findings_table
        table.clear()
        limit = max(self.app.size.width - 60, 24)
        for i, f in enumerate(result.findings):
            cells = finding_cells(f, limit)
            style = SEVERITY_STYLE.get(f.severity, "")
            table.add_row(
                Text(cells[0], style=style),
                Text(cells[1]),
                Text(cells[2]),
                Text(cells[3]),
                Text(cells[4], justify="right"),
                key=str(i),
            )
        notes = "; ".join(visible(n) for n in result.notes
                          if n != "nothing to point out")  # the line below says so
        regions = ", ".join(visible(r) for r in result.regions) or "no region"
        # border titles are markup: names go in the detail line, not here
        table.border_title = f"Findings ({len(result.findings)}) · ⏎ evidence · z timeline"
        if result.findings:
            self.choose(0)
            return
        text = Text("Nothing to point out", style="bold")
        text.append(f" in {regions}" if result.regions else "")
        if notes:
            text.append(f" ({notes})", style="dim")
        self._detail(text)

    def choose(self, index: int) -> None:
        """Show finding ``index``: its detail and suggestion, and its evidence rows."""
        if not 0 <= index < len(self.findings):
            return
        f = self.current = self.findings[index]
        text = Text(f"{f.severity}: ", style=SEVERITY_STYLE.get(f.severity, "bold"))
        text.append(visible(f.title), style="bold")
        text.append(f"  ({visible(f.region)}, {f.instances_text()})", style="dim")
        if f.detail:
            text.append("\n" + visible(f.detail))
        text.append("\nTry: ", style="bold")
        text.append(visible(f.suggestion))
        self._detail(text)
        ev = self.evidence_table
        ev.clear()
        limit = min(max(self.app.size.width - 80, 24), 56)
        for i, e in enumerate(f.evidence):
            cells = evidence_cells(e, limit)
            style = COPY_STYLE.get(e.kind, "")
            ev.add_row(
                Text(cells[0], style=style),
                Text(cells[1]),
                Text(cells[2], justify="right"),
                Text(cells[3], justify="right"),
                Text(cells[4], justify="right"),
                Text(cells[5]),
                Text(cells[6]),
                key=str(i),
            )

    def _detail(self, text: Text) -> None:
        self.query_one("#finding-detail", Static).update(text)

    # ---- events ----

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "findings-table" or event.row_key.value is None:
            return
        index = int(event.row_key.value)
        if 0 <= index < len(self.findings) and self.current is not self.findings[index]:
            self.choose(index)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "findings-table":
            if self.current is not None and self.current.evidence:
                self.evidence_table.focus()
        else:
            self.action_zoom()

    def action_up(self) -> None:
        if self.evidence_table.has_focus:
            self.findings_table.focus()

    def action_zoom(self) -> None:
        """Show the highlighted evidence event (or the finding's first) on the timeline."""
        f = self.current
        if f is None or not f.evidence:
            self.notify("No evidence event to show", severity="warning", timeout=3)
            return
        i = self.evidence_table.cursor_row if self.evidence_table.has_focus else 0
        jump = jump_of(self.trace, f.evidence[min(max(i, 0), len(f.evidence) - 1)])
        if jump is not None:
            self.post_message(self.ZoomTo(jump.t0, jump.t1, jump.row))
