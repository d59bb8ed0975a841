"""What the Diff view (7) shows, as plain data (no Textual, no Rich).

The view sets one region instance of the base trace (the first file) against
the same region of another open file, with ``profiling.analysis.kernel_diff``:
the table is ``attn-tui diff``'s rows, and above it the two instances' GPU
work is drawn as two text lanes on one time axis.  The axis is the base's:
A's kernels sit at their own offsets; B's matched kernels are *snapped* under
their partners (so a pair lines up even when B ran it later, after A's extra
copy), and B's own kernels keep their distance from the last matched one.
Added and deleted kernels are drawn with ``+`` and ``-`` glyphs, so the lanes
read the same without colour (``NO_COLOR``).

Each row also keeps the trace row of its kernel on each side, so the view can
jump to that event on its own file's timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import KernelEntry
from profiling.analysis.kernel_diff import (
    DiffRow,
    KernelDiff,
    default_region,
    diff_kernels,
    pick,
    typical_instance,
)
from tui.fmt import fmt_time
from tui.names import clip, short_name

MATCH_GLYPHS = ("█", "▓")
"""Matched kernels alternate between these (a pair shares its glyph), so two
neighbours read as two kernels; added and deleted kernels are ``+`` and ``-``."""
IDLE = "·"


@dataclass(frozen=True)
class Placed:
    """One GPU event on a lane: where it is drawn on the shared axis (µs from the
    base instance's first GPU event), and which table row it belongs to."""

    index: int  # its row in ``DiffData.rows``
    start_us: float
    dur_us: float
    glyph: str


@dataclass(frozen=True)
class DiffData:
    """One pairwise diff ready to draw: rows, both lanes, and each row's trace rows."""

    diff: KernelDiff
    a_file: int  # the files' positions among the open ones
    b_file: int
    a_rows: tuple[int | None, ...]  # per diff row: A's trace row (None for '+')
    b_rows: tuple[int | None, ...]  # per diff row: B's trace row (None for '-')
    a_lane: tuple[Placed, ...]
    b_lane: tuple[Placed, ...]
    span_us: float
    a_median: int | None = None  # each side's median instance (what the view opens on)
    b_median: int | None = None

    @property
    def rows(self) -> tuple[DiffRow, ...]:
        return self.diff.rows

    def target(self, index: int) -> tuple[int, int] | None:
        """(file, trace row) Enter jumps to for table row ``index``: B's kernel for
        a ``+`` row, else A's."""
        if not 0 <= index < len(self.rows):
            return None
        if self.rows[index].op == "+":
            row = self.b_rows[index]
            return (self.b_file, row) if row is not None else None
        row = self.a_rows[index]
        return (self.a_file, row) if row is not None else None


def build(traces: Sequence[AnalysedTrace], a_file: int = 0, b_file: int = 1,
          region: str | None = None, instance: int | None = None,
          pair: tuple[int | None, int | None] | None = None) -> DiffData:
    """Diff file ``a_file`` (the base) against ``b_file``: the region as ``attn-tui
    diff`` chooses it (the base's first attention region) and each side's median
    instance, unless given: ``instance`` for both (as ``--instance K``), or ``pair``,
    A's and B's apart (None: that side's median), as the view steps them.  Raises
    ``AttnTuiError`` as the command does."""
    base, other = traces[a_file], traces[b_file]
    a_pick, b_pick = pair if pair is not None else (instance, instance)
    a_side, a_list = pick(base, region or default_region(base), a_pick)
    b_side, b_list = pick(other, region or default_region(base, other), b_pick)
    rows = diff_kernels(a_list.kernels, b_list.kernels)
    diff = KernelDiff(a_side, b_side, tuple(rows))
    data = layout(diff, a_list.kernels, b_list.kernels, a_file, b_file)
    medians = [typical_instance(t.lazy_instances(s.region)).index
               for t, s in ((base, a_side), (other, b_side))]
    return replace(data, a_median=medians[0], b_median=medians[1])


def layout(diff: KernelDiff, a: Sequence[KernelEntry], b: Sequence[KernelEntry],
           a_file: int = 0, b_file: int = 1) -> DiffData:
    """Place both sides' kernels on the base's axis (see the module text).

    The rows come in the order of both sequences (an alignment never crosses),
    so walking them consumes A's and B's kernels in order."""
    ia = jb = 0
    a_rows: list[int | None] = []
    b_rows: list[int | None] = []
    a_lane: list[Placed] = []
    b_lane: list[Placed] = []
    shift = 0.0  # B's offset -> the axis, from the last matched pair
    pair = 0
    for index, r in enumerate(diff.rows):
        x = a[ia] if r.op != "+" else None
        y = b[jb] if r.op != "-" else None
        ia += x is not None
        jb += y is not None
        a_rows.append(x.row if x else None)
        b_rows.append(y.row if y else None)
        if x is not None and y is not None:
            glyph = MATCH_GLYPHS[pair % 2]
            pair += 1
            shift = x.start_offset_us - y.start_offset_us
            a_lane.append(Placed(index, x.start_offset_us, x.dur_us, glyph))
            b_lane.append(Placed(index, x.start_offset_us, y.dur_us, glyph))
        elif x is not None:
            a_lane.append(Placed(index, x.start_offset_us, x.dur_us, "-"))
        elif y is not None:
            b_lane.append(Placed(index, max(y.start_offset_us + shift, 0.0), y.dur_us, "+"))
    span = max([p.start_us + p.dur_us for p in (*a_lane, *b_lane)], default=0.0)
    return DiffData(diff, a_file, b_file, tuple(a_rows), tuple(b_rows), tuple(a_lane),
                    tuple(b_lane), span)


def strip(lane: Sequence[Placed], span_us: float, width: int) -> list[tuple[str, int | None]]:
    """The lane as ``width`` cells: (glyph, row index drawn there or None).

    Every event gets at least its start cell; where several share a cell, a
    ``+``/``-`` event wins over a matched one (a short added copy between two
    long kernels stays visible), then the longer event, then the earlier.  Each
    event's precedence is its rank in that order, and a cell shows the event of
    the highest rank over it: one ``maximum.at`` over the cells every event
    covers, so two whole runs (60,000 events a lane) take milliseconds."""
    if width <= 0 or span_us <= 0 or not lane:
        return [(IDLE, None)] * max(width, 0)
    n = len(lane)
    start = np.fromiter((p.start_us for p in lane), dtype=np.float64, count=n)
    dur = np.fromiter((p.dur_us for p in lane), dtype=np.float64, count=n)
    marked = np.fromiter((p.glyph in "+-" for p in lane), dtype=bool, count=n)
    c0 = np.minimum((start / span_us * width).astype(np.int64), width - 1)
    c1 = np.minimum(np.maximum(((start + dur) / span_us * width + 0.5).astype(np.int64), c0 + 1),
                    width)
    order = np.lexsort((-np.arange(n), dur, marked))  # marked, then longer, then earlier
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    span = c1 - c0
    cells = np.repeat(c0, span) + (np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span,
                                                                        span))
    best = np.full(width, -1, dtype=np.int64)
    np.maximum.at(best, cells, np.repeat(rank, span))
    owner = np.where(best >= 0, order[np.maximum(best, 0)], -1)
    return [(IDLE, None) if k < 0 else (lane[k].glyph, lane[k].index) for k in owner.tolist()]


