"""The same collective on every rank, and how long each rank waited in it.

A collective (all-reduce, all-to-all, ...) runs as one NCCL/RCCL kernel per rank,
and none of them can finish before the last rank has arrived: a rank that
starts its kernel early sits in it, waiting.  So for each collective matched
across ranks, ``wait`` of rank k is the last arrival's start minus rank k's
start (0 for the last one to arrive): time lost to the others, not to the
network.  This is only as good as the alignment of the ranks' clocks
(``job.align_offsets``), which the header says.  Where the alignment puts the
last arrival after rank k's kernel had already ended, the ranks' times disagree
(aligning on step starts when the steps began apart, or hosts' clocks apart): a
rank cannot wait in a kernel longer than the kernel ran, so the wait is capped
at the kernel's own length, and ``disagreement`` says how far apart they were.

A job on the CPU (gloo) has no kernels: its collectives are the host ranges
gloo records (``gloo:all_reduce``), matched and measured the same way.

Matching: when the kernels' ``args`` carry a sequence number (``Seq``, the process
group's counter, which newer PyTorch copies there with the group's name and
ranks), kernels with the same (process group, name, number) are one collective;
otherwise the n-th kernel of a name (in its process group, when the args name
it) on one rank matches the n-th of that name on every other rank (collectives
are issued in the same order everywhere, or the job deadlocks).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiling.analysis.job_merge import Job, job_of_trace
from profiling.analysis.rank_breakdown import comm_names
from profiling.trace.model import NO_ID, Kind, Trace

SEQ_KEYS = ("Seq", "seq", "Sequence number", "sequence_number")
PG_KEYS = ("Process Group Name", "pg_name", "Process Group Description")


@dataclass(frozen=True)
class Collective:
    """One collective across ranks: per rank (in ``Job.ranks`` order) its merged
    row, start and end ns (-1 when that rank has no match) and wait ns."""

    name: str
    index: int  # n-th of its name (or its sequence number)
    rows: tuple[int, ...]
    start_ns: tuple[int, ...]
    end_ns: tuple[int, ...]
    wait_ns: tuple[int, ...]
    by_seq: bool

    @property
    def last_rank_index(self) -> int:
        """Position (in ``Job.ranks``) of the last rank to arrive."""
        return int(np.argmax(self.start_ns))

    @property
    def skew_ns(self) -> int:
        """Last arrival minus first arrival."""
        present = [s for s in self.start_ns if s >= 0]
        return max(present) - min(present) if present else 0


def short_name(name: str) -> str:
    """A kernel's name up to its argument list (``ncclKernel_AllReduce_RING_LL_Sum_float``)."""
    return name.split("(", 1)[0].strip() or name


CPU_COLLECTIVES = ("all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
                   "broadcast", "all_to_all", "alltoall", "barrier", "reduce", "gather",
                   "scatter")
"""Names (after ``gloo:``) of the host-side ranges of collectives (not send/recv: a
point-to-point pair is two different names on its two ranks)."""


def cpu_comm_names(strings: list[str]) -> np.ndarray:
    """Per string id: a gloo collective's host range (``gloo:all_reduce``)."""
    return np.fromiter((s.startswith("gloo:") and s[5:] in CPU_COLLECTIVES for s in strings),
                       dtype=bool, count=len(strings))


def comm_rows(trace: Trace, rows: tuple[int, int], comm: np.ndarray,
              cpu_comm: np.ndarray | None = None) -> np.ndarray:
    """Communication kernel rows of one rank, in GPU start order; a rank with none
    (gloo, on the CPU) gives its collectives' host ranges instead (``cpu_comm``)."""
    lo, hi = rows
    kind, names = trace.kind[lo:hi], trace.name_id[lo:hi]
    found = np.flatnonzero((kind == Kind.KERNEL) & comm[names]) + lo
    if not found.shape[0] and cpu_comm is not None:
        found = np.flatnonzero((kind == Kind.USER_ANNOTATION) & cpu_comm[names]) + lo
    return found[np.argsort(trace.ts_ns[found], kind="stable")]


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _group(args: dict[str, Any]) -> tuple[str, str]:
    """(process group name, its ranks) from a kernel's args ('' when absent)."""
    name = next((str(args[k]) for k in PG_KEYS if k in args), "")
    return name, str(args.get("Process Group Ranks", ""))


def _first_keyed(trace: Trace, rows: np.ndarray) -> bool:
    """Whether the first of a rank's comm kernels names its process group or carries
    a sequence number in its args (newer PyTorch copies both there)."""
    first = trace.args(int(rows[0])) if rows.shape[0] else {}
    return any(k in first for k in (*SEQ_KEYS, *PG_KEYS, "Process Group Ranks"))


def _keys(trace: Trace, rows: np.ndarray,
          keyed: bool) -> tuple[list[tuple[Any, ...]], bool]:
    """Match keys of one rank's comm kernels.  ``keyed`` (the job's first kernels
    carry keys on some rank, ``_first_keyed``): every kernel's args are read, and
    the key is (group, sequence number), or (group, name, n-th of that name in that
    group) for a kernel without a number, so that collectives of two tensor-parallel
    groups are never taken for one.  Otherwise: (name, n-th of that name).  Decided
    for the whole job, not per rank: a rank whose first kernel alone lacks the keys
    (its window opened on a collective recorded without them) would else be keyed
    by order while its peers are keyed by number, and match none of them."""
    every = trace.args_of(rows) if keyed else [{} for _ in range(rows.shape[0])]
    seen: dict[tuple[Any, ...], int] = defaultdict(int)
    out: list[tuple[Any, ...]] = []
    by_seq = keyed
    for row, args in zip(rows.tolist(), every, strict=True):
        group = _group(args) if keyed else ("", "")
        seq = next((_whole(args.get(k)) for k in SEQ_KEYS if _whole(args.get(k)) is not None),
                   None)
        by_seq = by_seq and seq is not None
        name = short_name(trace.name(row))
        out.append(("seq", *group, name, seq) if seq is not None else
                   ("order", *group, name, seen[(group, name)]))
        seen[(group, name)] += 1
    return out, by_seq


