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
* Host events nest per thread with torch's stack rule (``nesting.nest``);
  ``self_cpu`` is a slice's duration minus its children's.
* Device time: a device slice is attached to every host event whose own id
  equals the device slice's ``External id`` (torch's ``linked_correlation_id``).
  A host event's own id is its ``External id`` for ops and annotations, and its
  CUPTI ``correlation`` for a runtime call outside any op (torch files those
  under the correlation id too).  ``device_time_total`` sums the attached
  slices over the subtree; ``self_device`` is the slice's own.
  gpu_user_annotation slices are rows of their own but never attached.
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

from dataclasses import dataclass, field

import numpy as np

from profiling.analysis.links import category_mask, lane_kinds, op_nesting
from profiling.analysis.nesting import innermost_containing, nest, subtree_sums
from profiling.analysis.ranges import concat_ranges
from profiling.trace.model import NO_ID, Kind, Trace

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
    device_type: str  # "CPU" or "CUDA"
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


def key_averages(trace: Trace, *, python_functions: bool = False) -> KeyAverages:
    """torch's ``key_averages()`` rows for the run that wrote ``trace``."""
    strings = trace.strings
    kind = trace.kind
    filtered = np.array([s in FILTERED_NAMES for s in strings], dtype=bool)
    keep_name = ~filtered[trace.name_id] if len(trace) else np.zeros(0, dtype=bool)

    host_kinds = [Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.RUNTIME]
    if python_functions:
        host_kinds.append(Kind.PYTHON_FUNCTION)
    host = np.flatnonzero(np.isin(kind, [int(k) for k in host_kinds]) & keep_name)
    sync_cat = np.array([s.lower() == DEVICE_SYNC_CATEGORY for s in strings], dtype=bool)
    is_sync = sync_cat[trace.cat_id] & (kind == Kind.OTHER) if len(trace) else keep_name
    device_kinds = [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.GPU_ANNOTATION]
    device = np.flatnonzero((np.isin(kind, [int(k) for k in device_kinds]) | is_sync) & keep_name)

    # CUPTI's own overhead slices ("Activity Buffer Request") are host events of
    # torch too: it files them under the op running at the time, on its thread.
    overhead = np.flatnonzero(
        category_mask(trace, frozenset({OVERHEAD_CATEGORY}))
        & (kind == Kind.OTHER)
        & (trace.ph == ord("X"))
        & keep_name
    )
    h_lane = trace.lane[host].astype(np.int64)
    h_given_id = np.full(host.shape[0], NO_ID, dtype=np.int64)
    if overhead.shape[0]:
        o_lane, o_id = _place_overhead(trace, overhead)
        host = np.concatenate((host, overhead))
        h_lane = np.concatenate((h_lane, o_lane))
        h_given_id = np.concatenate((h_given_id, o_id))
        order = np.lexsort((-trace.dur_ns[host], trace.ts_ns[host], h_lane))
        host, h_lane, h_given_id = host[order], h_lane[order], h_given_id[order]

    h_start = trace.ts_ns[host]
    h_dur = trace.dur_ns[host]
    nesting = nest(h_start, h_start + h_dur, h_lane)
    parent = nesting.parent
    m = host.shape[0]

    # ---- device slices attached to host events (torch's device_corr_map) ----
    own_device = np.zeros(m, dtype=np.int64)
    ext = trace.external_id
    h_kind = kind[host]
    h_ext = ext[host]
    runtime_id = np.where(h_ext > 0, NO_ID, trace.correlation[host])
    frontend_id = np.where(
        (h_kind == Kind.CPU_OP) | (h_kind == Kind.USER_ANNOTATION),
        np.where(h_ext > 0, h_ext, NO_ID),
        np.where(h_kind == Kind.RUNTIME, runtime_id, h_given_id),
    )
    attachable = device[kind[device] != Kind.GPU_ANNOTATION]
    linked = ext[attachable]
    # A sync slice outside any op carries its own correlation as "External id":
    # torch sees no link there.
    self_linked = is_sync[attachable] & (linked == trace.correlation[attachable])
    linked = np.where(self_linked, NO_ID, linked)
    has_link = linked > 0
    attachable, linked = attachable[has_link], linked[has_link]
    fe = np.flatnonzero(frontend_id > 0)
    if fe.shape[0] and attachable.shape[0]:
        fe = fe[np.argsort(frontend_id[fe], kind="stable")]
        keys = frontend_id[fe]
        lo = np.searchsorted(keys, linked, side="left")
        hi = np.searchsorted(keys, linked, side="right")
        reps = hi - lo
        if reps.sum():
            owners = fe[concat_ranges(lo, hi)]
            durs = np.repeat(trace.dur_ns[attachable], reps)
            own_device = np.bincount(owners, weights=durs, minlength=m).astype(np.int64)

    # ---- torch's _remove_dup_nodes ----
    key_names = [rewrite_name(s) for s in strings]
    key_ids = {k: i for i, k in enumerate(dict.fromkeys(key_names))}
    key_of_string = np.array([key_ids[k] for k in key_names], dtype=np.int64)
    h_key = key_of_string[trace.name_id[host]] if m else np.zeros(0, dtype=np.int64)
    alive = np.ones(m, dtype=bool)
    new_parent = parent.copy()
    if m:
        has_parent = parent >= 0
        n_children = np.bincount(parent[has_parent], minlength=m)
        safe_parent = np.maximum(parent, 0)
        dup = has_parent & (h_key[safe_parent] == h_key) & (n_children[safe_parent] == 1)
        if dup.any():
            alive = ~dup
            head = parent.copy()  # nearest surviving ancestor of each node
            climbing = np.flatnonzero((head >= 0) & dup[np.maximum(head, 0)])
            while climbing.shape[0]:
                head[climbing] = parent[head[climbing]]
                climbing = climbing[(head[climbing] >= 0) & dup[np.maximum(head[climbing], 0)]]
            new_parent = head
            # Kernels: a surviving parent that absorbed a chain takes the kernels of
            # the deepest node of the chain and loses its own and the middle ones'.
            absorbed = np.zeros(m, dtype=bool)
            absorbed[parent[dup]] = True  # parents of deleted nodes (may be deleted too)
            deepest = dup & ~absorbed
            moved = np.zeros(m, dtype=np.int64)
            np.add.at(moved, head[deepest], own_device[deepest])
            own_device = np.where(dup, 0, np.where(absorbed, 0, own_device)) + moved

    # ---- per-event figures (ns) ----
    child_dur = np.zeros(m, dtype=np.int64)
    if m:
        kids = np.flatnonzero(alive & (new_parent >= 0))
        np.add.at(child_dur, new_parent[kids], h_dur[kids])
    self_cpu = h_dur - child_dur
    device_total = subtree_sums(own_device, nesting.stop)

    # ---- group into rows, in order of first appearance (torch's dict order) ----
    is_ann_host = (h_kind == Kind.USER_ANNOTATION).astype(np.int64)
    d_key = key_of_string[trace.name_id[device]] if device.shape[0] else np.zeros(0, np.int64)
    d_ann = (kind[device] == Kind.GPU_ANNOTATION).astype(np.int64)

    mem_rows = _memory_rows(trace, host, key_ids)

    hs = np.flatnonzero(alive)
    n_host, n_dev, n_mem = hs.shape[0], device.shape[0], mem_rows.shape[0]
    start = np.concatenate((h_start[hs], trace.ts_ns[device], trace.ts_ns[mem_rows]))
    end = np.concatenate(
        (
            h_start[hs] + h_dur[hs],
            trace.ts_ns[device] + trace.dur_ns[device],
            trace.ts_ns[mem_rows],
        )
    )
    gkey = np.concatenate(
        (h_key[hs], d_key, key_of_string[trace.name_id[mem_rows]] if n_mem else [])
    ).astype(np.int64)
    gdev = np.concatenate((np.zeros(n_host), np.ones(n_dev), np.zeros(n_mem))).astype(np.int64)
    gann = np.concatenate((is_ann_host[hs], d_ann, np.zeros(n_mem, np.int64))).astype(np.int64)
    cpu_total = np.concatenate((h_dur[hs], np.zeros(n_dev + n_mem, np.int64)))
    cpu_self = np.concatenate((self_cpu[hs], np.zeros(n_dev + n_mem, np.int64)))
    d_dur = trace.dur_ns[device]
    dev_total = np.concatenate((device_total[hs], d_dur, np.zeros(n_mem, np.int64)))
    dev_self = np.concatenate((own_device[hs], d_dur, np.zeros(n_mem, np.int64)))

    rows: list[KeyAverage] = []
    if start.shape[0]:
        order = np.lexsort((-end, start))
        group = (gkey * 2 + gdev) * 2 + gann
        uniq, first, inverse = np.unique(group[order], return_index=True, return_inverse=True)
        g = np.empty_like(inverse)
        g[order] = inverse  # group index of each event
        count = np.bincount(g, minlength=uniq.shape[0])

        def total(values: np.ndarray) -> np.ndarray:
            return np.bincount(g, weights=values.astype(np.float64), minlength=uniq.shape[0])

        sums = [total(v) / 1000.0 for v in (cpu_self, cpu_total, dev_self, dev_total)]
        key_strings = list(key_ids)
        for gi in np.argsort(first, kind="stable").tolist():
            code = int(uniq[gi])
            ann, dev, k = code & 1, (code >> 1) & 1, code >> 2
            rows.append(
                KeyAverage(
                    key=key_strings[k],
                    device_type="CUDA" if dev else "CPU",
                    count=int(count[gi]),
                    self_cpu_time_total=float(sums[0][gi]),
                    cpu_time_total=float(sums[1][gi]),
                    self_device_time_total=float(sums[2][gi]),
                    device_time_total=float(sums[3][gi]),
                    is_user_annotation=bool(ann),
                )
            )

    self_cpu_total = sum(r.self_cpu_time_total for r in rows)
    self_device_total = sum(
        r.self_device_time_total
        for r in rows
        if r.device_type != "CPU" and not r.is_user_annotation
    )
    return KeyAverages(
        rows=rows,
        self_cpu_time_total=self_cpu_total,
        self_device_time_total=self_device_total,
        has_device_time=any(r.self_device_time_total > 0 for r in rows),
    )