def op_text(row: DiffRow) -> str:
    """``=`` same kernel, ``≈`` same stem with other template arguments, ``-``, ``+``."""
    return "≈" if row.op == "=" and row.same_args is False else row.op


def table_cells(row: DiffRow, name_width: int = 40) -> tuple[str, str, str, str, str]:
    """(op, kernel, A time, B time, difference) as the table shows them."""
    name = row.a_name if row.a_name is not None else row.b_name or ""
    a = fmt_time(row.a_us, "us") if row.a_us is not None else ""
    b = fmt_time(row.b_us, "us") if row.b_us is not None else ""
    d = row.diff_us
    diff = ("+" if d > 0 else "") + fmt_time(d, "us")
    return op_text(row), clip(short_name(name, name_width), name_width), a, b, diff


def row_chain(row: DiffRow) -> tuple[str, ...]:
    """The launch chain the table shows: A's, or B's for a ``+`` row."""
    return row.b_launch_chain if row.op == "+" else row.a_launch_chain


def title(data: DiffData, label_width: int = 60, medians: bool = False) -> str:
    """``A naive: attn_fwd #0 of 3  vs  B inplace: attn_fwd #1 of 3``; each label cut
    to ``label_width`` so that B's side still shows in a narrow window.  ``medians``
    (once an instance was stepped to): `` (median)`` after a side at its median, so
    the user sees which side left the typical instance and how to come back."""
    a, b = data.diff.a, data.diff.b
    ma = " (median)" if medians and a.instance == data.a_median else ""
    mb = " (median)" if medians and b.instance == data.b_median else ""
    return (f"A {clip(a.label, label_width)}: {a.region} #{a.instance} of {a.instances}{ma}  vs  "
            f"B {clip(b.label, label_width)}: {b.region} #{b.instance} of {b.instances}{mb}")


def totals_text(data: DiffData) -> str:
    """Matched time on each side, and the time in each side's own kernels."""
    t = data.diff.totals
    return (f"matched {t['matched']}: {fmt_time(t['matched_a_us'], 'us')} → "
            f"{fmt_time(t['matched_b_us'], 'us')} · - only A {t['only_a']}: "
            f"{fmt_time(t['only_a_us'], 'us')} · + only B {t['only_b']}: "
            f"{fmt_time(t['only_b_us'], 'us')}")


def region_names(base: AnalysedTrace) -> list[str]:
    """The base's regions the view steps through: ``kernels``' choice first (what the
    view opens on), then the others (``ProfilerStep*``, other annotations)."""
    from profiling.analysis.region_choice import choose_regions

    first = list(choose_regions(base).names)
    return first + [n for n in base.regions.names() if n not in first]


def other_files(count: int) -> list[int]:
    """The files the base can be set against (every open one but the first)."""
    return list(range(1, count))
