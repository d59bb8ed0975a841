"""The call that launched a device event: the join on ``correlation``, per process.

CUPTI and roctracer give every device event (kernel, memcpy, memset, sync) the
``correlation`` of the runtime or driver call that enqueued it.  Those ids are
counted per process, so in a file that holds several processes (merged traces,
AMD traces whose ids restart) one id can name a call in each of them.  A device
event belongs to the call of *its* process only: the process that drives its
device.  Which process that is, the unambiguous links say (an id that only one
call carries); an ambiguous id then goes to a call of that process, and within
it to the call whose External id agrees with the event's, that was made before
the event ran, nearest in time.  An id that merely equals another process's id
links nothing it should not.

Used by ``links`` (GPU events) and by the op table (GPU events and sync slices),
so both answer "which call launched this" with one rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from profiling.analysis.ranges import concat_ranges, range_owner
from profiling.trace.model import NO_ID, LaneKind, Trace


def lane_process(trace: Trace) -> np.ndarray:
    """Per lane, the index of its group: the host process of a CPU thread, the device
    of a GPU stream."""
    return np.array([lane.group for lane in trace.lanes], dtype=np.int64)


def process_affinity(trace: Trace, device_rows: np.ndarray,
                     call_rows: np.ndarray) -> np.ndarray:
    """``[process group, device group]`` counts of the given (device row, call row) links."""
    groups = max(len(trace.groups), 1)
    if device_rows.shape[0] == 0:
        return np.zeros((groups, groups), dtype=np.int64)
    proc = lane_process(trace)
    cell = proc[trace.lane[call_rows]] * groups + proc[trace.lane[device_rows]]
    return np.bincount(cell, minlength=groups * groups).reshape(groups, groups)


_RANK_LABEL = re.compile(r"\[[^\]]+\](?=\s|$)")
"""A rank label at the start of a pid: ``[TP01]``, ``[TP00-DP01-PP02-EP03]``."""


def rank_label(pid: object) -> str | None:
    """The rank label a pid starts with (``"[TP01] 5001"`` -> ``"[TP01]"``), or None."""
    found = _RANK_LABEL.match(str(pid).strip())
    return found.group(0) if found else None


def ranks_in(pids: Sequence[object]) -> int:
    """How many ranks a file of these pids merges: its rank labels when every pid has
    one and there are two or more, else 0 (one rank's own trace)."""
    labels = [rank_label(pid) for pid in pids]
    if not labels or any(label is None for label in labels):
        return 0
    n = len(set(labels))
    return n if n >= 2 else 0


def rank_labels(trace: Trace) -> np.ndarray:
    """Per group, a code for the rank label its pid starts with (``rank_label``), or -1.

    A file merging several ranks' traces names each rank's processes and devices
    with one label (SGLang's ProfileMerger: ``"[TP01] 5001"`` for the host,
    ``"[TP01] 1"`` for its GPU) and leaves their correlation ids as they were:
    counted per process, so in ranks that run in step every id is every rank's,
    and no link says which process drives which device.  The label does.  A bare
    pid (``5001``, ``"5001"``) has none."""
    codes: dict[str, int] = {}
    out = np.full(max(len(trace.groups), 1), -1, dtype=np.int64)
    for i, g in enumerate(trace.groups):
        label = rank_label(g.pid)
        if label is not None:
            out[i] = codes.setdefault(label, len(codes))
    return out


def other_rank(trace: Trace, device_rows: np.ndarray, call_rows: np.ndarray) -> np.ndarray:
    """Per pair: True where the call and the device carry two different rank labels.

    Such a call never launched onto that device: a rank's host drives only its own
    GPU.  In a merged file an id of one rank, whose call fell before the profiling
    window, is often some other rank's only call with that id (the DLRM job merged
    as SGLang does: 81 of its 2,244 GPU events were taken by another rank's call)."""
    codes = rank_labels(trace)
    if not (codes >= 0).any():  # one rank's own trace: no gathers over its rows
        return np.zeros(call_rows.shape[0], dtype=bool)
    label = codes[lane_process(trace)]
    a, b = label[trace.lane[call_rows]], label[trace.lane[device_rows]]
    return (a >= 0) & (b >= 0) & (a != b)


def drives(trace: Trace, affinity: np.ndarray, device_rows: np.ndarray,
           call_rows: np.ndarray) -> np.ndarray:
    """Per pair: whether the call's process may have launched onto the device's group.

    True when that process has launched onto that device before, or when no
    process has (nothing is known about the device yet).
    """
    proc = lane_process(trace)
    p = proc[trace.lane[call_rows]]
    d = proc[trace.lane[device_rows]]
    known = affinity.sum(axis=0)[d] > 0
    return (~known | (affinity[p, d] > 0)) & ~other_rank(trace, device_rows, call_rows)


def launch_by_correlation(trace: Trace, device_rows: np.ndarray,
                          call_rows: np.ndarray) -> np.ndarray:
    """For each of ``device_rows``, the row of ``call_rows`` that launched it, or -1.

    A call launches a device event when both carry the same ``correlation`` and the
    call is in the process that drives the event's device (see the module's text).
    """
    out = np.full(device_rows.shape[0], -1, dtype=np.int64)
    corr = trace.correlation
    has = np.flatnonzero(corr[device_rows] != NO_ID)
    cand = call_rows[corr[call_rows] != NO_ID]
    if has.shape[0] == 0 or cand.shape[0] == 0:
        return out
    cand = cand[np.argsort(corr[cand], kind="stable")]
    keys = corr[cand]
    dev = device_rows[has]
    lo = np.searchsorted(keys, corr[dev], side="left")
    hi = np.searchsorted(keys, corr[dev], side="right")
    single = (hi - lo) == 1
    single[single] = ~other_rank(trace, dev[single], cand[lo[single]])
    out[has[single]] = cand[lo[single]]
    multi = np.flatnonzero((hi - lo) > 1)
    if multi.shape[0]:
        affinity = process_affinity(trace, dev[single], cand[lo[single]])
        out[has[multi]] = _best_candidates(trace, dev[multi], cand, lo[multi], hi[multi],
                                           affinity)
    return out


def _best_candidates(trace: Trace, dev: np.ndarray, cand: np.ndarray, lo: np.ndarray,
                     hi: np.ndarray, affinity: np.ndarray) -> np.ndarray:
    """Among ``cand[lo[i]:hi[i]]``, the call that launched ``dev[i]``.

    Preference, in order: a process that drives the device, a process labelled as
    the device is (``rank_labels``), a CPU thread, an External id equal to the
    event's (a real one, not its own correlation repeated), a call made before the
    event started, the nearest in time.
    """
    owner = range_owner(lo, hi)
    rows = cand[concat_ranges(lo, hi)]
    mine = ~other_rank(trace, dev[owner], rows)
    owner, rows = owner[mine], rows[mine]
    best = np.full(dev.shape[0], -1, dtype=np.int64)
    if rows.shape[0] == 0:
        return best
    d = dev[owner]
    ext, corr, ts = trace.external_id, trace.correlation, trace.ts_ns
    on_cpu_lane = np.array([lane.kind == LaneKind.CPU for lane in trace.lanes], dtype=bool)
    affine = drives(trace, affinity, d, rows)
    label = rank_labels(trace)[lane_process(trace)]
    call_label, dev_label = label[trace.lane[rows]], label[trace.lane[d]]
    same_label = (call_label >= 0) & (call_label == dev_label)
    on_cpu = on_cpu_lane[trace.lane[rows]]
    real_ext = (ext[d] != NO_ID) & (ext[d] > 0) & (ext[d] != corr[d])
    same_ext = real_ext & (ext[rows] == ext[d])
    before = ts[rows] <= ts[d]
    nearness = -np.abs(ts[d] - ts[rows])
    order = np.lexsort((nearness, before, same_ext, on_cpu, same_label, affine, owner))
    last = np.flatnonzero(np.r_[owner[order][1:] != owner[order][:-1], True])
    best[owner[order][last]] = rows[order][last]
    return best
