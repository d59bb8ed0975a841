"""torch's ``prof.key_averages()`` rebuilt from the Chrome trace alone.

This mirrors torch/autograd/profiler.py (``_parse_kineto_results``) and
profiler_util.py (``EventList._populate_cpu_children``, ``_remove_dup_nodes``,
``FunctionEvent`` properties, ``EventList.key_averages``, ``_build_table``):

* Function events are the host slices (cpu_op, user_annotation, runtime and
  driver calls) and the device slices (kernel, memcpy, memset, cuda_sync,
  gpu_user_annotation).  Names torch filters (``aten::is_leaf``,
  ``profiler::_record_function_enter_new``, ...) are dropped first.
  ``python_function`` slices (``with_stack=True``) are left out, as torch
  2.11 (the capture machine's) does: they are in its trace but not in its
  table.  torch 2.13 makes them events of their own (rows, and parents of the
  ops they call); ``python_functions=True`` reproduces that newer table.  The
  trace does not say which torch wrote it, so the caller chooses.
* Host events nest per thread with torch's stack rule (``nesting.parents``);
  ``self_cpu`` is a slice's duration minus its children's.
* Device time (``device_time``): a device slice belongs to a host event only
  through its launching call (same correlation, same process) and the op
  around that call on its thread whose External id is the call's; torch's
  linked correlation id, without trusting numbers that merely collide.
  CUPTI overhead slices share their op's id and its kernels, as in torch.
  ``device_time_total`` sums the attached slices over the subtree;
  ``self_device`` is the slice's own.  gpu_user_annotation slices are rows of
  their own but never attached.
* torch merges a parent into its only child when both have the same name
  (``_remove_dup_nodes``): the child disappears, the parent keeps its own
  interval, adopts the child's children, and *replaces* its kernels with the
  child's.  That is done here in one vectorised pass (a chain of such nodes
  collapses into its top node, taking the deepest one's kernels).
* Rows group by (name with ``ProfilerStep#N`` -> ``ProfilerStep*``,
  device type, is-user-annotation) in order of first appearance.
* ``[memory]`` instants that fall in no host slice become a ``[memory]`` row,
  as in torch (with profile_memory=True); ``[OutOfMemory]`` instants always do.

Times are summed in integer nanoseconds and reported in microseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from profiling.analysis.async_events import set_apart
from profiling.analysis.device_time import frontend_ids, own_device_time, place_overhead
from profiling.analysis.event_groups import Events, group_totals
from profiling.analysis.links import Links, category_strings, link_gpu_events
from profiling.analysis.nesting import ancestor_sums, parents
from profiling.trace.model import DEVICE_TYPE_NAMES, NO_ID, Kind, Trace

FILTERED_NAMES = frozenset(
    {
        "[memory]",
        "[OutOfMemory]",
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)
"""torch's ``_filter_name`` list: events never turned into FunctionEvents."""

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"
DEVICE_SYNC_CATEGORY = "cuda_sync"
OVERHEAD_CATEGORY = "overhead"

SORT_KEYS = (
    "self_cpu_time_total",
    "cpu_time_total",
    "cpu_time",
    "self_device_time_total",
    "device_time_total",
    "device_time",
    "count",
)
"""Keys ``sort_rows`` accepts (torch's ``cuda``/``xpu``/``privateuse1`` spellings
map onto ``device`` as in torch's ``_build_table``)."""


@dataclass(frozen=True)
class KeyAverage:
    """One row of the op table, as torch's ``FunctionEventAvg`` (times in us)."""

    key: str
    device_type: str  # "CPU", or the device's: "CUDA" (ROCm too), "MTIA", "XPU", "HPU"
    count: int
    self_cpu_time_total: float
    cpu_time_total: float
    self_device_time_total: float
    device_time_total: float
    is_user_annotation: bool = False

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (torch's ``cpu_time``)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """Average device time per call (torch's ``device_time``)."""
        return self.device_time_total / self.count if self.count else 0.0

    def as_json(self) -> dict:
        """The ``table --json`` row (DESIGN.md section 5)."""
        return {
            "key": self.key,
            "device_type": self.device_type,
            "count": self.count,
            "self_cpu_time_total": self.self_cpu_time_total,
            "cpu_time_total": self.cpu_time_total,
            "self_device_time_total": self.self_device_time_total,
            "device_time_total": self.device_time_total,
        }


@dataclass(frozen=True)
class KeyAverages:
    """The whole table: rows in torch's order, plus the two footer totals."""

    rows: list[KeyAverage]
    self_cpu_time_total: float  # "Self CPU time total"
    self_device_time_total: float  # "Self CUDA time total" (annotations excluded)
    has_device_time: bool = field(default=False)  # torch prints CUDA columns only then


