"""Memcpy and Memset events: what was copied, how often, by whom, and where.

A stray ``Memcpy HtoD`` inside an attention forward is the classic sign of a
host tensor (a mask, a scale) being built on the CPU every step; this module
groups the copy and fill events by name and says which ops launched them and
in which regions, so the TUI and ``stats`` can point at it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from profiling.analysis.links import Links
from profiling.analysis.regions import Regions
from profiling.trace.model import Kind, Trace


@dataclass(frozen=True)
class CopyStats:
    """One Memcpy/Memset name (``Memcpy HtoD (Pageable -> Device)``, ...).

    ``launched_by`` lists the names of the ops around the launching calls (the
    innermost op of each launch chain, ``Links.op``, as ``launch_chain`` ends),
    most frequent first (``"(unknown)"`` for orphans); ``regions`` the region
    group keys the launches fell in, in order of first appearance.
    """

    name: str
    kind: str  # "memcpy" or "memset"
    count: int
    total_us: float
    launched_by: list[str]
    regions: list[str]
    rows: np.ndarray  # trace rows, in GPU start order

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "count": self.count,
            "total_us": self.total_us,
            "launched_by": self.launched_by,
            "regions": self.regions,
        }


UNKNOWN_LAUNCHER = "(unknown)"


def copy_stats(trace: Trace, links: Links, regions: Regions) -> list[CopyStats]:
    """Every Memcpy/Memset name with count, total time, launchers and regions.

    Ordered by total time, longest first.
    """
    rows = links.gpu_rows[np.isin(trace.kind[links.gpu_rows], [Kind.MEMCPY, Kind.MEMSET])]
    if rows.shape[0] == 0:
        return []
    inside = regions.containing(links, rows)
    by_name: dict[int, list[int]] = {}
    for j, nid in enumerate(trace.name_id[rows].tolist()):
        by_name.setdefault(nid, []).append(j)
    op = links.op[rows]  # the launchers' names, looked up at once (not row by row)
    op_name = np.where(op >= 0, trace.name_id[np.maximum(op, 0)], -1).tolist()
    out = []
    for nid, members in by_name.items():
        sel = rows[members]
        ops = Counter(
            trace.strings[op_name[j]] if op_name[j] >= 0 else UNKNOWN_LAUNCHER for j in members
        )
        seen: dict[str, None] = {}
        for j in members:
            for g in inside[j]:
                seen.setdefault(g, None)
        out.append(
            CopyStats(
                name=trace.strings[nid],
                kind="memcpy" if int(trace.kind[sel[0]]) == Kind.MEMCPY else "memset",
                count=len(members),
                total_us=float(trace.dur_ns[sel].sum()) / 1000.0,
                launched_by=[name for name, _ in ops.most_common()],
                regions=list(seen),
                rows=sel,
            )
        )
    out.sort(key=lambda c: (-c.total_us, c.name))
    return out
