"""Each ``AnalysedTrace`` part as arrays + JSON and back (``analysis_store`` keeps them).

The parts are plain data already; this module only names their arrays and puts
the few Python values (names, the op table's rows) in JSON.  ``decode`` rebuilds
objects equal to the ones computed (tests compare them field by field); region
names are not stored, they are the trace's own strings at the instance's row.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from profiling.analysis.chains import LaunchChains
from profiling.analysis.links import Links, OpTree
from profiling.analysis.nesting import Nesting
from profiling.analysis.ranges import distinct
from profiling.analysis.regions import (
    INSTANCE_INTS,
    RegionInstance,
    Regions,
    group_name,
    make_instances,
)
from profiling.analysis.stored_checks import check_ints, check_pointers, check_within
from profiling.analysis.stored_regions import StoredRegions, instance_table
from profiling.trace.model import Trace, narrow

if TYPE_CHECKING:  # imported where decoded: a reopened `kernels` reads none of these parts
    from profiling.analysis.copies import CopyStats
    from profiling.analysis.key_averages import KeyAverages
    from profiling.analysis.op_dtypes import OpDtypes

Arrays = dict[str, np.ndarray]

_INSTANCE_INTS = INSTANCE_INTS
"""The integer fields of ``RegionInstance``, the columns of a stored instance table."""
_LINK_FIELDS = tuple(f.name for f in dataclasses.fields(Links))


def encode_instances(instances: list[RegionInstance]) -> Arrays:
    return {"instances": instance_table(instances)}


def _instance_table(trace: Trace, arrays: Arrays) -> np.ndarray:
    """The stored instance table, checked: its shape, and rows and lanes in the trace."""
    table = arrays["instances"]
    if table.ndim != 2 or table.shape[1] != len(_INSTANCE_INTS):
        raise ValueError("instance table of the wrong shape")
    check_within(table[:, _INSTANCE_INTS.index("row")], 0, len(trace))
    check_within(table[:, _INSTANCE_INTS.index("lane")], 0, len(trace.lanes))
    return table


def decode_instances(trace: Trace, arrays: Arrays) -> list[RegionInstance]:
    table = _instance_table(trace, arrays)
    row_col = _INSTANCE_INTS.index("row")
    strings = trace.strings
    named = {i: (strings[i], group_name(strings[i]))  # each distinct name once
             for i in distinct(trace.name_id[table[:, row_col]]).tolist()}
    ids = trace.name_id[table[:, row_col]].tolist()
    return make_instances([named[i] for i in ids], table)


def _same_length(arrays: Arrays, *names: str) -> None:
    if len({arrays[n].shape[0] for n in names}) > 1:
        raise ValueError("stored columns of different lengths")


def _narrow_rows(array: np.ndarray) -> np.ndarray:
    """Row indexes (and -1) as int32 where every value fits (``model.narrow``): half
    the bytes of the index's biggest parts.  Not for arrays searched with
    ``np.searchsorted`` (``OpTree.rows``, ``LaunchChains.gpu``, ``OpDtypes.rows``,
    ``Links.by_launch_lane``): a search of an int32 array for an int64 or a Python
    int converts the whole array first, on every call."""
    return narrow(np.asarray(array))


def _encode_ops(ops: OpTree) -> tuple[Arrays, Any]:
    n = ops.nesting
    return {"rows": ops.rows, "parent": _narrow_rows(n.parent), "stop": _narrow_rows(n.stop),
            "depth": n.depth}, None


def _decode_ops(trace: Trace, arrays: Arrays, doc: Any) -> OpTree:
    n = arrays["rows"].shape[0]
    check_within(arrays["rows"], 0, len(trace))
    check_within(arrays["parent"], -1, n)
    check_within(arrays["stop"], 0, n + 1)
    _same_length(arrays, "rows", "parent", "stop", "depth")
    check_ints(arrays, "parent", "stop")
    return OpTree(arrays["rows"], Nesting(arrays["parent"], arrays["stop"], arrays["depth"]))


_LINK_ROWS = ("launch", "op", "gpu_rows", "orphans", "by_launch")
"""``Links`` arrays of row indexes, stored narrow (``_narrow_rows``)."""


def _encode_links(links: Links) -> tuple[Arrays, Any]:
    return {f: _narrow_rows(getattr(links, f)) if f in _LINK_ROWS else getattr(links, f)
            for f in _LINK_FIELDS}, None


def _decode_links(trace: Trace, arrays: Arrays, doc: Any) -> Links:
    if any(arrays[f].shape[0] != len(trace) for f in ("launch", "op", "source")):
        raise ValueError("links of another trace")
    # ``launch`` and ``op`` (one entry per event) are not range-checked: a pass over
    # them maps all of both (50 MB of a 1 GB trace's index) where a command reads a
    # tenth, and the CRC-32 ``analysis_store.load`` checked says they are what this
    # code computed and wrote (a bit flip is caught there).
    for f in ("gpu_rows", "orphans", "by_launch"):
        check_within(arrays[f], 0, len(trace))
    _same_length(arrays, "by_launch", "by_launch_lane", "by_launch_ts")
    check_ints(arrays, *_LINK_ROWS)
    return Links(**{f: arrays[f] for f in _LINK_FIELDS})


def _encode_regions(regions: Regions) -> tuple[Arrays, Any]:
    if isinstance(regions, StoredRegions):  # a first open's too: its table, no objects
        return {"instances": np.ascontiguousarray(regions.table, dtype=np.int64)}, None
    return encode_instances(regions.instances), None


def _decode_regions(trace: Trace, arrays: Arrays, doc: Any) -> Regions:
    """The stored table itself, its instance objects made only when asked for."""
    return StoredRegions(trace, _instance_table(trace, arrays))


def _encode_names(names: tuple[str, ...]) -> tuple[Arrays, Any]:
    return {}, list(names)


def _decode_names(trace: Trace, arrays: Arrays, doc: Any) -> tuple[str, ...]:
    return tuple(str(n) for n in doc)


@functools.cache
def key_average_fields() -> tuple[str, ...]:
    """The fields of a stored op-table row, in order (``KeyAverage``'s)."""
    from profiling.analysis.key_averages import KeyAverage

    return tuple(f.name for f in dataclasses.fields(KeyAverage))


def _encode_key_averages(ka: KeyAverages) -> tuple[Arrays, Any]:
    fields = key_average_fields()
    rows = [[getattr(r, f) for f in fields] for r in ka.rows]
    return {}, {"rows": rows, "self_cpu_time_total": ka.self_cpu_time_total,
                "self_device_time_total": ka.self_device_time_total,
                "has_device_time": ka.has_device_time}


def _decode_key_averages(trace: Trace, arrays: Arrays, doc: Any) -> KeyAverages:
    from profiling.analysis.key_averages import KeyAverage, KeyAverages

    fields = key_average_fields()
    rows = [KeyAverage(**dict(zip(fields, r, strict=True))) for r in doc["rows"]]
    # Totals keep the type they were computed with (an empty sum is int 0): JSON prints it.
    return KeyAverages(rows, doc["self_cpu_time_total"], doc["self_device_time_total"],
                       bool(doc["has_device_time"]))


def _encode_copies(copies: list[CopyStats]) -> tuple[Arrays, Any]:
    docs = [{"name": c.name, "kind": c.kind, "count": c.count, "total_us": c.total_us,
             "launched_by": c.launched_by, "regions": c.regions} for c in copies]
    rows = [np.asarray(c.rows, dtype=np.int64) for c in copies]
    ptr = np.concatenate(([0], np.cumsum([r.shape[0] for r in rows]))).astype(np.int64)
    flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return {"ptr": ptr, "rows": flat}, docs


def _decode_copies(trace: Trace, arrays: Arrays, doc: Any) -> list[CopyStats]:
    from profiling.analysis.copies import CopyStats

    ptr, rows = arrays["ptr"], arrays["rows"]
    check_within(rows, 0, len(trace))
    check_pointers(ptr, rows.shape[0], len(doc))
    return [CopyStats(**d, rows=rows[int(ptr[i]) : int(ptr[i + 1])]) for i, d in enumerate(doc)]


def _encode_chains(chains: LaunchChains) -> tuple[Arrays, Any]:
    return {"gpu": chains.gpu, "ptr": _narrow_rows(chains.ptr),
            "ops": _narrow_rows(chains.ops)}, None


def _decode_chains(trace: Trace, arrays: Arrays, doc: Any) -> LaunchChains:
    check_within(arrays["gpu"], 0, len(trace))
    check_within(arrays["ops"], 0, len(trace))
    check_pointers(arrays["ptr"], arrays["ops"].shape[0], arrays["gpu"].shape[0])
    check_ints(arrays, "ptr", "ops")
    return LaunchChains(arrays["gpu"], arrays["ptr"], arrays["ops"])


def _encode_op_dtypes(dt: OpDtypes) -> tuple[Arrays, Any]:
    return {"rows": dt.rows, "family": dt.family, "upcast": dt.upcast}, None


def _decode_op_dtypes(trace: Trace, arrays: Arrays, doc: Any) -> OpDtypes:
    from profiling.analysis.op_dtypes import OpDtypes

    check_within(arrays["rows"], 0, len(trace))
    check_within(arrays["family"], -1, 3)
    _same_length(arrays, "rows", "family", "upcast")
    return OpDtypes(arrays["rows"], arrays["family"], arrays["upcast"])


CODECS: dict[str, tuple[Callable[[Any], tuple[Arrays, Any]],
                        Callable[[Trace, Arrays, Any], Any]]] = {
    "ops": (_encode_ops, _decode_ops),
    "links": (_encode_links, _decode_links),
    "regions": (_encode_regions, _decode_regions),
    "attention_regions": (_encode_names, _decode_names),
    "key_averages": (_encode_key_averages, _decode_key_averages),
    "copies": (_encode_copies, _decode_copies),
    "chains": (_encode_chains, _decode_chains),
    "op_dtypes": (_encode_op_dtypes, _decode_op_dtypes),
}
"""Part name -> (encode(value) -> (arrays, json), decode(trace, arrays, json) -> value)."""