def rewrite_name(name: str) -> str:
    """torch's ``_rewrite_name(with_wildcard=True)``: every step is one key."""
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


def sort_rows(rows: list[KeyAverage], sort_by: str) -> list[KeyAverage]:
    """Rows sorted descending by a torch ``sort_by`` key (stable, like torch).

    Accepts torch's spellings (``self_cuda_time_total``, ``cuda_time``,
    ``xpu_time_total``...).  Raises ``KeyError`` naming the accepted keys.
    """
    attr = normalise_sort_key(sort_by)
    return sorted(rows, key=lambda r: getattr(r, attr), reverse=True)


def normalise_sort_key(sort_by: str) -> str:
    """Map a torch sort key onto a ``KeyAverage`` attribute, or raise KeyError."""
    attr = (
        sort_by.strip()
        .lower()
        .replace("cuda", "device")
        .replace("xpu", "device")
        .replace("privateuse1", "device")
    )
    if attr not in SORT_KEYS:
        raise KeyError(sort_by)
    return attr


def key_averages(trace: Trace, *, python_functions: bool = False,
                 links: Links | Callable[[], Links] | None = None) -> KeyAverages:
    """torch's ``key_averages()`` rows for the run that wrote ``trace``.

    ``links`` reuses the trace's launch links when the caller has them, or is a call
    that returns them, made only once the host events are nested.  WHY: the nesting
    needs no links and is a third of the table's time; a first open's warm-up asks
    for the table while the command is still linking (``AnalysedTrace``), and on
    the 16-core machine the table then waited 0.45 s for links before it began.
    """
    h = _host_events(trace, python_functions)
    if callable(links):
        links = links()
    device = _device_events(trace)
    attachable = device[trace.kind[device] != Kind.GPU_ANNOTATION]
    frontend = frontend_ids(trace, h.rows, h.given_id)
    own = own_device_time(trace, h.rows, h.lane, frontend, h.parent, attachable,
                          links if links is not None else link_gpu_events(trace))
    del frontend, attachable  # the peak of a 1 GB trace's table is here: free what is done
    key_ids, key_of_string = _keys(trace)
    h_key = key_of_string[trace.name_id[h.rows]] if h.rows.shape[0] else np.zeros(0, np.int64)
    alive, new_parent, own = _remove_dup_nodes(h.parent, h_key, own)
    h_start, h_dur = h.start, h.dur
    child_dur = np.zeros(h.rows.shape[0], dtype=np.int64)
    all_alive = bool(alive.all())  # torch's merged duplicates are gone; most traces have none
    kids = np.flatnonzero(new_parent >= 0 if all_alive else alive & (new_parent >= 0))
    np.add.at(child_dur, new_parent[kids], h_dur[kids])
    del kids, new_parent
    child_dur[h.is_async] = h_dur[h.is_async]  # async: no self time (async_events.py)
    h_self = np.subtract(h_dur, child_dur, out=child_dur)
    h_total = ancestor_sums(own, h.parent)
    rows = h.rows
    if not all_alive:
        keep = np.flatnonzero(alive)
        rows, h_key, h_start, h_dur = rows[keep], h_key[keep], h_start[keep], h_dur[keep]
        h_self, own, h_total = h_self[keep], own[keep], h_total[keep]
    memory = _memory_rows(trace, h.rows)
    host = Events.of_host(trace, rows, h_key, h_start, h_dur, h_self, own, h_total)
    del h, rows, h_key, h_start, h_dur, h_self, own, h_total  # held by ``host`` if needed
    rows_ = _group([host, Events.of_device(trace, device, key_of_string),
                    Events.of_memory(trace, memory, key_of_string)], list(key_ids))
    return KeyAverages(
        rows=rows_,
        self_cpu_time_total=sum(r.self_cpu_time_total for r in rows_),
        self_device_time_total=sum(r.self_device_time_total for r in rows_
                                   if r.device_type != "CPU" and not r.is_user_annotation),
        has_device_time=any(r.self_device_time_total > 0 for r in rows_),
    )


