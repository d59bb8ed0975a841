"""The class of a job's merged trace (``job_merge``), and the column passes it
spreads over threads: a merged trace is every rank's rows at once (25 M rows for
eight 1 GB ranks), so its bounds and depths are computed in pieces, on every core."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from profiling.cores import usable_cores
from profiling.trace.model import Kind, Lane, Trace

PIECE_ROWS = 1 << 22
"""Rows per piece of a column pass spread over threads (numpy releases the GIL)."""


def pieces(n: int, size: int = PIECE_ROWS) -> list[slice]:
    """``range(n)`` cut into slices of at most ``size`` rows."""
    return [slice(lo, min(lo + size, n)) for lo in range(0, n, size)] or [slice(0, 0)]


def on_threads(fn: Any, items: Sequence[Any]) -> list[Any]:
    """``fn`` over ``items`` on a few threads, in order (numpy passes run in parallel)."""
    if len(items) < 2:
        return [fn(x) for x in items]
    workers = min(len(items), usable_cores())
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="attn-tui job pass") as ex:
        return list(ex.map(fn, items))


@dataclass
class JobTrace(Trace):
    """A merged trace: a ``Trace`` whose first start and last end are computed once,
    on every core, or known from the job's index.  The timeline asks for both as it
    opens; on eight 1 GB ranks each was a pass over 25 M rows (and a 200 MB
    temporary) on one core.  ``dataclasses.replace`` (re-alignment) drops them, as
    its times move."""

    @property
    def start_ns(self) -> int:
        return self.bounds()[0]

    @property
    def end_ns_max(self) -> int:
        return self.bounds()[1]

    def bounds(self) -> tuple[int, int]:
        """(first start, last end) of the rows, in ns; (0, 0) with no rows.  Kept
        where ``Trace`` keeps its bounds (``know_bounds``)."""
        known = self.known_bounds()
        if "start" not in known or "end" not in known:
            n = len(self)

            def one(part: slice) -> tuple[int, int]:
                ts = self.ts_ns[part]
                return int(ts.min()), int((ts + self.dur_ns[part]).max())

            found = on_threads(one, pieces(n)) if n else [(0, 0)]
            known = {"start": min(a for a, _ in found), "end": max(b for _, b in found)}
            self.know_bounds(known)
        return known["start"], known["end"]

    def set_bounds(self, bounds: tuple[int, int]) -> None:
        self.know_bounds({"start": int(bounds[0]), "end": int(bounds[1])})

    def drawn_depths(self) -> list[int]:
        """Per lane, the depth rows the timeline unfolds it to: 1 + the deepest row
        that is not a flow (1 with none), what ``tui.tracks.TrackCache.depths`` asks.
        ``Lane.max_depth`` cannot say it alone: it counts flows, and a flow sits one
        deeper than the launch it starts in.  Computed once (lanes with ``max_depth``
        0 need no pass), on every core, or known from the job's index: on a reopened
        job of eight 1 GB ranks it was a pass per lane over 25 M rows on one core."""
        known = getattr(self, "_drawn_depths", None)
        if known is None:

            def one(lane: Lane) -> int:
                if lane.max_depth == 0:  # every row at depth 0
                    return 1
                rows = self.lane_rows(lane.index)
                depth = self.depth[rows][self.kind[rows] != Kind.FLOW]
                return int(depth.max()) + 1 if depth.size else 1

            known = on_threads(one, self.lanes)
            self.set_drawn_depths(known)
        return known  # type: ignore[no-any-return]

    def set_drawn_depths(self, depths: Sequence[int]) -> None:
        object.__setattr__(self, "_drawn_depths", [int(d) for d in depths])
