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
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from profiling.analysis.job import (
    Loader,
    RankInfo,
    align_offsets,
    job_groups,
    load_each,
    name_stem,
    rank_info_of,
)
from profiling.analysis.job_trace import JobTrace, on_threads
from profiling.errors import AttnTuiError
from profiling.trace.cache import COLUMN_DTYPES
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
    partial_of: int = 0
    """A job's first rank shown alone while the rest load (``job_progressive``): how
    many ranks the whole job has.  0 for a whole job."""
    others_failed: bool = False
    """On such a first rank's job: the rest of the job failed to load."""
    rows_of: Trace | None = field(default=None, repr=False)
    """For a one-trace job whose merged trace holds that trace's rows unchanged (the
    same columns, names numbered alike): the trace.  Its analysis, stored with its
    index, is the merged trace's (``job_report``): recomputing it for the merged
    copy took 0.8 s of a 1 GB trace's ``ranks`` on 2 cores."""

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
        if len(self.ranks) == 1:
            return f"one trace (rank {self.ranks[0].rank}), not a job of several ranks"
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


_COLUMNS = {key: dtype for key, dtype in COLUMN_DTYPES.items() if key != "lane_start"}
"""The model's row columns and their dtypes (a stored model's, less its lane starts)."""


@dataclass(frozen=True)
class _Part:
    """Where one rank goes: its rows, and what its ids and indexes shift by."""

    trace: Trace
    k: int
    rows: int
    lane0: int
    entries: int
    offset_ns: int
    remap: np.ndarray


def _fill(key: str, out: np.ndarray, p: _Part) -> None:
    """Rank ``p``'s column ``key`` written into its rows of ``out`` (one pass)."""
    src = getattr(p.trace, key)
    dst = out[p.rows : p.rows + src.shape[0]]
    if key in ("name_id", "cat_id"):
        np.take(p.remap, src, out=dst)
    elif key == "ts_ns" and p.offset_ns:
        np.add(src, np.int64(p.offset_ns), out=dst)
    elif key == "lane" and p.lane0:
        np.add(src, np.int32(p.lane0), out=dst)
    elif key == "source_index" and p.entries:
        np.add(src, np.int64(p.entries), out=dst)
    elif key in ("correlation", "external_id") and p.k:
        dst[...] = src
        np.add(dst, np.int64(p.k * ID_STRIDE), out=dst, where=dst != NO_ID)
    else:
        dst[...] = src


def _columns(parts: list[_Part], total: int) -> dict[str, np.ndarray]:
    """Every column of the merged trace, each rank's piece of each column on a thread
    of its own (numpy copies release the GIL; memory bandwidth is the limit at 8 GB
    of ranks, and one thread per column left the biggest columns last)."""
    out = {key: np.empty(total, dtype=dtype) for key, dtype in _COLUMNS.items()}
    on_threads(lambda task: _fill(task[0], out[task[0]], task[1]),
               [(key, p) for key in out for p in parts])
    return out


def _unmoved(parts: list[_Part]) -> _Part | None:
    """The one part of a one-trace job whose rows need no change (no time offset, its
    names already numbered as the merged table numbers them), else None: its merged
    columns are its own, shared, not copied (0.14 s of a 1 GB trace on 2 cores)."""
    if len(parts) != 1 or parts[0].offset_ns:
        return None
    remap = parts[0].remap
    return parts[0] if np.array_equal(remap, np.arange(remap.shape[0])) else None


def merge_ranks(traces: Sequence[Trace], infos: Sequence[RankInfo], offsets: Sequence[int],
                path: str, alignment: str, note: str) -> Job:
    """One ``Trace`` of every rank (in the order given, which is rank order)."""
    table: dict[str, int] = {"": 0}
    lanes: list[Lane] = []
    groups: list[Group] = []
    ranks: list[JobRank] = []
    warnings: list[str] = []
    parts: list[_Part] = []
    starts: list[np.ndarray] = []
    rows = entries = 0
    for k, (t, info, off) in enumerate(zip(traces, infos, offsets, strict=True)):
        lane0, group0 = len(lanes), len(groups)
        parts.append(_Part(t, k, rows, lane0, entries, int(off), _intern(t.strings, table)))
        starts.append(t.lane_start[:-1] + np.int64(rows))
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
    starts.append(np.array([rows], dtype=np.int64))
    alone = _unmoved(parts)
    cols = {key: getattr(alone.trace, key) for key in _COLUMNS} if alone else _columns(parts, rows)
    first = traces[0].metadata if traces else {}
    world = infos[0].world_size if infos else None
    backend = infos[0].backend if infos else ""
    dropped = ("distributedInfo", "baseTimeNanoseconds")
    metadata = {k: v for k, v in first.items() if k not in dropped}
    metadata["distributedInfo"] = {"backend": backend, "world_size": world}
    metadata[JOB_KEY] = {"ranks": [r.rank for r in ranks], "paths": [r.path for r in ranks],
                         "alignment": alignment, "offsets_ns": [r.offset_ns for r in ranks]}
    trace = JobTrace(
        path=path, n_entries=entries, strings=list(table), **cols,
        lanes=lanes, lane_start=np.concatenate(starts).astype(np.int64), groups=groups,
        metadata=metadata, warnings=warnings,
        args_source=JobArgs([t.args_source for t in traces], [r.entries[0] for r in ranks]),
    )
    job = Job(trace, ranks, alignment, note, world, backend,
              rows_of=alone.trace if alone else None)
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


