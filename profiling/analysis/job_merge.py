"""A job's ranks as one ``Trace``: every existing view then works on a job unchanged.

The ranks' columns are concatenated in rank order.  Each trace's rows are
sorted by (lane, ts, -dur) and the lanes of rank k all come after those of rank
k-1, so the concatenation is sorted too and every rank is one contiguous slice
of rows, lanes and groups (``JobRank.rows`` etc.), which is how the per-rank
figures are computed without copying anything again.

What changes on the way:

- ``ts_ns`` gets the rank's alignment offset (``job.align_offsets``);
- strings are interned again into one table;
- ``correlation`` and ``external_id`` are moved into a disjoint range per rank
  (``ID_STRIDE``), so a kernel on rank 3 can never be linked to a launch on
  rank 5 that happens to share its CUPTI id;
- groups are labelled ``rank 3 · GPU 3`` (the rank, then the trace's own label);
- ``source_index`` is offset per rank and ``args`` come from a composite source
  that hands each entry to its rank's own lazy reader.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from profiling.analysis.job import (
    Loader,
    RankInfo,
    align_offsets,
    job_groups,
    load_all,
    rank_info_of,
)
from profiling.errors import AttnTuiError
from profiling.trace.model import NO_ID, ArgsSource, Group, Lane, Trace

ID_STRIDE = 1 << 44
"""Ids of rank k live in [k * ID_STRIDE, (k + 1) * ID_STRIDE): CUPTI ids stay far below."""

JOB_KEY = "attn_tui_job"
"""Top-level metadata key of a merged trace: ranks, paths, alignment, offsets."""


@dataclass(frozen=True)
class JobRank:
    """One rank's place in the merged trace (half-open index ranges)."""

    rank: int
    path: str
    offset_ns: int
    rows: tuple[int, int]
    lanes: tuple[int, int]
    groups: tuple[int, int]
    entries: tuple[int, int]
    metadata: dict[str, Any] = field(repr=False)


@dataclass
class Job:
    """A merged trace and where each rank lies in it."""

    trace: Trace = field(repr=False)
    ranks: list[JobRank]
    alignment: str  # "clock" or "step"
    alignment_note: str
    world_size: int | None
    backend: str

    def rank_of_lane(self) -> np.ndarray:
        """The rank number of every lane of the merged trace."""
        out = np.zeros(len(self.trace.lanes), dtype=np.int64)
        for r in self.ranks:
            out[r.lanes[0]:r.lanes[1]] = r.rank
        return out

    def rank_of_row(self, row: int) -> JobRank:
        starts = [r.rows[0] for r in self.ranks]
        return self.ranks[max(bisect.bisect_right(starts, row) - 1, 0)]

    def header(self) -> str:
        """``8 ranks of 8 · nccl · aligned on clock: ...`` for the status line."""
        world = f" of {self.world_size}" if self.world_size else ""
        backend = f" · {self.backend}" if self.backend else ""
        return f"job: {len(self.ranks)} ranks{world}{backend} · aligned on {self.alignment_note}"


