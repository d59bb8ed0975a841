"""Regions: every ``record_function`` annotation, its instances and their GPU work.

A region is a name (``attn_fwd``, ``ProfilerStep#3``, any user name); an
instance is one annotation slice on one CPU thread.  Its GPU events are those
*launched* from inside its CPU range on its own thread (a profiler step: on any
thread of its process, ``step_scope``; the call starts in [start, end)), not those that
merely run during it on the GPU: a kernel enqueued inside ``attn_fwd`` belongs
to it even when it runs long after the CPU has left.  The GPU-side
``gpu_user_annotation`` (same ``External id``) is kept as a cross-check only.

``ProfilerStep#N`` are grouped as torch's ``key_averages`` groups them: every
step's own name stays its instance's ``name`` (so ``kernels --region
ProfilerStep#3`` shows that one step) while the group key ``ProfilerStep*``
gathers all steps (the summary row, and ``--region ProfilerStep*``).  Old
traces spell steps as ``cpu_op``/``Operator`` slices; those count too.

Everything is vectorised over instances: a region's GPU events are one slice
of ``Links.by_launch`` and its totals are differences of cumulative sums.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields, make_dataclass

import numpy as np

from profiling.analysis.async_events import async_rows
from profiling.analysis.instance_ops import lane_bounds
from profiling.analysis.links import Links
from profiling.analysis.ranges import concat_ranges, distinct, inside_same_key, range_owner
from profiling.analysis.step_scope import query_lanes
from profiling.trace.model import NO_ID, STEP_PREFIX, Kind, Trace

STEP_GROUP = "ProfilerStep*"


def group_name(name: str) -> str:
    """The summary key of a region name (``ProfilerStep#N`` -> ``ProfilerStep*``)."""
    return STEP_GROUP if name.startswith(STEP_PREFIX) else name


@dataclass(frozen=True, slots=True)  # slots: a 1 GB trace has 76,800 of them
class RegionInstance:
    """One annotation slice and the GPU events launched from inside it.

    ``index`` counts instances of the same group in CPU start order (0-based).
    Times are integer ns on the trace's clock; ``device_ns`` sums the durations
    of the GPU events (overlaps on several streams are counted in full), and
    ``gpu_start_ns``/``gpu_end_ns`` span them (-1 when there are none).
    ``gpu_annotation_ns`` is the duration of the matching gpu_user_annotation,
    or -1 when the trace has none.
    """

    name: str
    group: str
    index: int
    row: int
    lane: int
    start_ns: int
    end_ns: int
    device_ns: int
    kernels: int
    memcpys: int
    memsets: int
    gpu_start_ns: int
    gpu_end_ns: int
    gpu_annotation_ns: int
    launch_lo: int  # slice of Links.by_launch
    launch_hi: int

    @property
    def cpu_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def gpu_events(self) -> int:
        return self.kernels + self.memcpys + self.memsets

    def gpu_rows(self, trace: Trace, links: Links) -> np.ndarray:
        """Trace rows of this instance's GPU events, in GPU start order."""
        rows = links.by_launch[self.launch_lo : self.launch_hi]
        return rows[np.lexsort((trace.lane[rows], trace.ts_ns[rows]))]

    def cpu_rows(self, trace: Trace) -> np.ndarray:
        """Rows on its thread that lie wholly inside it (ops, runtime calls...), in
        row order.  An annotation leaves its own row out; an op region (an
        attention op taken as the region) keeps it: its shapes are the region's."""
        lane_slice = trace.lane_rows(self.lane)
        ts = trace.ts_ns[lane_slice]
        lo = int(np.searchsorted(ts, self.start_ns, side="left")) + lane_slice.start
        hi = int(np.searchsorted(ts, self.end_ns, side="right")) + lane_slice.start
        inside = np.arange(lo, hi, dtype=np.int64)
        if int(trace.kind[self.row]) != int(Kind.CPU_OP):
            inside = inside[inside != self.row]
        return inside[trace.ts_ns[inside] + trace.dur_ns[inside] <= self.end_ns]

    def op_rows(self, trace: Trace) -> np.ndarray:
        """The ``cpu_op`` rows of ``cpu_rows`` (shapes, dtypes and names of its work)."""
        rows = self.cpu_rows(trace)
        return rows[trace.kind[rows] == int(Kind.CPU_OP)]


INSTANCE_INTS = tuple(f.name for f in fields(RegionInstance) if f.name not in ("name", "group"))
"""The integer fields of ``RegionInstance``, in order (``make_instances``' table columns)."""
INSTANCE_COL = {name: j for j, name in enumerate(INSTANCE_INTS)}
"""Each ``INSTANCE_INTS`` field's column in an instance table."""
_START, _END, _LO, _HI = (INSTANCE_INTS.index(f) for f in ("start_ns", "end_ns", "launch_lo",
                                                             "launch_hi"))


@functools.cache
def _unfrozen() -> type:
    """``RegionInstance``'s unfrozen twin (``make_instances``), made on first use: most
    commands on a reopen read the stored instance table and make no instance objects,
    and making the class costs 0.7 ms."""
    return make_dataclass("_Unfrozen", [(f.name, f.type) for f in fields(RegionInstance)],
                          slots=True)


@dataclass(frozen=True)
class RegionSummary:
    """Per-name aggregate (``stats --json`` ``regions``); averages per instance."""

    name: str
    instances: int
    cpu_time_avg_us: float
    device_time_avg_us: float
    kernels_per_instance: float
    memcpy_per_instance: float
    memset_per_instance: float

    @classmethod
    def from_totals(cls, name: str, n: int, cpu_ns: int, device_ns: int, kernels: int,
                    memcpys: int, memsets: int) -> RegionSummary:
        """The averages from exact integer sums over ``n`` instances (``Regions`` and
        ``StoredRegions`` both divide here, so their summaries agree to the bit)."""
        return cls(name, n, cpu_ns / n / 1000.0, device_ns / n / 1000.0, kernels / n,
                   memcpys / n, memsets / n)

    @classmethod
    def of(cls, name: str, instances: Sequence[RegionInstance]) -> RegionSummary:
        """The summary of ``instances`` (not annotations: an attention op's, say)."""
        return cls.from_totals(
            name, len(instances), sum(i.cpu_ns for i in instances),
            sum(i.device_ns for i in instances), sum(i.kernels for i in instances),
            sum(i.memcpys for i in instances), sum(i.memsets for i in instances))

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "instances": self.instances,
            "cpu_time_avg_us": self.cpu_time_avg_us,
            "device_time_avg_us": self.device_time_avg_us,
            "kernels_per_instance": self.kernels_per_instance,
            "memcpy_per_instance": self.memcpy_per_instance,
            "memset_per_instance": self.memset_per_instance,
        }


