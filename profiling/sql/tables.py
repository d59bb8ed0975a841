"""One analysed trace -> Arrow tables: ``events``, ``kernels``, ``ops``, ``regions``,
``lanes``, ``traces`` (each without its ``trace`` column: ``engine`` adds the label).

``events`` is the model itself: every numpy column handed to Arrow as it is (same
buffer, no copy), names and categories as a ``DictionaryArray`` over the interned
string table (the ``name_id`` column is the index array), kinds, device types and
the lanes' pid/tid likewise over their small name lists.  The µs columns and the
NULLs for absent ids are computed by the SQL view over it (``engine``), one
vector at a time, so no second copy of a column is ever made.

The other tables are small (one row per GPU event of a region, per op name, per
instance) and come from the same code the headless commands print from, so a
number read with SQL is the number ``stats``, ``kernels`` and ``table`` print:
``kernels`` is ``instance_kernels``'s arithmetic over ``AnalysedTrace.gpu_rows``
(vectorised per instance), ``ops`` is ``KeyAverage.as_json``, ``regions`` the
``RegionInstance`` figures that ``stats`` averages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.launch_chain import ATTRIBUTIONS, attribution
from profiling.analysis.ranks import trace_rank, world_size
from profiling.analysis.regions import RegionInstance
from profiling.sql.arrow_build import dictionary, numeric, of_list, strings
from profiling.trace.model import DEVICE_TYPE_NAMES, NO_ID, Kind, Trace

if TYPE_CHECKING:
    import pyarrow as pa

KIND_NAMES = tuple(k.name.lower() for k in Kind)
"""``Kind`` values -> the text the ``kind`` column shows (``cpu_op``, ``kernel``, ...)."""

GPU_KIND_NAMES = {
    int(Kind.KERNEL): "kernel",
    int(Kind.MEMCPY): "memcpy",
    int(Kind.MEMSET): "memset",
}
"""``instance_kernels.KIND_NAMES``: the ``kind`` of a row of ``kernels --json``."""

TABLES = ("events", "kernels", "ops", "regions", "lanes", "traces")
"""Every table a trace gives, in the order ``export`` writes them."""


def _pa() -> Any:
    import pyarrow as pa  # the [sql] extra; engine.require() says how to install it

    return pa


def _strings(trace: Trace) -> pa.Array:
    """The trace's interned string table as one Arrow array (built once per table)."""
    return strings(trace.strings)


def events_table(trace: Trace) -> pa.Table:
    """Every model row, columns as the model holds them (see the module doc).

    ``row`` is the model's row index (what the TUI jumps to); ``ts_ns``/``dur_ns``
    are exact integer nanoseconds on the trace's own clock; absent ids are -1 here
    and become NULL in the view."""
    pa = _pa()
    n = len(trace)
    text = _strings(trace)
    pids = [str(lane.pid) for lane in trace.lanes]
    tids = [str(lane.tid) for lane in trace.lanes]
    lane = trace.lane if trace.lanes else np.zeros(0, dtype=np.int32)
    return pa.table(
        {
            "row": numeric(np.arange(n, dtype=np.int64)),
            "name": dictionary(trace.name_id, text),
            "category": dictionary(trace.cat_id, text),
            "kind": dictionary(trace.kind, list(KIND_NAMES)),
            "device_type": dictionary(trace.device_type, list(DEVICE_TYPE_NAMES)),
            "pid": dictionary(lane, pids),
            "tid": dictionary(lane, tids),
            "lane": numeric(trace.lane),
            "ts_ns": numeric(trace.ts_ns),
            "dur_ns": numeric(trace.dur_ns),
            "depth": numeric(trace.depth),
            # int32 or int64 as the index holds them (``model.narrow``): the ``events``
            # view reads them as BIGINT (``engine.EVENTS_SELECT``)
            "correlation": numeric(trace.correlation),
            "external_id": numeric(trace.external_id),
            "stream": numeric(trace.stream),
        }
    )


def region_instances(a: AnalysedTrace) -> list[RegionInstance]:
    """Every ``record_function`` instance, then the instances of the attention
    regions that are ops, not annotations (a trace without ``attn_fwd``: what
    ``kernels`` lists by default there), so both views cover what ``kernels`` can."""
    out = list(a.regions.instances)
    annotated = set(a.regions.names())
    for name in a.attention_regions:
        if name not in annotated:
            out += a.instances(name)
    return out