def _in_window(trace: Trace, rank_rows: tuple[int, int], rows: np.ndarray) -> np.ndarray:
    """A rank's comm kernels (start order) from the first whose launch is in its trace.

    The ones before it were launched before the profiler's window opened and were
    still running when it did: one rank's window catches such a kernel and another's
    does not, and counted by order every later collective of that rank would be
    matched with its peers' next one.  A rank whose trace holds none of their launches
    (device activity alone recorded) keeps them all."""
    if not rows.shape[0]:
        return rows
    lo, hi = rank_rows
    corr = trace.correlation
    calls = corr[lo:hi][(trace.kind[lo:hi] == Kind.RUNTIME) & (corr[lo:hi] != NO_ID)]
    launched = np.isin(corr[rows], calls) & (corr[rows] != NO_ID)
    return rows[int(np.argmax(launched)):] if launched.any() else rows


def match_collectives(job: Job) -> list[Collective]:
    """Every collective seen on two or more ranks, in order of its earliest start."""
    trace = job.trace
    comm, cpu_comm = comm_names(trace.strings), cpu_comm_names(trace.strings)
    table: dict[tuple[Any, ...], list[int]] = {}
    n = len(job.ranks)
    rows_of_rank = [comm_rows(trace, r.rows, comm, cpu_comm) for r in job.ranks]
    keyed = any(_first_keyed(trace, rows) for rows in rows_of_rank)
    if not keyed:  # matched by order: from the first kernel launched in the window
        rows_of_rank = [_in_window(trace, r.rows, rows)
                        for r, rows in zip(job.ranks, rows_of_rank, strict=True)]
    for k, rows in enumerate(rows_of_rank):
        keys, _ = _keys(trace, rows, keyed)
        for key, row in zip(keys, rows.tolist(), strict=True):
            slot = table.setdefault(key, [-1] * n)
            if slot[k] < 0:
                slot[k] = row
    out = []
    for key, rows_of in table.items():
        present = [row for row in rows_of if row >= 0]
        if len(present) < 2:
            continue
        starts = [int(trace.ts_ns[r]) if r >= 0 else -1 for r in rows_of]
        ends = [int(trace.ts_ns[r] + trace.dur_ns[r]) if r >= 0 else -1 for r in rows_of]
        last = max(s for s in starts if s >= 0)
        waits = [max(min(last, e) - s, 0) if s >= 0 else 0
                 for s, e in zip(starts, ends, strict=True)]
        out.append(Collective(key[-2], int(key[-1]), tuple(rows_of), tuple(starts),
                              tuple(ends), tuple(waits), key[0] == "seq"))
    out.sort(key=lambda c: min(s for s in c.start_ns if s >= 0))
    return out


def disagreement(collectives: list[Collective]) -> tuple[int, int]:
    """How many collectives end on some rank before another rank starts them (an
    impossibility: the ranks' times disagree under this alignment), and by how much
    at most (ns)."""
    count = worst = 0
    for c in collectives:
        last = max(s for s in c.start_ns if s >= 0)
        gap = max(last - e for s, e in zip(c.start_ns, c.end_ns, strict=True) if s >= 0)
        if gap > 0:
            count += 1
            worst = max(worst, gap)
    return count, worst


def wait_by_rank(job: Job, collectives: list[Collective]) -> list[int]:
    """Total wait (ns) of each rank (``Job.ranks`` order) over every collective."""
    total = [0] * len(job.ranks)
    for c in collectives:
        for k, w in enumerate(c.wait_ns):
            total[k] += w
    return total


def wait_of_row(collectives: list[Collective]) -> dict[int, int]:
    """Merged row of a comm kernel -> its rank's wait in that collective (ns)."""
    return {row: c.wait_ns[k] for c in collectives for k, row in enumerate(c.rows) if row >= 0}


def collective_at(collectives: list[Collective], row: int) -> Collective | None:
    """The collective a merged row takes part in (the TUI's cross-rank marks)."""
    for c in collectives:
        if row in c.rows:
            return c
    return None


_LOCK = threading.Lock()


def job_collectives(job: Job) -> tuple[list[Collective], dict[int, Collective]]:
    """``match_collectives`` of ``job``, computed once, and each comm row's collective."""
    with _LOCK:
        cached = getattr(job, "_collectives", None)
        if cached is None:
            found = match_collectives(job)
            index = {row: c for c in found for row in c.rows if row >= 0}
            cached = (found, index)
            object.__setattr__(job, "_collectives", cached)
    return cached


def row_collective(trace: Trace, row: int) -> tuple[Job, Collective] | None:
    """The job and the collective that merged row ``row`` of ``trace`` is part of."""
    job = job_of_trace(trace)
    if job is None or not 0 <= row < len(trace):
        return None
    found = job_collectives(job)[1].get(row)
    return (job, found) if found is not None else None


def collective_peers(trace: Trace, row: int) -> np.ndarray:
    """The other ranks' kernels of the collective that row ``row`` is part of (the
    timeline marks them with the selection); empty outside a job's collectives."""
    found = row_collective(trace, row)
    if found is None:
        return np.zeros(0, dtype=np.int64)
    return np.array([r for r in found[1].rows if r >= 0 and r != row], dtype=np.int64)
