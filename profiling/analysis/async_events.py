"""Which host slices torch counts as *async* events: a c10d Work's profiling range.

A collective of ``torch.distributed`` (gloo, NCCL, UCC, MPI) opens a
``record_function`` named ``<backend>:<op>`` (``gloo:all_reduce``,
``nccl:all_reduce``, ``gloo:send``) when the work is created, and c10d's ``Work``
marks it async (``RecordFunction::_setAsync``): the work may complete on another
thread, so the range need not nest with the ops around it, and in a trace it
often does not (``gloo:send`` ends after the ``c10d::recv_`` that started inside
it).  torch's ``EventList`` therefore leaves async events out of the parent/child
tree and gives them no self time (``FunctionEvent.self_cpu_time_total`` is 0, and
so are their device times); their ``cpu_time_total`` is their duration.

The Chrome trace does not carry the flag, so it is recognised by the name torch
gives the range: a user annotation ``<backend>:<op>`` with a c10d backend.
"""

from __future__ import annotations

import re

import numpy as np

from profiling.trace.model import Kind, Trace

C10D_WORK = re.compile(r"^(gloo|nccl|ucc|mpi|xccl|hccl|mccl|rccl):[a-z_0-9]+$")
"""``ProcessGroup<Backend>`` profiling titles: ``<backend>:<collective>``."""


def async_rows(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Per row: True for a c10d Work's async range (see the module docstring)."""
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    names = np.array([bool(C10D_WORK.match(s)) for s in trace.strings], dtype=bool)
    return names[trace.name_id[rows]] & (trace.kind[rows] == Kind.USER_ANNOTATION)


def set_apart(trace: Trace, host: np.ndarray, lane: np.ndarray,
              given: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Move async rows after all others, each on a lane of its own, so that torch's
    stack rule never nests them (they have no parent and no children); returns the
    reordered (host, lane, given) and the async mask in that order."""
    mask = async_rows(trace, host)
    if not mask.any():
        return host, lane, given, mask
    sync, apart = np.flatnonzero(~mask), np.flatnonzero(mask)
    own_lanes = int(lane.max()) + 1 + np.arange(apart.shape[0], dtype=lane.dtype)
    host = np.concatenate((host[sync], host[apart]))
    lane = np.concatenate((lane[sync], own_lanes))
    given = np.concatenate((given[sync], given[apart]))
    flags = np.concatenate((np.zeros(sync.shape[0], bool), np.ones(apart.shape[0], bool)))
    return host, lane, given, flags