class JobArgs:
    """``args`` by merged entry index, from each rank's own source."""

    def __init__(self, sources: Sequence[ArgsSource | None], entry_starts: Sequence[int]) -> None:
        self._sources = list(sources)
        self._starts = list(entry_starts)

    def args(self, entry: int) -> dict[str, Any]:
        return self.args_many([entry])[0]

    def args_many(self, entries: list[int]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for entry in entries:
            k = max(bisect.bisect_right(self._starts, entry) - 1, 0)
            source = self._sources[k]
            out.append(source.args(entry - self._starts[k]) if source is not None else {})
        return out


def _intern(strings: list[str], table: dict[str, int]) -> np.ndarray:
    return np.fromiter((table.setdefault(s, len(table)) for s in strings), dtype=np.int32,
                       count=len(strings))


def _shift_ids(ids: np.ndarray, k: int) -> np.ndarray:
    return np.where(ids == NO_ID, NO_ID, ids + k * ID_STRIDE)


def merge_ranks(traces: Sequence[Trace], infos: Sequence[RankInfo], offsets: Sequence[int],
                path: str, alignment: str, note: str) -> Job:
    """One ``Trace`` of every rank (in the order given, which is rank order)."""
    table: dict[str, int] = {"": 0}
    cols: dict[str, list[np.ndarray]] = {k: [] for k in (
        "ts_ns", "dur_ns", "name_id", "cat_id", "kind", "ph", "lane", "depth", "correlation",
        "external_id", "stream", "source_index", "device_type", "lane_start")}
    lanes: list[Lane] = []
    groups: list[Group] = []
    ranks: list[JobRank] = []
    warnings: list[str] = []
    rows = entries = 0
    for k, (t, info, off) in enumerate(zip(traces, infos, offsets, strict=True)):
        remap = _intern(t.strings, table)
        lane0, group0 = len(lanes), len(groups)
        cols["ts_ns"].append(t.ts_ns + np.int64(off))
        cols["dur_ns"].append(t.dur_ns)
        cols["name_id"].append(remap[t.name_id] if len(t) else t.name_id)
        cols["cat_id"].append(remap[t.cat_id] if len(t) else t.cat_id)
        for key in ("kind", "ph", "depth", "stream", "device_type"):
            cols[key].append(getattr(t, key))
        cols["lane"].append(t.lane + np.int32(lane0))
        cols["correlation"].append(_shift_ids(t.correlation, k))
        cols["external_id"].append(_shift_ids(t.external_id, k))
        cols["source_index"].append(t.source_index + np.int64(entries))
        cols["lane_start"].append(t.lane_start[:-1] + np.int64(rows))
        lanes += [replace(lane, index=lane.index + lane0, group=lane.group + group0)
                  for lane in t.lanes]
        groups += [replace(g, index=g.index + group0, label=f"rank {info.rank} · {g.label}",
                           lanes=[i + lane0 for i in g.lanes]) for g in t.groups]
        warnings += [f"rank {info.rank}: {w}" for w in t.warnings]
        ranks.append(JobRank(info.rank, t.path, int(off), (rows, rows + len(t)),
                             (lane0, len(lanes)), (group0, len(groups)),
                             (entries, entries + t.n_entries), t.metadata))
        rows += len(t)
        entries += t.n_entries
    cols["lane_start"].append(np.array([rows], dtype=np.int64))
    merged = {k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()}
    first = traces[0].metadata if traces else {}
    world = infos[0].world_size if infos else None
    backend = infos[0].backend if infos else ""
    dropped = ("distributedInfo", "baseTimeNanoseconds")
    metadata = {k: v for k, v in first.items() if k not in dropped}
    metadata["distributedInfo"] = {"backend": backend, "world_size": world}
    metadata[JOB_KEY] = {"ranks": [r.rank for r in ranks], "paths": [r.path for r in ranks],
                         "alignment": alignment, "offsets_ns": [r.offset_ns for r in ranks]}
    trace = Trace(
        path=path, n_entries=entries, strings=list(table),
        ts_ns=merged["ts_ns"].astype(np.int64), dur_ns=merged["dur_ns"].astype(np.int64),
        name_id=merged["name_id"].astype(np.int32), cat_id=merged["cat_id"].astype(np.int32),
        kind=merged["kind"].astype(np.uint8), ph=merged["ph"].astype(np.uint8),
        lane=merged["lane"].astype(np.int32), depth=merged["depth"].astype(np.int16),
        correlation=merged["correlation"].astype(np.int64),
        external_id=merged["external_id"].astype(np.int64),
        stream=merged["stream"].astype(np.int64),
        source_index=merged["source_index"].astype(np.int64),
        lanes=lanes, lane_start=merged["lane_start"].astype(np.int64), groups=groups,
        metadata=metadata, warnings=warnings,
        args_source=JobArgs([t.args_source for t in traces], [r.entries[0] for r in ranks]),
        device_type=merged["device_type"].astype(np.uint8),
    )
    job = Job(trace, ranks, alignment, note, world, backend)
    object.__setattr__(trace, JOB_ATTR, job)  # job_of_trace: views that get only the trace
    return job


JOB_ATTR = "_attn_tui_job"


def job_of_trace(trace: Trace) -> Job | None:
    """The job a merged trace was built from (None for a plain trace)."""
    job = getattr(trace, JOB_ATTR, None)
    return job if isinstance(job, Job) else None


def job_path(paths: Sequence[str]) -> str:
    """What a job is called: its traces' folder when they share one."""
    folders = {os.path.dirname(os.path.abspath(p)) for p in paths}
    return folders.pop() if len(folders) == 1 else os.path.commonpath(list(folders))


def load_job(paths: Sequence[str], load: Loader, alignment: str = "clock",
             path: str | None = None) -> Job:
    """Load ``paths`` (in parallel) and merge them as one job, in rank order.

    Raises ``AttnTuiError`` when the loaded traces are not ranks of one job
    (detection read only their heads; the metadata has the last word)."""
    traces = load_all(paths, load)
    infos = [rank_info_of(p, t.metadata) for p, t in zip(paths, traces, strict=True)]
    groups = job_groups(infos, paths)
    if len(groups) != 1 or len(groups[0]) < 2:
        raise AttnTuiError("these traces are not the ranks of one job", job_path(paths),
                           "each needs distributedInfo with its own rank and one world size")
    order = groups[0]
    traces = [traces[i] for i in order]
    offsets, note = align_offsets(traces, alignment)
    return merge_ranks(traces, [infos[i] for i in order], offsets,  # type: ignore[misc]
                       path or job_path(paths), alignment, note)