def kernels_table(a: AnalysedTrace) -> pa.Table:
    """The rows of ``kernels --json``, one per GPU event of every region instance
    (a kernel inside ``attn_fwd`` inside ``ProfilerStep#3`` appears once for each).

    Same arithmetic as ``instance_kernels``: offsets from the instance's first GPU
    event start, ``launched_by`` the op of ``Links.op``, ``attribution`` from
    ``launch_chain.attribution``, ``launch_chain`` (a list of names) from one
    ``AnalysedTrace.launch_batch`` over every instance.  Also: ``row`` (the GPU
    event's model row, to join with ``events``), ``seq`` (its place in the
    instance: the ``#`` that ``kernels`` prints), ``launch_row`` (its runtime
    call), ``op_row``, and ``ts_us`` (its start from the trace's first event)."""
    pa = _pa()
    trace, links = a.trace, a.links
    origin = trace.start_ns
    insts = region_instances(a)
    batch = a.launch_batch(insts, remember=False)
    rows = batch.rows
    sizes = np.diff(batch.inst_ptr)
    owner = np.repeat(np.arange(len(insts)), sizes)
    seq = np.arange(rows.shape[0], dtype=np.int64) - np.repeat(batch.inst_ptr[:-1], sizes)
    ts = trace.ts_ns[rows]
    first = np.zeros(len(insts), dtype=np.int64)  # each instance's first GPU start
    if rows.shape[0]:
        nonempty = np.flatnonzero(sizes)
        first[nonempty] = np.minimum.reduceat(ts, batch.inst_ptr[:-1][nonempty])
    # int64 whatever the index stored them as (``model.narrow``, ``analysis_parts``):
    # one schema on a first open and a reopen, for every trace
    op = links.op[rows].astype(np.int64)
    launch = links.launch[rows].astype(np.int64)
    stream = trace.stream[rows].astype(np.int64, copy=False)
    kinds = trace.kind[rows]
    kind_text = [GPU_KIND_NAMES.get(int(k), "other") for k in range(len(Kind))]
    text = _strings(trace)
    owner32 = owner.astype(np.int32)
    how = attribution(trace, links, rows)
    return pa.table(
        {
            "region": dictionary(owner32, [i.name for i in insts]),
            "region_group": dictionary(owner32, [i.group for i in insts]),
            "instance": numeric(np.array([i.index for i in insts], dtype=np.int64)[owner]),
            "seq": numeric(seq),
            "row": numeric(rows.astype(np.int64)),
            "name": dictionary(trace.name_id[rows].astype(np.int32), text),
            "kind": dictionary(kinds, kind_text),
            "start_offset_us": numeric((ts - first[owner]) / 1000.0),
            "dur_us": numeric(trace.dur_ns[rows] / 1000.0),
            "stream": numeric(stream, mask=stream == NO_ID),
            "launched_by": dictionary(trace.name_id[np.maximum(op, 0)].astype(np.int32), text,
                                      op < 0),
            "attribution": dictionary(how, list(ATTRIBUTIONS)),
            "launch_chain": pa.ListArray.from_arrays(
                numeric(batch.chain_ptr.astype(np.int32)),
                dictionary(trace.name_id[batch.chain], text).dictionary_decode(),
            ),
            "launch_row": numeric(launch, mask=launch < 0),
            "op_row": numeric(op, mask=op < 0),
            "ts_us": numeric((ts - origin) / 1000.0),
        }
    )


def ops_table(a: AnalysedTrace, *, python_functions: bool = False) -> pa.Table:
    """The rows of ``table --json`` (``key_averages``, torch's ``FunctionEventAvg``
    fields, µs), plus the averages ``table`` prints (``cpu_time``, ``device_time``)."""
    pa = _pa()
    if python_functions:
        from profiling.analysis.key_averages import key_averages

        rows = key_averages(a.trace, python_functions=True, links=a.links).rows
    else:
        rows = a.key_averages.rows
    data = [{**r.as_json(), "cpu_time": r.cpu_time, "device_time": r.device_time} for r in rows]
    schema = pa.schema(
        [
            ("key", pa.string()),
            ("device_type", pa.string()),
            ("count", pa.int64()),
            ("self_cpu_time_total", pa.float64()),
            ("cpu_time_total", pa.float64()),
            ("self_device_time_total", pa.float64()),
            ("device_time_total", pa.float64()),
            ("cpu_time", pa.float64()),
            ("device_time", pa.float64()),
        ]
    )
    columns = {}
    for field in schema:
        values = [row[field.name] for row in data]
        columns[field.name] = (
            strings(values) if field.type == pa.string()
            else of_list(values, np.int64 if field.type == pa.int64() else np.float64)
        )
    return pa.table(columns)


