"""Why a GPU event has no launching call: orphans counted by cause.

``links.link_gpu_events`` ties a GPU event to a runtime/driver call (a row of
kind RUNTIME) with the same ``correlation`` (``correlation.launch_by_correlation``:
a lone call with that id is taken wherever it is; among several, the one of the
process that drives the device), and failing that by a launch flow.  So, under
that rule, an event stays an orphan for exactly one of these reasons, which are
its causes here, checked in this order:

``no_correlation``
    the event carries no ``correlation`` and no flow links it: nothing in the
    trace can say which call enqueued it.
``not_a_runtime_call``
    its id is on a host event that is not classed as a runtime or driver call
    (a category the loader does not know as one), so the join never sees it.
``before_window``
    no host event has its id, and it ran before the first CPU event, or before
    the first event that was launched inside the window on its own stream.  A
    stream runs its work in order, so such an event was enqueued before that
    launch: by a call made before the profiling window opened (the GPU was
    still draining older work).  This is the usual case in real traces, where
    orphans often start well after the first CPU event.
``call_missing``
    no host event has its id, yet it ran after work launched inside the window
    on its stream: its call was made while profiling but is not in the file (a
    thread not traced, events dropped by the tracer, a file cut or filtered).

A call in another process never makes an orphan under this rule (a lone call is
linked wherever it is), so that is not a cause; ``correlation`` documents why.
The one exception is a call of another rank in a file that merges ranks (pids
labelled ``[TP01] ...``): it never launched this rank's work, so every test
above looks at the event's own rank only (its host events, its first CPU event),
and the causes come out as they do on the rank's own file.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.correlation import lane_process, rank_labels
from profiling.analysis.links import Links
from profiling.analysis.ranges import distinct
from profiling.trace.model import NO_ID, Kind, LaneKind, Trace

CAUSES: dict[str, str] = {
    "no_correlation": "carry no correlation id and no launch flow",
    "not_a_runtime_call": "carry an id that only a host event not classed as a runtime "
                          "or driver call has",
    "before_window": "were enqueued before the profiling window opened (they ran before "
                     "the first CPU event, or before anything launched in the window on "
                     "their stream)",
    "call_missing": "ran after work launched in the window on their stream, yet no call "
                    "has their id: their call was not recorded (untraced thread, dropped "
                    "or filtered events?)",
}
"""Each cause's key (``stats --json`` ``orphans_by_cause``) and its words."""


def orphan_causes(trace: Trace, links: Links) -> np.ndarray:
    """Per orphan (``links.orphans``, same order), the index of its cause in ``CAUSES``."""
    orphans = links.orphans
    keys = list(CAUSES)
    out = np.full(orphans.shape[0], keys.index("call_missing"), dtype=np.int64)
    if orphans.shape[0] == 0:
        return out
    corr = trace.correlation[orphans]
    no_id = corr == NO_ID
    out[no_id] = keys.index("no_correlation")
    host = _host_rows(trace)
    on_host = np.zeros(orphans.shape[0], dtype=bool)
    labels, host_labels = _labels(trace, orphans), _labels(trace, host)
    for label in distinct(labels).tolist():  # one pass unless the file merges ranks
        mine = labels == label
        on_host[mine] = np.isin(corr[mine], trace.correlation[host[host_labels == label]])
    on_host &= ~no_id
    out[on_host] = keys.index("not_a_runtime_call")
    early = ~no_id & ~on_host & _before_window(trace, links, orphans)
    out[early] = keys.index("before_window")
    return out


def orphans_by_cause(trace: Trace, links: Links) -> dict[str, int]:
    """``{cause: count}`` for the causes that occur, in ``CAUSES`` order."""
    counts = np.bincount(orphan_causes(trace, links), minlength=len(CAUSES))
    return {key: int(n) for key, n in zip(CAUSES, counts.tolist(), strict=True) if n}


def _host_rows(trace: Trace) -> np.ndarray:
    """Rows on CPU threads that could be a launching call (not flows, which carry the
    same ids as arrows but are not calls)."""
    cpu = np.array([lane.kind == LaneKind.CPU for lane in trace.lanes], dtype=bool)
    if cpu.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    mask = cpu[trace.lane] & (trace.kind != int(Kind.FLOW)) & (trace.correlation != NO_ID)
    return np.flatnonzero(mask)


def _labels(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Per row, the code of its process's rank label (``correlation.rank_labels``), or -1."""
    codes = rank_labels(trace)
    if not (codes >= 0).any():  # one rank's own trace: every row -1, no gather
        return np.full(rows.shape[0], -1, dtype=np.int64)
    return codes[lane_process(trace)][trace.lane[rows]]


def _before_window(trace: Trace, links: Links, orphans: np.ndarray) -> np.ndarray:
    """Per orphan: it ran before its rank's first CPU event (the trace's, unless the
    file merges ranks), or before the first event on its stream whose launch is in
    the trace."""
    cpu = np.array([lane.kind == LaneKind.CPU for lane in trace.lanes], dtype=bool)
    host = np.flatnonzero(cpu[trace.lane] & (trace.kind != int(Kind.FLOW))) if cpu.size \
        else np.zeros(0, dtype=np.int64)
    early = np.zeros(orphans.shape[0], dtype=bool)
    labels, host_labels = _labels(trace, orphans), _labels(trace, host)
    for label in distinct(labels).tolist():
        mine_host = host[host_labels == label]
        if mine_host.shape[0]:
            mine = labels == label
            early[mine] |= trace.ts_ns[orphans[mine]] < int(trace.ts_ns[mine_host].min())
    linked = links.gpu_rows[links.launch[links.gpu_rows] >= 0]
    if linked.shape[0]:
        big = np.iinfo(np.int64).max
        first_on_lane = np.full(len(trace.lanes), big, dtype=np.int64)
        np.minimum.at(first_on_lane, trace.lane[linked].astype(np.int64), trace.ts_ns[linked])
        first = first_on_lane[trace.lane[orphans]]
        early |= (first != big) & (trace.ts_ns[orphans] < first)
    return early
