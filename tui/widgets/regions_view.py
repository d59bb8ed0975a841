"""View 2: record_function regions -> their instances -> each instance's GPU events."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.markup import escape
from textual.message import Message
from textual.widgets import DataTable, Static

from profiling.analysis.regions import RegionInstance
from profiling.trace.model import Trace
from tui.fmt import fmt_ns, fmt_pct
from tui.guard import ReportsErrors
from tui.keymap import bindings
from tui.links import LinkLookup, chain_text
from tui.names import clip, short_name, visible
from tui.regions_data import (
    KernelRow,
    Region,
    gpu_sparkline,
    instance_span,
    kernel_rows,
)
from tui.themes import COPY_STYLE
from tui.widgets.occurrence_jumps import ShowOccurrences
from tui.widgets.table_focus import RemembersTableFocus
from tui.widgets.table_window import RowWindow, WindowTable, row_at_cursor


def _num(text: str) -> Text:
    return Text(text, justify="right")


def _col(label: str) -> Text:
    """A right-aligned header with a leading space, so adjacent headers never touch."""
    return Text(" " + label, justify="right")


class RegionsView(ReportsErrors, RemembersTableFocus, Vertical):
    """Three tables stacked: names, instances of the chosen name, GPU events of the
    chosen instance.  ``⏎`` goes one table down, ``z`` shows it on the timeline."""

    BINDINGS = bindings("regions")  # every key: tui/keymap.py

    class ZoomTo(Message):
        """Show an absolute time range (and select a row) on the timeline."""

        def __init__(self, t0: int, t1: int, row: int) -> None:
            super().__init__()
            self.t0, self.t1, self.row = t0, t1, row

    def __init__(
        self, trace: Trace, links: LinkLookup, regions: list[Region], error: str = "",
        rank_of: Callable[[int], int] | None = None, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.rank_of = rank_of  # a job's: the rank of a merged row (instances say theirs)
        self.trace = trace
        self.links = links
        self.regions = regions
        self.error = error
        self.current_region: Region | None = None
        self.current_instance: RegionInstance | None = None
        self.kernels: Sequence[KernelRow] = []
        self._name_rows = RowWindow()  # the regions the names table holds
        self._instance_rows = RowWindow()  # the instances the instances table holds
        self._kernel_rows = RowWindow()  # the GPU events the kernels table holds
        self._last_focus = "region-names"

    def compose(self) -> ComposeResult:
        yield WindowTable(self._name_rows, id="region-names", cursor_type="row")
        yield WindowTable(self._instance_rows, id="region-instances", cursor_type="row")
        yield WindowTable(self._kernel_rows, id="region-kernels", cursor_type="row")
        yield Static(id="kernel-name")

    @property
    def names_table(self) -> DataTable:
        return self.query_one("#region-names", DataTable)

    @property
    def instances_table(self) -> DataTable:
        return self.query_one("#region-instances", DataTable)

    @property
    def kernels_table(self) -> DataTable:
        return self.query_one("#region-kernels", DataTable)

    def on_mount(self) -> None:
        names = self.names_table
        what = "record_function" if all(r.annotation for r in self.regions) \
            else "record_function and attention ops"
        names.border_title = f"Regions ({what}) · ⏎ instances"
        names.add_column("region", key="name")
        names.add_column(_col("instances"), key="n")
        names.add_column(_col("avg CPU"), key="cpu")
        names.add_column(_col("avg GPU"), key="gpu")
        names.add_column(_col("kernels"), key="k")
        names.add_column(_col("memcpy"), key="mc")
        names.add_column(_col("memset"), key="ms")
        names.add_column(" GPU per instance", key="spark")
        self._fill_names(0)
        inst = self.instances_table
        inst.border_title = "Instances · ⏎ GPU events · z timeline"
        inst.add_column(_col("#"), key="i")
        if self.rank_of is not None:
            inst.add_column(_col("rank"), key="rank")
        inst.add_column("name", key="name")
        inst.add_column(_col("start"), key="start")
        inst.add_column(_col("CPU time"), key="cpu")
        inst.add_column(_col("GPU time"), key="gpu")
        inst.add_column(_col("GPU events"), key="k")
        ker = self.kernels_table
        ker.border_title = "GPU events in GPU order · z timeline"
        ker.add_column("name", key="name")
        ker.add_column(_col("offset"), key="off")
        ker.add_column(_col("duration"), key="dur")
        ker.add_column(_col("share"), key="share")
        ker.add_column(_col("stream"), key="stream")
        ker.add_column("launched by", key="by")
        if not self.regions:
            message = self.error or "No record_function regions in this trace."
            self.query_one("#kernel-name", Static).update(Text(message, style="dim"))
            return
        self.choose_region(0)

    # ---- filling the tables ----

    def choose_region(self, index: int) -> None:
        if not 0 <= index < len(self.regions):
            return
        self.current_region = self.regions[index]
        self.instances_table.border_title = self._instances_title(self.current_region)
        self._fill_instances(0)
        self.choose_instance(0)

    def _fill_names(self, around: int) -> None:
        """The names table holds a window of the regions around ``around``: a server's
        trace can name each request (20,000 names took 3.3 s to list)."""
        table = self.names_table

        def add(i: int) -> None:
            r = self.regions[i]
            s = r.summary
            table.add_row(
                Text(visible(r.name)),
                _num(str(r.count)),
                _num(fmt_ns(s.cpu_time_avg_us * 1000)),
                _num(fmt_ns(s.device_time_avg_us * 1000)),
                _num(f"{s.kernels_per_instance:g}"),
                _num(f"{s.memcpy_per_instance:g}"),
                _num(f"{s.memset_per_instance:g}"),
                Text(" " + gpu_sparkline(r), style="bold"),
                key=str(i),
            )

        self._name_rows.fill(table, len(self.regions), around, add)

    def _fill_instances(self, around: int) -> None:
        """The instances table holds a window of the region's instances around
        ``around`` (``table_window``), the cursor on it."""
        region = self.current_region
        if region is None:
            return
        table = self.instances_table
        t0, rank_of = self._origin_ns, self.rank_of

        def add(i: int) -> None:
            inst = region.instances[i]
            rank = [] if rank_of is None else [_num(str(rank_of(inst.row)))]
            table.add_row(
                _num(str(inst.index)),
                *rank,
                Text(visible(inst.name)),
                _num(fmt_ns(inst.start_ns - t0)),
                _num(fmt_ns(inst.cpu_ns)),
                _num(fmt_ns(inst.device_ns)),
                _num(str(inst.gpu_events)),
                key=str(i),
            )

        self._instance_rows.fill(table, len(region.instances), around, add)

    @functools.cached_property
    def _origin_ns(self) -> int:
        return self.trace.start_ns

    @staticmethod
    def _instances_title(region: Region) -> str:
        """The instances table's title: the GPU sparkline of the chosen region with its
        range (numbers and block characters only: border titles are markup)."""
        title = "Instances · ⏎ GPU events · z timeline"
        line = gpu_sparkline(region, 32)
        if not line:
            return title
        times = region.device_ns
        return f"{title} · GPU {line} {fmt_ns(int(times.min()))} … {fmt_ns(int(times.max()))}"

    def choose_instance(self, index: int) -> None:
        region = self.current_region
        if region is None or not 0 <= index < len(region.instances):
            return
        self.current_instance = region.instances[index]
        self.kernels = kernel_rows(self.links.analysed, self.current_instance)
        self.kernels_table.border_title = escape(  # names are data, not markup
            f"GPU events of {visible(self.current_instance.name)} #{self.current_instance.index}"
            f" ({index + 1} of {len(region.instances)}) · {len(self.kernels)} GPU events"
            " in GPU order · z timeline"
        )
        self._fill_kernels(0)
        self._show_name(0)

    def _fill_kernels(self, around: int) -> None:
        """The kernels table holds a window of the instance's GPU events around
        ``around`` (one instance may hold every GPU event of the trace)."""
        table = self.kernels_table
        limit = min(max(self.app.size.width - 82, 24), 64)
        chain_width = min(max(self.app.size.width - limit - 50, 24), 96)

        def add(i: int) -> None:
            k = self.kernels[i]
            table.add_row(
                Text(clip(short_name(k.name, limit), limit), style=COPY_STYLE.get(k.kind, "")),
                _num(fmt_ns(k.offset_ns)),
                _num(fmt_ns(k.dur_ns)),
                _num(fmt_pct(k.share, 1.0)),
                _num(str(k.stream) if k.stream >= 0 else "-"),
                Text(chain_text(k.launch_chain, chain_width)),
                key=str(i),
            )

        self._kernel_rows.fill(table, len(self.kernels), around, add)

    def _show_name(self, index: int) -> None:
        label = self.query_one("#kernel-name", Static)
        if not 0 <= index < len(self.kernels):
            label.update(Text("This instance launched no GPU events.", style="dim"))
            return
        k = self.kernels[index]
        text = Text(f"{k.kind} {index}: ", style="bold")
        text.append(visible(k.name))
        label.update(text)

    # ---- events ----

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return
        index = int(event.row_key.value)
        table = event.data_table.id
        if table == "region-names":
            if row_at_cursor(event.data_table) != index:
                return  # from before the window moved
            if self.current_region is not self.regions[index]:
                self.choose_region(index)
            if self._name_rows.follows(index):
                self._fill_names(index)
        elif table == "region-instances":
            region = self.current_region
            if row_at_cursor(event.data_table) != index:
                return  # from before the window moved: the cursor is elsewhere now
            if region is not None and self.current_instance is not region.instances[index]:
                self.choose_instance(index)
            if region is not None and self._instance_rows.follows(index):
                self._fill_instances(index)
        elif table == "region-kernels":
            if row_at_cursor(event.data_table) != index:
                return  # from before the window moved
            self._show_name(index)
            if self._kernel_rows.follows(index):
                self._fill_kernels(index)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        table = event.data_table
        if table.id == "region-names":
            self.instances_table.focus()
        elif table.id == "region-instances":
            self.kernels_table.focus()
        elif (index := row_at_cursor(table)) is not None:  # every occurrence of the event
            self.post_message(ShowOccurrences(self.kernels[index].name, "gpu"))

    def action_up(self) -> None:
        if self.kernels_table.has_focus:
            self.instances_table.focus()
        elif self.instances_table.has_focus:
            self.names_table.focus()

    def action_zoom(self) -> None:
        """Show the highlighted GPU event (kernels table) or instance on the timeline."""
        index = row_at_cursor(self.kernels_table)
        if self.kernels_table.has_focus and index is not None:
            k = self.kernels[index]
            t0 = int(self.trace.ts_ns[k.row])
            self.post_message(self.ZoomTo(t0, t0 + max(k.dur_ns, 1), k.row))
        elif self.current_instance is not None:
            t0, t1 = instance_span(self.current_instance)
            self.post_message(self.ZoomTo(t0, t1, self.current_instance.row))