@dataclass(frozen=True)
class Regions:
    """All region instances of a trace, in CPU start order."""

    instances: list[RegionInstance]

    def names(self) -> list[str]:
        """Group keys in order of first appearance (``ProfilerStep*`` once)."""
        return list(dict.fromkeys(i.group for i in self.instances))

    def select(self, name: str) -> list[RegionInstance]:
        """Instances of a group key (``attn_fwd``, ``ProfilerStep*``) or of one
        exact name (``ProfilerStep#3``)."""
        return [i for i in self.instances if i.group == name or i.name == name]

    def select_all(self, names: Sequence[str]) -> tuple[list[RegionInstance], set[str]]:
        """The instances of any of ``names`` (as ``select`` matches), in order, in one
        pass (not one per name: a server's trace can name 20,000 requests), and the
        names that matched none."""
        wanted, matched = set(names), set()
        out = []
        for i in self.instances:
            if i.group in wanted or i.name in wanted:
                out.append(i)
                matched.update({i.group, i.name} & wanted)
        return out, wanted - matched

    def summaries(self) -> list[RegionSummary]:
        """One summary per group key, in order of first appearance (one pass)."""
        totals: dict[str, list[int]] = {}
        for i in self.instances:
            t = totals.setdefault(i.group, [0, 0, 0, 0, 0, 0])
            t[0] += 1
            t[1] += i.cpu_ns
            t[2] += i.device_ns
            t[3] += i.kernels
            t[4] += i.memcpys
            t[5] += i.memsets
        return [RegionSummary.from_totals(name, *t) for name, t in totals.items()]

    def containing_pairs(
        self, links: Links, gpu_rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """For each GPU row, the group keys of the instances it was launched in, as flat
        arrays: (position in ``gpu_rows``, group code) pairs by position, then outermost
        first, each group once; and the group keys the codes index."""
        none = np.zeros(0, dtype=np.int64)
        table, groups = _columns(self)
        if table.shape[0] == 0 or gpu_rows.shape[0] == 0:
            return none, none, []
        codes: dict[str, int] = {}
        group = np.array([codes.setdefault(g, len(codes)) for g in groups], dtype=np.int64)
        start, end = table[:, _START], table[:, _END]
        lo, hi = table[:, _LO], table[:, _HI]
        positions = concat_ranges(lo, hi)
        owners = range_owner(lo, hi)
        where = np.full(links.launch.shape[0], -1, dtype=np.int64)
        where[gpu_rows] = np.arange(gpu_rows.shape[0])
        hit = where[links.by_launch[positions]]
        keep = hit >= 0
        hit, owners = hit[keep], owners[keep]
        # By GPU row, then instance start, longest first; ties keep instance order
        # (a stable sort, as the sorted() of (row, owner) pairs this replaced).
        order = np.lexsort((start[owners] - end[owners], start[owners], hit))
        hit, group = hit[order], group[owners[order]]
        _, first = np.unique(hit * len(codes) + group, return_index=True)
        first.sort()  # each (row, group) once, where it first comes
        return hit[first], group[first], list(codes)


def _columns(regions: Regions) -> tuple[np.ndarray, list[str]]:
    """The instances' integer table and group keys, read from the stored table when
    the regions are one (``StoredRegions``: no object made), else from the objects."""
    from profiling.analysis.stored_regions import StoredRegions, instance_table

    if isinstance(regions, StoredRegions):
        return regions.table, regions.instance_groups()
    return instance_table(regions.instances), [i.group for i in regions.instances]


def cpu_rows_flat(trace: Trace, instances: Sequence[RegionInstance]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Every instance's ``RegionInstance.cpu_rows`` at once (one binary search per lane
    for all of them, one filter over all their rows), concatenated, and the index of
    the instance each belongs to: no array per instance (38,400 on a 1 GB trace)."""
    from profiling.analysis.stored_regions import instance_column  # it imports this module

    k = len(instances)
    if k == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # Columns, not objects: a stored region's instances are read from its table.
    lane, start, end, row = (instance_column(instances, f)
                             for f in ("lane", "start_ns", "end_ns", "row"))
    lo, hi = lane_bounds(trace, lane, start, end)
    pos = concat_ranges(lo, hi)
    owner = range_owner(lo, hi)
    keep = trace.ts_ns[pos] + trace.dur_ns[pos] <= end[owner]
    annotation = trace.kind[row] != int(Kind.CPU_OP)  # leaves its own row out
    keep &= ~((pos == row[owner]) & annotation[owner])
    return pos[keep], owner[keep]


def region_rows(trace: Trace) -> np.ndarray:
    """Rows that are region instances: user annotations, and old-style steps.  Not a
    c10d Work's async range (``gloo:all_reduce``): torch never nests those, and the
    kernels launched while one is open are not its (``async_events``).  Nor a range
    inside one of its name on its thread (a wrapper calling itself): one call, one instance."""
    steps = np.array([s.startswith(STEP_PREFIX) for s in trace.strings], dtype=bool)
    is_step = steps[trace.name_id] if len(trace) else np.zeros(0, dtype=bool)
    rows = np.flatnonzero((trace.kind == Kind.USER_ANNOTATION)
                          | ((trace.kind == Kind.CPU_OP) & is_step))
    rows = rows[~async_rows(trace, rows)]
    rows = rows[np.argsort(trace.ts_ns[rows], kind="stable")]
    key = trace.lane[rows].astype(np.int64) * len(trace.strings) + trace.name_id[rows]
    start = trace.ts_ns[rows]
    return rows[~inside_same_key(key, start, start + trace.dur_ns[rows])]


def find_regions(trace: Trace, links: Links) -> Regions:
    """Every region instance with its GPU events (by launch, see module doc).

    The instances stay one integer table (``StoredRegions``, as on a reopen): an
    object per instance is made only when one is asked for, so a first open of
    ``stats`` (per-name sums, the copies' regions) makes none of the 85,000 a
    1 GB trace has."""
    from profiling.analysis.stored_regions import StoredRegions  # it imports this module

    return StoredRegions(trace, instance_table_at(trace, links, region_rows(trace)))


def instances_at(trace: Trace, links: Links, rows: np.ndarray) -> list[RegionInstance]:
    """Region instances for CPU ``rows`` (annotations, or ops taken as regions), sorted
    by start; each counts the GPU events launched from inside it on its thread."""
    if rows.shape[0] == 0:
        return []
    table = instance_table_at(trace, links, rows)
    named = {i: (trace.strings[i], group_name(trace.strings[i]))  # each name once
             for i in distinct(trace.name_id[rows]).tolist()}
    return make_instances([named[i] for i in trace.name_id[rows].tolist()], table)


def instance_table_at(trace: Trace, links: Links, rows: np.ndarray) -> np.ndarray:
    """``instances_at``'s instances as their integer table (columns ``INSTANCE_INTS``)."""
    if rows.shape[0] == 0:
        return np.zeros((0, len(INSTANCE_INTS)), dtype=np.int64)
    start = trace.ts_ns[rows]
    end = start + trace.dur_ns[rows]
    lane = trace.lane[rows].astype(np.int64)
    lo, hi = links.launch_range(query_lanes(trace, links.by_launch_lane, rows), start, end)

    gpu = links.by_launch
    gk = trace.kind[gpu]
    zero = np.zeros(1, dtype=np.int64)

    def cum(values: np.ndarray) -> np.ndarray:
        return np.concatenate((zero, np.cumsum(values, dtype=np.int64)))

    c_dur = cum(trace.dur_ns[gpu])
    c_kernel = cum(gk == Kind.KERNEL)
    c_memcpy = cum(gk == Kind.MEMCPY)
    c_memset = cum(gk == Kind.MEMSET)
    g_start, g_end = _spans(trace, gpu, lo, hi)
    ann = _gpu_annotations(trace, rows)
    return np.stack([
        _group_counts(trace, rows), rows.astype(np.int64), lane, start, end,
        c_dur[hi] - c_dur[lo], c_kernel[hi] - c_kernel[lo], c_memcpy[hi] - c_memcpy[lo],
        c_memset[hi] - c_memset[lo], g_start, g_end, ann, lo, hi], axis=1)


def _group_counts(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """``RegionInstance.index`` of each row: how many earlier rows share its group."""
    ids, inverse = np.unique(trace.name_id[rows], return_inverse=True)
    codes: dict[str, int] = {}
    group_of = np.array([codes.setdefault(group_name(trace.strings[i]), len(codes))
                         for i in ids.tolist()], dtype=np.int64)
    group = group_of[np.asarray(inverse).reshape(-1)]
    order = np.argsort(group, kind="stable")  # by group, then row order
    first = np.searchsorted(group[order], group[order], side="left")
    out = np.empty(rows.shape[0], dtype=np.int64)
    out[order] = np.arange(rows.shape[0]) - first
    return out


def make_instances(names: list[tuple[str, str]], table: np.ndarray) -> list[RegionInstance]:
    """``RegionInstance``s from (name, group) pairs and a table of their integer fields
    in field order (``INSTANCE_INTS``).  Each is made as an unfrozen twin with the same
    slots, then given ``RegionInstance``'s class: a frozen dataclass sets every field
    through ``object.__setattr__``, 2x slower, and a 1 GB trace has 76,800 of them."""
    out = []
    unfrozen = _unfrozen()
    for name_group, values in zip(names, table.tolist(), strict=True):
        inst = unfrozen(*name_group, *values)
        inst.__class__ = RegionInstance  # type: ignore[assignment]  # the same slots
        out.append(inst)
    return out


def _spans(
    trace: Trace, gpu: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """First GPU start and last GPU end over each [lo, hi) slice (-1 if empty)."""
    g_start = np.full(lo.shape[0], -1, dtype=np.int64)
    g_end = np.full(lo.shape[0], -1, dtype=np.int64)
    nonempty = hi > lo
    if not nonempty.any():
        return g_start, g_end
    starts = trace.ts_ns[gpu]
    ends = starts + trace.dur_ns[gpu]
    # The slices may overlap (a step holds its attn_fwd): reduce over their
    # concatenation, where each non-empty one is a run that reduceat can cut.
    idx = np.flatnonzero(nonempty)
    pos = concat_ranges(lo[idx], hi[idx])
    cuts = np.concatenate(([0], np.cumsum(hi[idx] - lo[idx])[:-1]))
    g_start[idx] = np.minimum.reduceat(starts[pos], cuts)
    g_end[idx] = np.maximum.reduceat(ends[pos], cuts)
    return g_start, g_end


def _gpu_annotations(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Duration of the gpu_user_annotation sharing each instance's External id."""
    out = np.full(rows.shape[0], -1, dtype=np.int64)
    gpu_ann = np.flatnonzero(trace.kind == Kind.GPU_ANNOTATION)
    if gpu_ann.shape[0] == 0:
        return out
    ids = np.asarray(trace.external_id[gpu_ann], dtype=np.int64)
    durs = np.asarray(trace.dur_ns[gpu_ann], dtype=np.int64)
    given = ids != NO_ID
    if not given.any():
        return out
    # Summed per External id, then looked up for every instance at once.
    known, which = np.unique(ids[given], return_inverse=True)
    sums = np.zeros(known.shape[0], dtype=np.int64)
    np.add.at(sums, which, durs[given])
    want = np.asarray(trace.external_id[rows], dtype=np.int64)
    pos = np.minimum(np.searchsorted(known, want), known.shape[0] - 1)
    hit = (known[pos] == want) & (want != NO_ID)
    out[hit] = sums[pos[hit]]
    return out
