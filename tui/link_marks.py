"""Launch links drawn on the timeline (pure numpy; no Textual).

With a GPU event selected, its launching runtime call and the op around that call
are *marked* on their lanes; with an op, annotation or runtime call selected,
every GPU event it launched is.  A *connector* joins each launch call to the GPU
event it enqueued, like Perfetto's flow arrows: a vertical line of box-drawing
glyphs (``│``) in the column of the launch, on the rows between the two, then
(one link) along the GPU row to the event (``└──►``), drawn in empty cells (a
vertical line also through a wide box, in its colour) so it never hides an event.
A launch off the window's edge (a kernel runs well after its call returned) is
drawn at the edge, so a zoomed-in kernel still shows where its launch is.

Cost: ``link_set`` runs once per selection (a few numpy ops over the selected
op's GPU events; the timeline model caches it), never per frame.  Per frame,
``marked_mask`` and ``connectors`` look only at the links inside the window
(binary searches on arrays sorted once per selection), so a 10 M-event trace
draws links at the cost of the ones on screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from profiling.analysis.collectives import collective_peers
from profiling.analysis.ranges import distinct
from profiling.trace.model import GPU_KINDS, Kind, Trace
from tui.density import Busy, busy_cells, busy_from
from tui.links import LinkLookup
from tui.rows import RowSpec

_NONE = np.zeros(0, dtype=np.int64)
MERGED_ABOVE = 4
"""Past this many marked events per cell of a row, the row's marks are drawn from
their union (``LaneMarks.busy``) instead of event by event."""
EDGE_LINKS = 4096
"""Up to this many links, one whose GPU event is in the window is drawn though its
launch is off the window (at the window's edge)."""
MAX_CONNECTOR_COLUMNS = 512
"""Connectors drawn per frame at most (distinct columns); past it the links in the
window are sampled evenly (a zoomed-out op of 100,000 kernels is a solid band)."""
LAUNCHERS = (Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.RUNTIME, Kind.PYTHON_FUNCTION)

VERTICAL, DOWN_END, UP_END, HORIZONTAL = "│", "└", "┌", "─"
DOWN_END_LEFT, UP_END_LEFT = "┘", "┐"
ARROW_RIGHT, ARROW_LEFT, ARROW_DOWN, ARROW_UP = "►", "◄", "▼", "▲"
"""Connector glyphs, all in the VGA/CP437 set (the Linux console draws them too)."""


@dataclass(frozen=True)
class LaneMarks:
    """The marked rows of one lane, in start order, for window queries."""

    rows: np.ndarray
    ts: np.ndarray  # float64 start, ns from the origin
    end: np.ndarray
    maxend: np.ndarray  # running maximum of ``end`` (the window's first candidate)
    depth: np.ndarray
    merged: dict = field(default_factory=dict)  # depth (None: all) -> Busy, made on demand

    def busy(self, depth: int | None) -> Busy:
        """The union of the marked events (at ``depth``): a window showing thousands of
        them is drawn from it in ``width`` binary searches."""
        found = self.merged.get(depth)
        if found is None:
            if depth is None:
                found = busy_from(self.ts, self.maxend)
            else:
                keep = self.depth == depth
                found = busy_from(self.ts[keep], np.maximum.accumulate(self.end[keep]))
            self.merged[depth] = found
        return found


@dataclass(frozen=True)
class LinkSet:
    """What the selection links to: ``marked`` rows (drawn as linked) and the
    connector pairs ``src`` (launch call) -> ``dst`` (GPU event), sorted by the
    call's start."""

    selected: int = -1
    marked: np.ndarray = field(default_factory=lambda: _NONE)
    src: np.ndarray = field(default_factory=lambda: _NONE)
    dst: np.ndarray = field(default_factory=lambda: _NONE)
    src_ts: np.ndarray = field(default_factory=lambda: np.zeros(0))  # float, from origin
    by_lane: dict[int, LaneMarks] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.marked.size)


def link_set(trace: Trace, links: LinkLookup, row: int, origin: int) -> LinkSet:
    """The links of trace row ``row`` (nothing until the analysis has linked the
    trace: a selection never waits for it)."""
    if row < 0 or not links.ready:
        return LinkSet(row)
    kind = int(trace.kind[row])
    if kind in GPU_KINDS:
        call, op = links.launch_of(row), links.op_of(row)
        marked = np.array([r for r in (call, op) if r >= 0], dtype=np.int64)
        src = np.array([call] if call >= 0 else [], dtype=np.int64)
        dst = np.array([row] if call >= 0 else [], dtype=np.int64)
        peers = collective_peers(trace, row)  # a job's collective: the other ranks' kernels
        marked = np.concatenate([marked, peers]) if peers.size else marked
    elif kind in LAUNCHERS:
        gpu, src = _launched(trace, links, row)
        dst = gpu
        marked = np.concatenate([gpu, src]) if kind != Kind.RUNTIME else gpu
    else:
        return LinkSet(row)
    marked = marked[marked != row]
    if src.size > 1 and not np.all(np.diff(trace.ts_ns[src]) >= 0):
        order = np.argsort(trace.ts_ns[src], kind="stable")
        src, dst = src[order], dst[order]
    src_ts = (trace.ts_ns[src] - origin).astype(np.float64)
    return LinkSet(row, marked, src, dst, src_ts, _by_lane(trace, marked, origin))