def why_not_one_job(infos: Sequence[RankInfo | None], paths: Sequence[str] = ()) -> str:
    """What keeps ranked traces from being one job, in a few words; with ``paths``
    (``infos``' files), the files at fault are named, so the user knows which to fix."""

    def named(where: list[int]) -> str:
        if not paths:
            return ""
        shown = [os.path.basename(paths[i]) for i in where[:3]]
        return ": " + ", ".join(shown) + (", ..." if len(where) > 3 else "")

    missing = [k for k, i in enumerate(infos) if i is None]
    if missing:
        n = len(missing)
        return f"{n} of them {'has' if n == 1 else 'have'} no rank in distributedInfo" + named(
            missing)
    ranked = [i for i in infos if i is not None]
    worlds = sorted({i.world_size or 0 for i in ranked})
    if len(worlds) > 1 or worlds == [1] or worlds == [0]:
        return "world sizes " + ", ".join(str(w) for w in worlds)
    counts = Counter(i.rank for i in ranked)
    twice = sorted(rank for rank, n in counts.items() if n > 1)
    if twice:
        where = [k for k, i in enumerate(ranked) if i.rank in twice]
        return "rank " + ", ".join(map(str, twice)) + " more than once" + named(where)
    return "backends " + ", ".join(sorted({i.backend or "?" for i in ranked}))


def load_job(paths: Sequence[str], load: Loader, alignment: str = "clock",
             path: str | None = None, timings: dict[str, float] | None = None) -> Job:
    """Load ``paths`` (in parallel) and merge them as one job, in rank order.

    Raises ``AttnTuiError`` when the loaded traces are not ranks of one job
    (detection read only their heads; the metadata has the last word).  A rank that
    fails to load is left out with a warning, as long as two ranks are left; else
    the first failure is raised.  ``timings`` gets the seconds of the loads and of
    the merge."""
    start = time.perf_counter()
    loaded = load_each(paths, load)
    loads_done = time.perf_counter()
    failed = [(p, x) for p, x in zip(paths, loaded, strict=True) if isinstance(x, Exception)]
    if failed and len(paths) - len(failed) < 2:
        raise failed[0][1]
    paths = [p for p, x in zip(paths, loaded, strict=True) if not isinstance(x, Exception)]
    traces = [x for x in loaded if not isinstance(x, Exception)]
    infos = [rank_info_of(p, t.metadata) for p, t in zip(paths, traces, strict=True)]
    groups = job_groups(infos, paths)
    jobs = [g for g in groups if len(g) > 1]
    if len(jobs) > 1:
        names = ", ".join(name_stem(paths[g[0]]).replace("rank.", "rank*.") for g in jobs)
        raise AttnTuiError(f"holds {len(jobs)} jobs ({names})", job_path(paths),
                           "give one job's traces, e.g. " + os.path.join(
                               job_path(paths), name_stem(paths[jobs[0][0]]).replace(
                                   "rank.", "rank*.")))
    if len(groups) != 1 or len(groups[0]) < 2:
        raise AttnTuiError(f"these {len(paths)} traces are not the ranks of one job "
                           f"({why_not_one_job(infos, paths)})", job_path(paths),
                           "give one job's rank traces or its folder")
    order = groups[0]
    traces = [traces[i] for i in order]
    offsets, note = align_offsets(traces, alignment)
    job = merge_ranks(traces, [infos[i] for i in order], offsets,  # type: ignore[misc]
                      path or job_path(paths), alignment, note)
    job.trace.warnings[:0] = [f"{p}: {_line(x)} (left out of the job)" for p, x in failed]
    job.trace.warnings += _absent_ranks(job)
    if timings is not None:
        timings["load ranks"] = loads_done - start
        timings["merge"] = time.perf_counter() - loads_done
    return job


def _absent_ranks(job: Job) -> list[str]:
    """A line naming the ranks of the job's world size that no trace given holds: the
    header's "4 ranks of 8" is easy to miss, and every straggler, wait and median is
    then over the ranks given alone."""
    given = {r.rank for r in job.ranks}
    absent = [r for r in range(job.world_size or 0) if r not in given]
    if not absent:
        return []
    shown = ", ".join(map(str, absent[:8])) + (", ..." if len(absent) > 8 else "")
    return [f"rank{'s' if len(absent) > 1 else ''} {shown} of {job.world_size} not among the "
            f"traces given: the job's figures are over its {len(given)} ranks given"]


def _line(exc: BaseException) -> str:
    """An error as the one line a command would print for it."""
    return exc.line() if isinstance(exc, AttnTuiError) else f"{type(exc).__name__}: {exc}"