def _place_overhead(trace: Trace, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The thread and the id torch gives each CUPTI overhead slice.

    The slice sits on a lane of its own (pid -1) in the file; torch puts it on
    the thread whose op was running (the innermost op around it) and gives it
    that op's correlation id, so it also receives that op's kernels.  Where no
    op encloses it, it stays on its own lane with no id.
    """
    lanes = trace.lane[rows].astype(np.int64)
    ids = np.full(rows.shape[0], NO_ID, dtype=np.int64)
    ops, nesting = op_nesting(trace)
    if ops.shape[0] == 0:
        return lanes, ids
    on_cpu = lane_kinds(trace)
    o_start = trace.ts_ns[ops]
    o_end = o_start + trace.dur_ns[ops]
    o_lane = trace.lane[ops].astype(np.int64)
    o_is_op = trace.kind[ops] == Kind.CPU_OP
    start = trace.ts_ns[rows]
    end = start + trace.dur_ns[rows]
    best_start = np.full(rows.shape[0], -1, dtype=np.int64)
    levels = int(nesting.depth.max()) + 1
    for lane in np.unique(o_lane[on_cpu[ops]]).tolist():
        inner = innermost_containing(
            start, np.full(rows.shape[0], lane), o_start, o_end, o_lane, nesting
        )
        for _ in range(levels):  # up to an op that holds the whole slice
            short = (inner >= 0) & (o_end[np.maximum(inner, 0)] < end)
            if not short.any():
                break
            inner[short] = nesting.parent[inner[short]]
        better = (inner >= 0) & (o_start[np.maximum(inner, 0)] > best_start)
        if not better.any():
            continue
        best_start[better] = o_start[inner[better]]
        lanes[better] = lane
        cur = inner[better]
        for _ in range(levels):  # the id is the innermost cpu_op's, not an annotation's
            up = (cur >= 0) & ~o_is_op[np.maximum(cur, 0)]
            if not up.any():
                break
            cur[up] = nesting.parent[cur[up]]
        op_rows = ops[np.maximum(cur, 0)]
        ids[better] = np.where(cur >= 0, trace.external_id[op_rows], NO_ID)
    return lanes, ids


def _memory_rows(trace: Trace, host: np.ndarray, key_ids: dict[str, int]) -> np.ndarray:
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
