"""A profiler step's GPU work is its whole process's, not only its thread's.

``prof.step()`` marks an iteration of the whole process: ``ProfilerStep#N`` is
recorded on the thread that calls it, but a training step's backward pass runs on
autograd worker threads (``pt_autograd_0``) while that thread waits in
``loss.backward()``, and those kernels are the step's too (HTA assigns events to
iterations the same way: launched in the step's range, on any thread).  Counted on
the step's own thread only, a training step lost most of its GPU work: on the real
MI300 ResNet trace 286 of 895 GPU events and 2.2 of 22.9 ms per step, and the
findings called it launch-bound with the GPU 88 % idle.  Other annotations
(``attn_fwd``, any ``record_function``) stay per thread: two threads may run the
same region at once, and their work is their own.

``Links.by_launch`` is ordered by (launch lane, launch start), so that a thread's
launches in a time range are one slice of it.  For a process that launches from
two threads or more, ``with_process_sections`` appends a section of its launches
ordered by start alone, under a lane number of its own past the real lanes
(``len(trace.lanes) + group``); ``query_lanes`` gives a step that number, so a
step's GPU events are again one slice (``launch_lo``/``launch_hi``), and whatever
reads an instance's events through its slice reads its whole process's.  A
process that launches from one thread needs no section: its step reads that
thread's launches, whichever thread the step itself is on.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.correlation import lane_process
from profiling.trace.model import Trace


def with_process_sections(
    trace: Trace, by_launch: np.ndarray, launch: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(by_launch, by_launch_lane, by_launch_ts) with a section per process that
    launches from two lanes or more appended (see the module doc)."""
    calls = launch[by_launch]
    lane = trace.lane[calls].astype(np.int64)
    ts = trace.ts_ns[calls]
    n_lanes = len(trace.lanes)
    if by_launch.shape[0] == 0 or n_lanes == 0:
        return by_launch, lane, ts
    process = lane_process(trace)
    launching = np.flatnonzero(np.bincount(lane, minlength=n_lanes))  # lanes that launch
    multi = np.bincount(process[launching]) >= 2  # processes launching from two or more
    if not multi.any():
        return by_launch, lane, ts
    proc = process[lane]
    sel = np.flatnonzero(multi[proc])
    sel = sel[np.lexsort((trace.ts_ns[by_launch[sel]], ts[sel], proc[sel]))]
    return (
        np.concatenate((by_launch, by_launch[sel])),
        np.concatenate((lane, n_lanes + proc[sel])),
        np.concatenate((ts, ts[sel])),
    )


def step_rows(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Per row: True for a profiler step (``ProfilerStep#N``, either category)."""
    from profiling.analysis.regions import STEP_PREFIX  # regions imports this module

    if rows.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    ids, which = np.unique(trace.name_id[rows], return_inverse=True)  # each name once
    steps = np.array([trace.strings[i].startswith(STEP_PREFIX) for i in ids.tolist()])
    return steps[np.asarray(which).reshape(-1)]


def query_lanes(trace: Trace, by_launch_lane: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per region row, the lane of ``by_launch`` to look its launches up on: for a
    profiler step, where its process's launches are one slice (its section when it
    launches from two threads or more, else the one thread it launches from); for
    anything else, or a step of a process that launches nothing, its own lane.

    WHY the one launching thread: a process may launch from a single thread that is
    not the step's (``prof.step()`` called on the main thread while a worker thread
    runs the model); it gets no section, and the step's own lane holds no launch."""
    lanes = trace.lane[rows].astype(np.int64)
    if by_launch_lane.shape[0] == 0 or rows.shape[0] == 0:
        return lanes
    n_lanes = len(trace.lanes)
    process = lane_process(trace)
    by_launch_lane = np.asarray(by_launch_lane, dtype=np.int64)
    first = by_launch_lane[np.concatenate(([True], by_launch_lane[1:] != by_launch_lane[:-1]))]
    real, sections = first[first < n_lanes], first[first >= n_lanes]  # sorted, distinct
    home = np.full(int(process.max()) + 1, -1, dtype=np.int64)
    home[process[real]] = real  # right for a process with one launching lane
    home[sections - n_lanes] = sections  # a process with two or more has its section
    step_home = home[process[lanes]]
    return np.where(step_rows(trace, rows) & (step_home >= 0), step_home, lanes)


def scopes(trace: Trace, lanes: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Where an op must be to belong to a region: its lane, or for a step (``steps``)
    any lane of its process (coded as ``-1 - process``, apart from lane numbers)."""
    lanes = np.asarray(lanes, dtype=np.int64)
    if lanes.shape[0] == 0:
        return lanes
    return np.where(steps, -1 - lane_process(trace)[lanes], lanes)
