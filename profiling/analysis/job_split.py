"""A file that merges several ranks' traces, opened as the job it holds.

SGLang's ProfileMerger (and tools like it) writes one file from every rank's
Kineto trace: each pid becomes ``"[TP01] <pid>"`` (``correlation.rank_label``),
host and GPU alike, the events are concatenated in rank order, and only the first
rank's ``distributedInfo`` is kept.  Read as one trace, that is "rank 0 of 8"
with every GPU of the job: ``ranks`` then gave one row whose span, communication
and idle time mixed eight GPUs.

Here such a trace is cut into one trace per label (``rank_traces``) and merged
back as a job (``merged_file_job``: ``job_merge.merge_ranks``, the path every
job takes), so ``ranks``, the Ranks view, stragglers and the alignment switch
work on it as on a folder of rank traces.  Each rank's rows are its lanes'
slices in their order, so they stay sorted without a sort; the columns are
copied once (a job's merge copies them too).  Ranks are numbered in the order
the file holds them (the merger's own rank order), from 0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from profiling.analysis.correlation import rank_label, ranks_in
from profiling.analysis.job import RankInfo, align_offsets
from profiling.trace.model import Group, Lane, Trace

if TYPE_CHECKING:
    from profiling.analysis.job_merge import Job

_ROW_COLUMNS = ("ts_ns", "dur_ns", "name_id", "cat_id", "kind", "ph", "depth", "correlation",
                "external_id", "stream", "source_index", "device_type", "op_input")


def rank_groups(trace: Trace) -> list[list[int]] | None:
    """The group indexes of each rank of a merged file, in the file's rank order; None
    unless every group carries a rank label and there are two labels or more."""
    if not ranks_in([g.pid for g in trace.groups]):
        return None
    labels = [rank_label(g.pid) for g in trace.groups]
    first: dict[str, int] = {}  # label -> its first entry in the file
    by_label: dict[str, list[int]] = {}
    for g, label in zip(trace.groups, labels, strict=True):
        assert label is not None
        by_label.setdefault(label, []).append(g.index)
        for lane in g.lanes:
            lo, hi = int(trace.lane_start[lane]), int(trace.lane_start[lane + 1])
            if hi > lo:
                at = int(trace.source_index[lo:hi].min())
                first[label] = min(first.get(label, at), at)
    order = sorted(by_label, key=lambda label: (first.get(label, 1 << 62), label))
    return [by_label[label] for label in order]


def rank_traces(trace: Trace, groups: list[list[int]]) -> list[Trace]:
    """One trace per entry of ``groups`` (``rank_groups``): its lanes' rows, lanes and
    groups renumbered from 0, ``distributedInfo`` saying its rank.  Each keeps the
    file's entry count, strings and args source, so ``merge_ranks``' entry offsets
    map every row back to its place in the file."""
    info = dict(trace.metadata.get("distributedInfo") or {})
    out = []
    for rank, members in enumerate(groups):
        lanes = [lane for g in members for lane in trace.groups[g].lanes]
        lanes.sort()  # the file's lane order: rows stay sorted by (lane, ts, -dur)
        new_lane = {old: i for i, old in enumerate(lanes)}
        new_group = {old: i for i, old in enumerate(members)}
        spans = [(int(trace.lane_start[x]), int(trace.lane_start[x + 1])) for x in lanes]
        rows = np.concatenate([np.arange(lo, hi, dtype=np.int64) for lo, hi in spans]) \
            if spans else np.zeros(0, dtype=np.int64)
        sizes = np.array([hi - lo for lo, hi in spans], dtype=np.int64)
        columns: dict[str, Any] = {}
        for key in _ROW_COLUMNS:
            col = getattr(trace, key)
            columns[key] = col[rows] if col.shape[0] == len(trace) else col
        lane_map = np.full(len(trace.lanes), -1, dtype=np.int32)
        lane_map[lanes] = np.arange(len(lanes), dtype=np.int32)
        metadata = {**trace.metadata,
                    "distributedInfo": {**info, "rank": rank, "world_size": len(groups)}}
        out.append(Trace(
            path=trace.path, n_entries=trace.n_entries, strings=trace.strings,
            lane=lane_map[trace.lane[rows]],
            lanes=[_lane(trace.lanes[x], new_lane[x], new_group[trace.lanes[x].group])
                   for x in lanes],
            lane_start=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
            groups=[_group(trace.groups[g], new_group[g], new_lane) for g in members],
            metadata=metadata, warnings=list(trace.warnings) if rank == 0 else [],
            args_source=trace.args_source, **columns,
        ))
    return out


def _lane(lane: Lane, index: int, group: int) -> Lane:
    return replace(lane, index=index, group=group)


def _group(group: Group, index: int, new_lane: dict[int, int]) -> Group:
    return replace(group, index=index, lanes=[new_lane[x] for x in group.lanes])


def merged_file_job(trace: Trace, path: str, alignment: str = "clock") -> Job | None:
    """The job a merged file holds (``rank_traces`` merged by ``merge_ranks``), or
    None when ``trace`` is one rank's own (``rank_groups``)."""
    groups = rank_groups(trace)
    if groups is None:
        return None
    traces = rank_traces(trace, groups)
    backend = str((trace.metadata.get("distributedInfo") or {}).get("backend") or "")
    infos = [RankInfo(path, k, len(traces), backend) for k in range(len(traces))]
    offsets, note = align_offsets(traces, alignment)
    from profiling.analysis.job_merge import merge_ranks  # a job's merge, not compare's split

    return merge_ranks(traces, infos, offsets, path, alignment, f"{note} (one merged file)")
