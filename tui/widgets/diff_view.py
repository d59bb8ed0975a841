"""View 7: the first open file's kernels against another's, aligned like ``git diff``.

It lives in its own tab beside the files (it belongs to two of them), like
Compare.  The region instance of each side is the one ``attn-tui diff`` picks
(the base's first attention region, each file's median instance; ``r`` steps
to the base's next region); the diff runs on a worker thread once both files
have loaded, and is kept per other file and region (until a file reloads), so
``[`` / ``]`` (with three or more files) and ``r`` come back to one instantly.
``a`` / ``A`` and ``b`` / ``B`` step A's and B's instance (as ``attn-tui diff
--instance K``, but each side on its own); a diff is kept per (file, region,
instances), and stepping back to a side's median is the first diff again.
Enter (or ``z``) on a row shows its kernel on its own file's timeline: the
tab switches to that file and the event is selected, as Regions' ``z`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from tui.commands.diff import launch_text
from tui.diff_data import (
    DiffData,
    build,
    other_files,
    region_names,
    row_chain,
    table_cells,
    title,
    totals_text,
)
from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.names import visible
from tui.session import error_line
from tui.widgets.compare_view import PaneLike
from tui.widgets.diff_lanes import DiffLanes
from tui.widgets.regions_view import RegionsView
from tui.widgets.table_window import RowWindow, WindowTable, row_at_cursor

DiffKey = tuple[int, str | None, int | None, int | None]  # other file, region, A's, B's instance
COLUMNS = ("op", "kernel", "A", "B", "Δ B−A", "launched by")
NUMERIC = {"A", "B", "Δ B−A"}
LEGEND = "= both · ≈ other template args · - only A · + only B · ⏎ timeline"


class DiffView(ReportsErrors, Vertical):
    """Status (which instances), the two lanes, the aligned table, the totals."""

    BINDINGS = bindings("diff")
    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    #diff-status, #diff-row, #diff-totals { text-wrap: nowrap; text-overflow: ellipsis; }
    #diff-status { height: auto; max-height: 2; padding: 0 1; background: $panel; }
    #diff-table { height: 1fr; min-height: 3; }
    #diff-row { height: 1; padding: 0 1; }
    #diff-totals { height: auto; max-height: 2; padding: 0 1; background: $panel; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.other = 1  # the file set against the first
        self.count = 0  # files open
        self.chosen_region: str | None = None  # None: as attn-tui diff chooses
        self.region_names: list[str] = []  # the base's, once the first diff has run
        self.picked: tuple[int | None, int | None] = (None, None)  # A's, B's; None: median
        self.results: dict[DiffKey, DiffData | str] = {}  # the diff or its error
        self.state = "idle"  # idle | waiting | running | ready | error
        self._panes: list[PaneLike] = []
        self._sessions: tuple[int, ...] = ()  # the files' sessions the results are for
        self._worker_sessions: tuple[int, ...] = ()  # those the running worker reads
        self._worker: Worker | None = None
        self._worker_for: DiffKey = (0, None, None, None)  # what the running worker diffs
        self._rows = RowWindow()  # the aligned rows the table holds

    def compose(self) -> ComposeResult:
        yield Static(id="diff-status")
        yield DiffLanes(id="diff-lanes")
        yield WindowTable(self._rows, id="diff-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="diff-row")
        yield Static(id="diff-totals")

    @property
    def table(self) -> DataTable:
        return self.query_one("#diff-table", DataTable)

    @property
    def data(self) -> DiffData | None:
        found = self.results.get(self._key)
        return found if isinstance(found, DiffData) else None

    @property
    def _key(self) -> DiffKey:
        return (self.other, self.chosen_region, *self.picked)

    def on_mount(self) -> None:
        for col in COLUMNS:
            self.table.add_column(Text(col, justify="right" if col in NUMERIC else "left"),
                                  key=col)
        self._status(Text("Press 7 to diff the open files.", style="dim"))

    def focus_view(self) -> None:
        self.table.focus()

    def _status(self, text: Text) -> None:
        self.query_one("#diff-status", Static).update(text)

    # ---- running the diff ----

    def update_from(self, panes: Sequence[PaneLike]) -> None:
        """Diff the first file against ``self.other`` once both have loaded."""
        self._panes = list(panes)
        sessions = tuple(id(p.session) for p in panes)
        if sessions != self._sessions:  # a file opened, loaded or reloaded: diff afresh
            self._sessions = sessions
            self.count = len(panes)
            self.results.clear()
        self.other = min(max(self.other, 1), max(self.count - 1, 1))
        if self.count < 2:
            return
        if self._key in self.results:
            self._show()
            return
        pair = (panes[0], panes[self.other])
        waiting = [p for p in pair if p.state == "loading"]
        if waiting:
            self.state = "waiting"
            self._status(Text(f"Waiting for {len(waiting)} of 2 files to load…", style="dim"))
            return
        failed = [p for p in pair if p.state != "ready" or p.session is None]
        if failed:
            self.results[self._key] = f"{failed[0].path}: {failed[0].error or 'failed to load'}"
            self._show()
            return
        traces = [p.session.analysis for p in pair]  # type: ignore[union-attr]
        key = self._key
        self.state = "running"
        self._status(Text("Aligning the kernel sequences…", style="dim"))
        self._worker = self.run_worker(
            lambda: (build(traces, 0, 1, key[1], pair=key[2:]), region_names(traces[0])),
            thread=True,
            exclusive=True, exit_on_error=False, name="diff", group="diff")  # fmt: skip
        self._worker_for = key
        self._worker_sessions = self._sessions

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker or self._worker_sessions != self._sessions:
            return  # superseded, or its files reloaded since it started
        if event.state == WorkerState.SUCCESS:
            data, self.region_names = event.worker.result  # type: ignore[misc]
            self.results[self._worker_for] = _with_files(data, self._worker_for[0])
        elif event.state == WorkerState.ERROR:
            self.results[self._worker_for] = error_line(event.worker.error or RuntimeError())
        else:
            return
        if self._worker_for == self._key:
            self._show()

    # ---- showing it ----

    def _show(self) -> None:
        found = self.results.get(self._key)
        lanes = self.query_one(DiffLanes)
        table = self.table
        table.clear()
        self._rows.reset()
        totals = self.query_one("#diff-totals", Static)
        if not isinstance(found, DiffData):
            self.state = "error"
            text = Text(f"diff failed: {visible(found or '')}", style="bold")
            if len(self.region_names) > 1:
                text.append("\nr: the next region", style="dim")
            self._status(text)
            lanes.show(None)
            totals.update("")
            self._describe(-1)
            return
        self.state = "ready"
        width = max((self.app.size.width - 50) // 2, 8)
        stepped = self.picked != (None, None)  # say which side sits at its median
        head = Text(visible(title(found, width, stepped)), style="bold")
        hints = []
        if self.count > 2:
            hints.append(f"[ / ] other file: {self.other} of {self.count - 1}")
        if len(self.region_names) > 1:
            region = found.diff.a.region
            at = self.region_names.index(region) + 1 if region in self.region_names else 0
            hints.append(f"r region: {at} of {len(self.region_names)}")
        if hints:
            head.append("\n" + " · ".join(hints), style="dim")
        self._status(head)
        self._fill(found, 0)
        lanes.show(found, 0 if found.rows else None)
        self._describe(0)
        totals.update(Text(visible(totals_text(found)) + "\n" + LEGEND, no_wrap=True,
                           overflow="ellipsis"))

    def _fill(self, data: DiffData, around: int) -> None:
        """The table holds a window of the aligned rows around ``around``
        (``table_window``: two whole runs align 100,000 GPU events or more)."""
        table = self.table
        room = max(self.app.size.width - 38, 30)  # op, three times, cell padding, scrollbar
        name_width = room * 11 // 20

        def add(i: int) -> None:
            row = data.rows[i]
            op, name, a, b, d = table_cells(row, name_width)
            chain = launch_text(row_chain(row), room - name_width)
            cells = [Text(op), Text(visible(name)), Text(a, justify="right"),
                     Text(b, justify="right"), Text(d, justify="right"), Text(visible(chain))]
            if op in "+-":
                cells[0].stylize("bold")
            table.add_row(*cells, key=str(i))

        self._rows.fill(table, len(data.rows), around, add)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return
        index = int(event.row_key.value)
        if row_at_cursor(event.data_table) != index:
            return  # from before the window moved
        self.query_one(DiffLanes).select(index)
        self._describe(index)
        data = self.data
        if data is not None and self._rows.follows(index):
            self._fill(data, index)

    def _describe(self, index: int) -> None:
        """The row's kernel in full and its whole launch chain (the table cuts both)."""
        data = self.data
        line = Text(no_wrap=True, overflow="ellipsis")
        if data is not None and 0 <= index < len(data.rows):
            row = data.rows[index]
            line.append(visible(row.b_name if row.op == "+" else row.a_name or ""), style="bold")
            if row.op == "=" and row.b_name != row.a_name:  # ≈: B's own template arguments
                line.append(" ≈ B ")
                line.append(visible(row.b_name or ""), style="bold")
            line.append(" · " + visible(" › ".join(row_chain(row))), style="dim")
        self.query_one("#diff-row", Static).update(line)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_jump()

    # ---- actions ----

    def action_other(self, step: int) -> None:
        """With three or more files: set the first against the next / previous one."""
        if self.count <= 2:
            raise SkipAction()  # nothing to choose: [ / ] switch files, as everywhere
        choices = other_files(self.count)
        self.other = choices[(choices.index(self.other) + step) % len(choices)]
        self.picked = (self.picked[0], None)  # another B: its median
        self.update_from(self._panes)

    def action_region(self) -> None:
        """Diff the next region of the base (its median instance in each file)."""
        names = self.region_names
        if len(names) < 2:
            self.notify("The first file has one region to diff", timeout=3)
            return
        data = self.data
        current = self.chosen_region or (data.diff.a.region if data is not None else names[0])
        at = names.index(current) if current in names else -1
        self.chosen_region = names[(at + 1) % len(names)]
        self.picked = (None, None)  # another region: each side's median
        self.update_from(self._panes)

    def action_instance(self, side: int, step: int) -> None:
        """Step A's (``side`` 0) or B's (1) instance of the region by ``step``,
        wrapping; landing on the median keys it as the median (the first diff)."""
        data = self.data
        if data is None:
            return
        shown, median = ((data.diff.a, data.a_median) if side == 0
                         else (data.diff.b, data.b_median))
        if shown.instances < 2:
            self.notify(f"{'AB'[side]}'s region has one instance", timeout=3)
            return
        new = (shown.instance + step) % shown.instances
        picked = list(self.picked)
        picked[side] = None if new == median else new
        self.picked = (picked[0], picked[1])
        self.update_from(self._panes)

    def action_jump(self) -> None:
        """Show the current row's kernel on its own file's timeline."""
        data = self.data
        index = row_at_cursor(self.table)
        target = data.target(index) if data is not None and index is not None else None
        if target is None or target[0] >= len(self._panes):
            return
        file, row = target
        pane = self._panes[file]
        session = pane.session
        if session is None:
            return
        t0 = int(session.trace.ts_ns[row])
        t1 = t0 + max(int(session.trace.dur_ns[row]), 1)
        self.app.show_file(file)  # type: ignore[attr-defined]
        pane.post_message(RegionsView.ZoomTo(t0, t1, row))  # type: ignore[attr-defined]


def _with_files(data: DiffData, other: int) -> DiffData:
    """``build`` saw the pair as files 0 and 1: say which open files they are."""
    return replace(data, a_file=0, b_file=other)