def regions_table(a: AnalysedTrace) -> pa.Table:
    """One row per region instance (``region_instances``): CPU range and time, GPU
    time (durations summed, as ``stats``), counts, the GPU span, and the
    ``gpu_user_annotation``'s duration when the trace has one.  Times from the
    trace's first event, µs."""
    pa = _pa()
    insts = region_instances(a)
    origin = a.trace.start_ns

    def rel(values: list[int]) -> Any:  # a time from the trace's first event
        arr = np.array(values, dtype=np.int64)
        return numeric((arr - origin) / 1000.0, mask=arr < 0)

    def dur(values: list[int]) -> Any:  # a duration; -1 (absent) is NULL
        arr = np.array(values, dtype=np.int64)
        return numeric(arr / 1000.0, mask=arr < 0)

    return pa.table(
        {
            "region": strings([i.name for i in insts]),
            "region_group": strings([i.group for i in insts]),
            "instance": of_list([i.index for i in insts], np.int64),
            "row": of_list([i.row for i in insts], np.int64),
            "lane": of_list([i.lane for i in insts], np.int64),
            "start_us": rel([i.start_ns for i in insts]),
            "end_us": rel([i.end_ns for i in insts]),
            "cpu_time_us": dur([i.cpu_ns for i in insts]),
            "device_time_us": dur([i.device_ns for i in insts]),
            "kernels": of_list([i.kernels for i in insts], np.int64),
            "memcpys": of_list([i.memcpys for i in insts], np.int64),
            "memsets": of_list([i.memsets for i in insts], np.int64),
            "gpu_start_us": rel([i.gpu_start_ns for i in insts]),
            "gpu_end_us": rel([i.gpu_end_ns for i in insts]),
            "gpu_annotation_us": dur([i.gpu_annotation_ns for i in insts]),
        }
    )


def lanes_table(trace: Trace) -> pa.Table:
    """One row per lane in display order: the ``stats --json`` lane fields (pid and
    tid as text, since files spell them as numbers or strings) and its group."""
    pa = _pa()
    lanes = trace.lanes
    return pa.table(
        {
            "lane": of_list([lane.index for lane in lanes], np.int64),
            "kind": strings([lane.kind for lane in lanes]),
            "pid": strings([str(lane.pid) for lane in lanes]),
            "tid": strings([str(lane.tid) for lane in lanes]),
            "label": strings([lane.label for lane in lanes]),
            "process": strings([_group_label(trace, lane.group) for lane in lanes]),
            "events": of_list([lane.events for lane in lanes], np.int64),
            "max_depth": of_list([lane.max_depth for lane in lanes], np.int64),
        }
    )


def _group_label(trace: Trace, group: int) -> str:
    return trace.groups[group].label if 0 <= group < len(trace.groups) else ""


def traces_table(trace: Trace) -> pa.Table:
    """One row: the file, its rank and world size (``distributedInfo``, NULL when
    absent), entries and rows (as ``stats``), its span, and ``start_ns`` (its first
    event on its own clock: what the µs columns count from)."""
    pa = _pa()
    n = len(trace)
    return pa.table(
        {
            "path": strings([trace.path]),
            "rank": of_list([trace_rank(trace.metadata)], np.int64),
            "world_size": of_list([world_size(trace.metadata)], np.int64),
            "events": of_list([trace.n_entries], np.int64),
            "rows": of_list([n], np.int64),
            "duration_us": of_list(
                [(trace.end_ns_max - trace.start_ns) / 1000.0 if n else 0.0], np.float64
            ),
            "start_ns": of_list([trace.start_ns], np.int64),
        }
    )


def build_table(name: str, a: AnalysedTrace) -> pa.Table:
    """The table ``name`` (one of ``TABLES``) of one analysed trace."""
    if name == "events":
        return events_table(a.trace)
    if name == "kernels":
        return kernels_table(a)
    if name == "ops":
        return ops_table(a)
    if name == "regions":
        return regions_table(a)
    if name == "lanes":
        return lanes_table(a.trace)
    if name == "traces":
        return traces_table(a.trace)
    raise KeyError(name)