@dataclass(frozen=True)
class _Host:
    """The table's host events: rows, their (placed) lanes and ids, their parents by
    torch's nesting (``nesting.parents``)."""

    rows: np.ndarray
    lane: np.ndarray
    given_id: np.ndarray  # the id torch gives an overhead slice (NO_ID for the others)
    parent: np.ndarray
    is_async: np.ndarray  # c10d Work ranges: never nested, no self time
    start: np.ndarray  # ts_ns and dur_ns of the rows, read once
    dur: np.ndarray


def _named_rows(trace: Trace, mask: np.ndarray) -> np.ndarray:
    """Rows of ``mask`` but those whose name torch never turns into an event (the
    names are looked up for those rows only, and not at all when the trace has none)."""
    rows = np.flatnonzero(mask)
    filtered = np.array([s in FILTERED_NAMES for s in trace.strings], dtype=bool)
    if rows.shape[0] and filtered.any():
        rows = rows[~filtered[trace.name_id[rows]]]
    return rows


def _of_kinds(trace: Trace, kinds: list[Kind]) -> np.ndarray:
    """Per row: whether its kind is one of ``kinds`` (one table lookup a row)."""
    if trace.kind.dtype != np.uint8:
        return np.isin(trace.kind, [int(k) for k in kinds])
    table = np.zeros(256, dtype=bool)
    table[[int(k) for k in kinds]] = True
    return table[trace.kind]


def _of_category(trace: Trace, category: str) -> np.ndarray | None:
    """Per row: whether its category is ``category`` (any case); None when no row's is."""
    wanted = category_strings(trace, frozenset({category}))
    return wanted[trace.cat_id] if len(trace) and wanted.any() else None  # no pass then


def _host_events(trace: Trace, python_functions: bool) -> _Host:
    """Ops, annotations, runtime calls (and python frames when asked), plus CUPTI's
    overhead slices placed on the thread torch puts them on, nested per thread."""
    kinds = [Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.RUNTIME]
    if python_functions:
        kinds.append(Kind.PYTHON_FUNCTION)
    host = _named_rows(trace, _of_kinds(trace, kinds))
    lane = trace.lane[host]  # int32: nest groups by it, nothing adds to it
    given = np.full(host.shape[0], NO_ID, dtype=np.int64)
    in_category = _of_category(trace, OVERHEAD_CATEGORY)
    overhead = np.zeros(0, dtype=np.int64) if in_category is None else _named_rows(
        trace, in_category & (trace.kind == Kind.OTHER) & (trace.ph == ord("X")))
    if overhead.shape[0]:
        o_lane, o_id = place_overhead(trace, overhead)
        host = np.concatenate((host, overhead))
        lane = np.concatenate((lane, o_lane))
        given = np.concatenate((given, o_id))
        order = np.lexsort((-trace.dur_ns[host], trace.ts_ns[host], lane))
        host, lane, given = host[order], lane[order], given[order]
    host, lane, given, is_async = set_apart(trace, host, lane, given)
    start, dur = trace.ts_ns[host], trace.dur_ns[host]
    return _Host(host, lane, given, parents(start, start + dur, lane), is_async, start, dur)


def _device_events(trace: Trace) -> np.ndarray:
    """Device slices torch makes events of: kernels, copies, sets, GPU annotations, syncs."""
    mask = _of_kinds(trace, [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.GPU_ANNOTATION])
    in_category = _of_category(trace, DEVICE_SYNC_CATEGORY)
    if in_category is not None:
        mask |= in_category & (trace.kind == Kind.OTHER)
    return _named_rows(trace, mask)