def _launched(trace: Trace, links: LinkLookup, row: int) -> tuple[np.ndarray, np.ndarray]:
    """(GPU rows, their launch calls) of op ``row``, in launch order: a slice of the
    links' ``by_launch`` (``LinkLookup.launched_rows``: no sort, so a ``ProfilerStep``
    over 3 M kernels costs a few numpy passes, not a sort of them)."""
    gpu = links.launched_rows(row).astype(np.int64)
    calls = links.analysis.launch[gpu].astype(np.int64)
    keep = calls >= 0
    return gpu[keep], calls[keep]


def _by_lane(trace: Trace, rows: np.ndarray, origin: int) -> dict[int, LaneMarks]:
    """The marked rows split by lane, each in start order.  Trace rows are stored
    lane by lane in start order, so sorting row numbers (nearly sorted already:
    timsort is linear on them) is the whole work."""
    out: dict[int, LaneMarks] = {}
    if not rows.size:
        return out
    rows = np.sort(rows, kind="stable")
    cuts = np.searchsorted(rows, trace.lane_start[1:-1])
    for part in np.split(rows, cuts):
        if not part.size:
            continue
        ts_ns = trace.ts_ns[part]
        if part.size > 1 and not np.all(np.diff(ts_ns) >= 0):
            part = part[np.argsort(ts_ns, kind="stable")]
            ts_ns = trace.ts_ns[part]
        ts = (ts_ns - origin).astype(np.float64)
        end = ts + trace.dur_ns[part].astype(np.float64)
        out[int(trace.lane[part[0]])] = LaneMarks(
            part, ts, end, np.maximum.accumulate(end), trace.depth[part].astype(np.int64)
        )
    return out


def marked_mask(
    ls: LinkSet, lanes: list[int], depth: int | None, t0: float, ns_per_cell: float, width: int
) -> np.ndarray | None:
    """Cells of one screen row covered by a marked event on ``lanes`` (at ``depth``,
    or any depth for a folded summary); None when none is."""
    if not ls.by_lane or width <= 0:
        return None
    t1 = t0 + ns_per_cell * width
    starts, stops = [], []
    for lane in lanes:
        lm = ls.by_lane.get(lane)
        if lm is None:
            continue
        lo = int(np.searchsorted(lm.maxend, t0, side="right"))
        hi = int(np.searchsorted(lm.ts, t1, side="left"))
        if lo >= hi:
            continue
        if hi - lo > MERGED_ABOVE * width:  # zoomed out over many: their union
            covered = busy_cells(lm.busy(depth), t0, ns_per_cell, width) > 0
            starts.append(np.flatnonzero(covered))
            stops.append(starts[-1] + 1)
            continue
        keep = lm.end[lo:hi] > t0
        if depth is not None:
            keep &= lm.depth[lo:hi] == depth
        if not keep.any():
            continue
        c0 = np.floor((lm.ts[lo:hi][keep] - t0) / ns_per_cell)
        c1 = np.maximum(np.ceil((lm.end[lo:hi][keep] - t0) / ns_per_cell), c0 + 1)
        starts.append(np.clip(c0, 0, width).astype(np.int64))
        stops.append(np.clip(c1, 0, width).astype(np.int64))
    if not starts:
        return None
    a, b = np.concatenate(starts), np.concatenate(stops)
    diff = np.bincount(a, minlength=width + 1) - np.bincount(b, minlength=width + 1)
    mask = np.cumsum(diff[:width]) > 0
    return mask if mask.any() else None


def screen_rows(rows: list[RowSpec], trace: Trace) -> dict[tuple, int]:
    """Where each (lane, depth) is drawn: ``("d", lane, depth)`` for a depth row,
    ``("l", lane)`` for a lane's one row, ``("g", group)`` for a folded group.
    Built once per change of the rows (the connectors look rows up in it)."""
    out: dict[tuple, int] = {}
    for i, spec in enumerate(rows):
        if spec.kind == "group" and spec.folded:
            out[("g", spec.group)] = i
        elif spec.lane >= 0:
            if spec.depth is None:
                out[("l", spec.lane)] = i
            else:
                out[("d", spec.lane, spec.depth)] = i
    return out


