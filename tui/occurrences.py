"""Every place a name happens (pure; no Textual): the rows of an Ops row, a
Regions GPU event or a range-panel row, and the list the occurrences screen shows.

The lookup is one comparison over the ``name_id`` column (each name is interned
once), then a filter by lane kind over the matches only: a 10 M-event trace
answers in tens of milliseconds.  The list shows at most ``LIST_CAP`` rows (the
chains of each are worked out only for those) and says how many there are; ``n``
/ ``N`` on the timeline step through all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from profiling.analysis.slices import overlaps
from profiling.trace.model import GPU_KINDS, Kind, Trace
from tui.fmt import fmt_count, fmt_ns
from tui.links import LinkLookup, chain_text
from tui.names import cells as cell_len
from tui.names import visible

LIST_CAP = 1000
"""Rows the occurrences list shows (all of them are stepped through with n/N)."""
STEP_GROUP = "ProfilerStep*"
"""torch's table groups ``ProfilerStep#N`` under this key: it matches by prefix."""
LANE_KINDS = ("all", "cpu", "gpu")
LIST_CHROME = 16
"""Cells of the list that are not text: border, padding, scrollbar, cell padding."""


def name_ids(trace: Trace, name: str) -> np.ndarray:
    """Interned ids of ``name`` (``ProfilerStep*``: every ``ProfilerStep#N``)."""
    if name == STEP_GROUP or (name.endswith("*") and trace.string_ids(name) is None):
        prefix = name[:-1]
        ids = [i for i, s in enumerate(trace.strings) if s.startswith(prefix)]
        return np.asarray(ids, dtype=np.int64)
    found = trace.string_ids(name)
    return np.asarray([] if found is None else [found], dtype=np.int64)


def occurrences(trace: Trace, name: str, lanes: str = "all",
                within: tuple[int, int] | None = None) -> np.ndarray:
    """Rows named ``name`` on ``lanes`` (``cpu``, ``gpu`` or ``all``), flows left out,
    in start order (ties by lane), as ``tui.search.find`` orders its matches.
    ``within`` (absolute ns): only those that count in that range, by the range
    panel's rule (``slices.overlaps``), so a range row lists what it counted."""
    ids = name_ids(trace, name)
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64)
    if ids.size == 1:
        mask = trace.name_id == ids[0]
    else:
        mask = np.isin(trace.name_id, ids)
    rows = np.flatnonzero(mask).astype(np.int64)
    rows = rows[trace.kind[rows] != Kind.FLOW]
    if within is not None and rows.size:
        rows = rows[overlaps(trace.ts_ns[rows], trace.dur_ns[rows], *within)]
    if lanes in ("cpu", "gpu") and rows.size:
        gpu_lane = np.array([lane.kind == "gpu" for lane in trace.lanes], dtype=bool)
        on_gpu = gpu_lane[trace.lane[rows]]
        rows = rows[on_gpu if lanes == "gpu" else ~on_gpu]
    # rows are stored lane by lane in start order: a stable sort by start merges the
    # lanes (ties keep lane order), as a lexsort would, in a fraction of its time
    return rows[np.argsort(trace.ts_ns[rows], kind="stable")]


def lane_text(trace: Trace, row: int) -> str:
    """``group › lane`` of a row, visible."""
    lane = trace.lanes[int(trace.lane[row])]
    group = trace.groups[lane.group] if 0 <= lane.group < len(trace.groups) else None
    text = visible(lane.label or str(lane.tid))
    return f"{visible(group.label)} › {text}" if group is not None and group.label else text


def fit_chain(names: list[str], width: int | None) -> str:
    """A launch chain in ``width`` cells: whole, else ``chain_text``'s outermost op,
    ``…`` and the last two, else ``…`` and the innermost (what launched it stays
    readable: ``… › aten::copy_ › cudaMemcpyAsync``)."""
    whole = chain_text(names)
    if width is None or cell_len(whole) <= width:
        return whole
    short = chain_text(names, width)
    if not short.endswith("…"):
        return short
    for keep in (2, 1):
        tail = chain_text(["…", *names[-keep:]]) if len(names) > keep else ""
        if tail and cell_len(tail) <= width:
            return tail
    return chain_text(names[-1:], width)


def launcher_text(trace: Trace, links: LinkLookup, row: int, width: int | None = None) -> str:
    """Who launched ``row``: a GPU event's whole launch chain (``chain_text``, the
    details panel's and the Regions view's; within ``width``: ``fit_chain``), a CPU
    event's enclosing op; '' if none."""
    if int(trace.kind[row]) in GPU_KINDS:
        if not links.ready:
            return "(analysing…)"
        return fit_chain([trace.name(r) for r in links.chain_of(row)], width)
    around = links.ancestors(row)
    return visible(trace.name(around[0])) if around else ""


@dataclass(frozen=True)
class OccurrenceList:
    """The occurrences of one name: every row, and the listed ones' display text."""

    name: str
    rows: np.ndarray
    table: list[tuple[str, str, str, str, str]]  # #, start, duration, lane, launched by
    full: list[str] = field(default_factory=list)  # each listed row's whole launch chain
    in_range: bool = False  # only those in the marked range

    @property
    def title(self) -> str:
        n = len(self.rows)
        shown = f" (the first {fmt_count(len(self.table))} listed)" if n > len(self.table) else ""
        where = " in the range" if self.in_range else ""
        keys = "⏎/z show on the timeline, then n/N step · esc closes"
        return (f"{visible(self.name)}: {fmt_count(n)} occurrence{'s' if n != 1 else ''}"
                f"{where}{shown} · {keys}")  # fmt: skip


def occurrence_list(
    trace: Trace,
    links: LinkLookup,
    name: str,
    lanes: str = "all",
    cap: int = LIST_CAP,
    width: int | None = None,
    within: tuple[int, int] | None = None,
) -> OccurrenceList:
    """The list for ``name``: start (from the trace start), duration, lane and
    launching op of the first ``cap`` occurrences; in a list ``width`` cells wide the
    chain gets what the other columns leave (``fit_chain``)."""
    rows = occurrences(trace, name, lanes, within)
    origin = trace.start_ns
    shown = rows[:cap].tolist()
    cells = [
        (
            str(i + 1),
            "+" + fmt_ns(float(trace.ts_ns[r] - origin)),
            fmt_ns(float(trace.dur_ns[r])),
            lane_text(trace, r),
        )
        for i, r in enumerate(shown)
    ]
    room = None
    if width is not None and cells:
        used = sum(max(cell_len(c[k]) for c in cells) for k in range(4))
        room = max(width - used - LIST_CHROME, 24)
    full = [launcher_text(trace, links, r) for r in shown]
    table = [
        (*c, f if room is None or cell_len(f) <= room else launcher_text(trace, links, r, room))
        for c, r, f in zip(cells, shown, full, strict=True)
    ]
    return OccurrenceList(name, rows, table, full, in_range=within is not None)