def _keys(trace: Trace) -> tuple[dict[str, int], np.ndarray]:
    """Row keys (``ProfilerStep#N`` -> ``ProfilerStep*``) and the key of each string."""
    key_names = [rewrite_name(s) for s in trace.strings]
    key_ids = {k: i for i, k in enumerate(dict.fromkeys(key_names))}
    return key_ids, np.array([key_ids[k] for k in key_names], dtype=np.int64)


def _remove_dup_nodes(parent: np.ndarray, key: np.ndarray,
                      own: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """torch's ``_remove_dup_nodes``: (alive, new parent, own device time).

    A node that is the only child of a parent with the same key disappears; the
    parent adopts its children and *replaces* its kernels with the deepest
    removed node's (a chain collapses into its top node in one pass).
    """
    m = parent.shape[0]
    alive = np.ones(m, dtype=bool)
    if m == 0:
        return alive, parent, own
    has_parent = parent >= 0
    n_children = np.bincount(parent[has_parent], minlength=m)
    safe_parent = np.maximum(parent, 0)
    dup = has_parent & (key[safe_parent] == key) & (n_children[safe_parent] == 1)
    if not dup.any():
        return alive, parent, own
    head = parent.copy()  # nearest surviving ancestor of each node
    climbing = np.flatnonzero((head >= 0) & dup[np.maximum(head, 0)])
    while climbing.shape[0]:
        head[climbing] = parent[head[climbing]]
        climbing = climbing[(head[climbing] >= 0) & dup[np.maximum(head[climbing], 0)]]
    absorbed = np.zeros(m, dtype=bool)
    absorbed[parent[dup]] = True  # parents of deleted nodes (may be deleted too)
    deepest = dup & ~absorbed
    moved = np.zeros(m, dtype=np.int64)
    np.add.at(moved, head[deepest], own[deepest])
    return ~dup, head, np.where(dup | absorbed, 0, own) + moved


def _group(parts: list[Events], key_strings: list[str]) -> list[KeyAverage]:
    """Rows by (key, device, annotation) in order of first appearance (torch's dict
    order), from ``event_groups.group_totals``: integer sums, divided once."""
    return [
        KeyAverage(
            key=key_strings[code >> 4],
            device_type=DEVICE_TYPE_NAMES[(code >> 1) & 7],
            count=count,
            self_cpu_time_total=s0 / 1000.0,
            cpu_time_total=s1 / 1000.0,
            self_device_time_total=s2 / 1000.0,
            device_time_total=s3 / 1000.0,
            is_user_annotation=bool(code & 1),
        )
        for code, count, s0, s1, s2, s3 in group_totals(parts)
    ]


def _memory_rows(trace: Trace, host: np.ndarray) -> np.ndarray:
    """Memory instants torch keeps as rows of their own.

    torch marks a ``[memory]`` record as used when it falls (inclusively) in any
    host function event of any thread; the unused ones become top-level events
    named ``[memory]``.  ``[OutOfMemory]`` records always do.
    """
    mem_id = trace.string_ids(MEMORY_EVENT_NAME)
    oom_id = trace.string_ids(OUT_OF_MEMORY_EVENT_NAME)
    if mem_id is None and oom_id is None:
        return np.zeros(0, dtype=np.int64)
    instant = trace.kind == Kind.INSTANT
    out = []
    if mem_id is not None:
        mem = np.flatnonzero(instant & (trace.name_id == mem_id))
        if mem.shape[0]:
            covered = _covered(
                trace.ts_ns[mem], trace.ts_ns[host], trace.ts_ns[host] + trace.dur_ns[host]
            )
            out.append(mem[~covered])
    if oom_id is not None:
        out.append(np.flatnonzero(instant & (trace.name_id == oom_id)))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _covered(points: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Whether each point lies in some closed interval [start, end]."""
    if start.shape[0] == 0:
        return np.zeros(points.shape[0], dtype=bool)
    order = np.argsort(start, kind="stable")
    s = start[order]
    reach = np.maximum.accumulate(end[order])  # furthest end among intervals starting <= s
    pos = np.searchsorted(s, points, side="right") - 1
    return (pos >= 0) & (reach[np.maximum(pos, 0)] >= points)