def row_of(trace: Trace, where: dict[tuple, int], row: int) -> int:
    """The screen row that draws trace row ``row`` (-1: hidden)."""
    lane = int(trace.lane[row])
    found = where.get(("d", lane, int(trace.depth[row])))
    if found is None:
        found = where.get(("l", lane))
    if found is None:
        found = where.get(("g", trace.lanes[lane].group))
    return -1 if found is None else found


def _in_window(ls: LinkSet, trace: Trace, t0: float, t1: float, origin: int) -> np.ndarray:
    """Indices of the links to draw: those launched inside the window and, while
    the selection has at most ``EDGE_LINKS`` links, those whose GPU event is
    inside it though the launch is not (the GPU queue delay puts most launches
    far to the left of their kernels).  Sampled evenly past the cap."""
    lo = int(np.searchsorted(ls.src_ts, t0, side="left"))
    hi = int(np.searchsorted(ls.src_ts, t1, side="left"))
    cap = MAX_CONNECTOR_COLUMNS * 8
    if ls.src.size <= EDGE_LINKS:
        d0 = (trace.ts_ns[ls.dst] - origin).astype(np.float64)
        d1 = d0 + trace.dur_ns[ls.dst]
        return np.flatnonzero(((ls.src_ts >= t0) & (ls.src_ts < t1)) | ((d1 >= t0) & (d0 < t1)))
    if hi - lo > cap:  # never a pass over millions of links a frame
        return distinct(np.linspace(lo, hi - 1, cap).astype(np.int64))
    return np.arange(lo, hi)


def _along(target: dict[int, str], col: int, d0: int, step: int, width: int) -> None:
    """One link's piece on the GPU event's row: from the launch column along to the
    event (``└──►``, or ``┘`` and ``◄`` when the event starts left of it); an
    event off the window's edge gets the arrow at the edge."""
    if d0 > col + 1:
        target[col] = DOWN_END if step > 0 else UP_END
        end = min(d0 - 1, width - 1)
        for c in range(col + 1, end):
            target[c] = HORIZONTAL
        target[end] = ARROW_RIGHT
    elif d0 < col - 1:
        target[col] = DOWN_END_LEFT if step > 0 else UP_END_LEFT
        end = max(d0 + 1, 0)
        for c in range(end + 1, col):
            target[c] = HORIZONTAL
        target[end] = ARROW_LEFT
    else:
        target.setdefault(col, ARROW_DOWN if step > 0 else ARROW_UP)


def connectors(
    ls: LinkSet,
    trace: Trace,
    where: dict[tuple, int],
    t0: float,
    ns_per_cell: float,
    width: int,
    visible: tuple[int, int],
    origin: int,
) -> dict[int, dict[int, str]]:
    """Screen row -> {cell: glyph} of the connectors whose both rows are among the
    screen rows ``visible`` (first, stop) and whose launch or GPU event is in the
    window (a launch off the window's edge draws at the edge).  The widget draws a
    glyph only where its cell is empty (or a vertical one through a wide box)."""
    out: dict[int, dict[int, str]] = {}
    if not ls.src.size or width <= 0:
        return out
    idx = _in_window(ls, trace, t0, t0 + ns_per_cell * width, origin)
    if not idx.size:
        return out
    cols = np.clip(np.floor((ls.src_ts[idx] - t0) / ns_per_cell), 0, width - 1).astype(np.int64)
    src, dst = ls.src[idx], ls.dst[idx]
    # one connector per (source row, target row, column)
    src_key = trace.lane[src].astype(np.int64) * 65536 + trace.depth[src].astype(np.int64)
    dst_key = trace.lane[dst].astype(np.int64)
    key = (src_key * (len(trace.lanes) + 1) + dst_key) * (width + 2) + cols
    _, first = np.unique(key, return_index=True)
    first = np.sort(first)[:MAX_CONNECTOR_COLUMNS]
    single = first.size == 1
    for k in first.tolist():
        a, b = row_of(trace, where, int(src[k])), row_of(trace, where, int(dst[k]))
        if a < 0 or b < 0 or a == b or not all(visible[0] <= r < visible[1] for r in (a, b)):
            continue
        col = int(cols[k])
        step = 1 if b > a else -1
        for r in range(a + step, b, step):
            out.setdefault(r, {})[col] = VERTICAL
        target = out.setdefault(b, {})
        if single:
            d0 = (float(trace.ts_ns[dst[k]] - origin) - t0) / ns_per_cell
            _along(target, col, int(np.clip(np.floor(d0), -1, width + 1)), step, width)
        else:
            target.setdefault(col, ARROW_DOWN if step > 0 else ARROW_UP)
    return out
