"""Memcpy and Memset events: what was copied, how often, by whom, and where.

A stray ``Memcpy HtoD`` inside an attention forward is the classic sign of a
host tensor (a mask, a scale) being built on the CPU every step; this module
groups the copy and fill events by name and says which ops launched them and
in which regions, so the TUI and ``stats`` can point at it.
"""

from __future__ import annotations

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
    nids = trace.name_id[rows]
    _, first_j, name_code = np.unique(nids, return_index=True, return_inverse=True)
    name_code = np.asarray(name_code).reshape(-1)
    members = np.argsort(name_code, kind="stable")  # each name's rows, in row order
    of_name = np.split(members, np.cumsum(np.bincount(name_code))[:-1])
    launchers = _launchers(trace, links, rows, name_code)
    inside = _regions_of_names(regions, links, rows, name_code)
    out = []
    for c in np.argsort(first_j, kind="stable").tolist():  # names by first appearance
        sel = rows[of_name[c]]
        out.append(
            CopyStats(
                name=trace.strings[int(nids[first_j[c]])],
                kind="memcpy" if int(trace.kind[sel[0]]) == Kind.MEMCPY else "memset",
                count=int(sel.shape[0]),
                total_us=float(trace.dur_ns[sel].sum()) / 1000.0,
                launched_by=launchers[c],
                regions=inside[c],
                rows=sel,
            )
        )
    out.sort(key=lambda c: (-c.total_us, c.name))
    return out


def _launchers(trace: Trace, links: Links, rows: np.ndarray, name_code: np.ndarray
               ) -> list[list[str]]:
    """Per copy name (code), its launchers' op names, most frequent first and ties in
    order of first appearance (``Counter.most_common``), ``UNKNOWN_LAUNCHER`` for
    orphans; counted with one ``np.unique`` over (name, launcher) pairs."""
    op = links.op[rows]
    op_nid = np.where(op >= 0, trace.name_id[np.maximum(op, 0)], -1)
    ids, op_code = np.unique(op_nid, return_inverse=True)
    text: dict[str, int] = {}  # one code per distinct string (names are data)
    string_code = np.array(
        [text.setdefault(trace.strings[i] if i >= 0 else UNKNOWN_LAUNCHER, len(text))
         for i in ids.tolist()], dtype=np.int64)
    launcher = string_code[np.asarray(op_code).reshape(-1)]
    pairs, first, count = np.unique(name_code * len(text) + launcher, return_index=True,
                                    return_counts=True)
    order = np.lexsort((first, -count, pairs // len(text)))
    strings = list(text)
    out: list[list[str]] = [[] for _ in range(int(name_code.max()) + 1)]
    for key in pairs[order].tolist():
        out[key // len(text)].append(strings[key % len(text)])
    return out


def _regions_of_names(regions: Regions, links: Links, rows: np.ndarray,
                      name_code: np.ndarray) -> list[list[str]]:
    """Per copy name (code), the region groups its rows were launched in, in order of
    first appearance (rows in order, each row's groups outermost first)."""
    out: list[list[str]] = [[] for _ in range(int(name_code.max()) + 1)]
    at, group, names = regions.containing_pairs(links, rows)
    if at.shape[0] == 0:
        return out
    key = name_code[at] * len(names) + group
    _, first = np.unique(key, return_index=True)
    first = first[np.lexsort((first, name_code[at[first]]))]
    for c, g in zip(name_code[at[first]].tolist(), group[first].tolist(), strict=True):
        out[c].append(names[g])
    return out
