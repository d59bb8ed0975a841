"""The GPU events of each region instance, as a list (``kernels --json``).

Offsets are measured from the instance's first GPU event (``start_offset_us``
of the first one is 0), so one instance reads as a GPU timeline: gaps between
kernels, overlaps across streams.  ``gpu_start_us`` says where that origin is,
and all absolute figures (``start_us``, ``gpu_start_us``) count microseconds
from the trace's first event, so instances of one trace line up.

Each event says who launched it twice: ``launched_by`` is the innermost op
around the launching call (``Links.op``; the region's own annotation when the
call sits directly in it), ``launch_chain`` the whole chain inside the instance
from its outermost op down to the runtime call (``launch_chain``), and
``attribution`` says whether that op is the one torch's table credits
(``external_id``), only the innermost op around the call (``nesting``: ``table``
shows no device time for it there), or absent (``none``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from profiling.analysis.analysed import AnalysedTrace, batch_key
from profiling.analysis.launch_chain import ATTRIBUTIONS, attribution
from profiling.analysis.ranges import concat_ranges, unique_rows
from profiling.analysis.regions import RegionInstance
from profiling.analysis.stored_checks import check_ints, check_pointers, check_within
from profiling.analysis.time_texts import WIDEST_TEXT, widest
from profiling.trace.model import NO_ID, Kind, Trace, narrow

KIND_NAMES = {Kind.KERNEL: "kernel", Kind.MEMCPY: "memcpy", Kind.MEMSET: "memset"}


@dataclass(frozen=True)
class KernelEntry:
    """One GPU event of an instance."""

    row: int
    name: str
    kind: str  # kernel | memcpy | memset
    start_offset_us: float  # from the instance's first GPU event start
    dur_us: float
    stream: int | None
    launched_by: str | None  # innermost op around the launch; None for no op
    launch_chain: tuple[str, ...] = ()  # outermost op inside the instance ... runtime call
    attribution: str = "none"  # external_id | nesting | none (launch_chain.attribution)

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "start_offset_us": self.start_offset_us,
            "dur_us": self.dur_us,
            "stream": self.stream,
            "launched_by": self.launched_by,
            "launch_chain": list(self.launch_chain),
            "attribution": self.attribution,
        }


@dataclass(frozen=True)
class InstanceKernels:
    """A region instance and its GPU events in GPU start order."""

    region: str  # the instance's own name (ProfilerStep#3 stays ProfilerStep#3)
    instance: int  # index within its group, 0-based
    start_us: float  # CPU start, from the trace's first event
    cpu_time_us: float
    device_time_us: float
    gpu_start_us: float | None  # first GPU event start, from the trace's first event
    kernels: list[KernelEntry]

    def as_json(self) -> dict:
        return {
            "region": self.region,
            "instance": self.instance,
            "start_us": self.start_us,
            "cpu_time_us": self.cpu_time_us,
            "device_time_us": self.device_time_us,
            "gpu_start_us": self.gpu_start_us,
            "kernels": [k.as_json() for k in self.kernels],
        }


@dataclass(frozen=True)
class KernelColumns:
    """The GPU events of many instances as columns, one entry per (instance, event).

    Instance ``k``'s events are ``rows[ptr[k]:ptr[k+1]]``; ``chain`` indexes
    ``chains`` (each distinct chain of names once: a 1 GB trace has 270,000
    events but a few dozen chains), ``first_ns`` is each instance's first GPU
    start (-1 without events)."""

    ptr: np.ndarray
    rows: np.ndarray
    offset_ns: np.ndarray  # from the instance's first GPU event
    chain: np.ndarray
    chains: list[tuple[str, ...]]
    attribution: np.ndarray  # index into ATTRIBUTIONS
    first_ns: np.ndarray
    chain_ids: np.ndarray  # each of ``chains`` as a row of name ids (-1 after its end)
    combos: np.ndarray  # distinct (name, kind, stream, launcher name, chain, attribution)
    combo: np.ndarray  # each event's row of ``combos`` (``kernels_json`` writes each once)
    time_widths: tuple[int, int]
    """The longest ``fmt_ns`` text of ``offset_ns`` and of the events' durations
    (``time_texts.widest``): the text listing's column widths.  Kept with the
    columns because a width is needed before the first row is written, and
    finding it passes over every event (a reopened 1 GB trace's listing spent
    70-79 ms of the H200's parent on it before any part could start)."""


def kernel_columns(analysed: AnalysedTrace,
                   instances: Sequence[RegionInstance]) -> KernelColumns:
    """The columns of ``kernels`` for every instance at once (see ``KernelColumns``);
    those of a region's instances are kept with the index, so a reopen maps them."""
    key = batch_key(instances)
    if key is None:
        return _kernel_columns(analysed, instances)
    return analysed.stored(f"kernels:{key}", lambda: _kernel_columns(analysed, instances),
                           _encode_columns,
                           lambda arrays, _doc: _decode_columns(analysed.trace, arrays,
                                                                len(instances)))


def _encode_columns(cols: KernelColumns) -> tuple[dict[str, np.ndarray], None]:
    """The columns as arrays (the distinct chains as their name ids)."""
    return {"ptr": narrow(cols.ptr), "rows": narrow(cols.rows),
            "offset_ns": narrow(cols.offset_ns), "chain": narrow(cols.chain),
            "chain_names": cols.chain_ids, "combos": cols.combos, "combo": narrow(cols.combo),
            "attribution": cols.attribution.astype(np.int8), "first_ns": cols.first_ns,
            "time_widths": np.asarray(cols.time_widths, dtype=np.int64)}, None


def _decode_columns(trace: Trace, arrays: dict[str, np.ndarray],
                    instances: int) -> KernelColumns:
    """``_encode_columns``' arrays back, checked against the trace and the instances
    (ValueError: recomputed)."""
    ptr, rows, chain, names = (arrays["ptr"], arrays["rows"], arrays["chain"],
                               arrays["chain_names"])
    combos = arrays["combos"]
    n = rows.shape[0]
    check_ints(arrays, "ptr", "rows", "offset_ns", "chain", "combo")
    check_pointers(ptr, n, instances)
    if (names.ndim != 2 or combos.ndim != 2 or combos.shape[1] != 6
            or any(arrays[f].shape != (n,) for f in ("offset_ns", "chain", "attribution", "combo"))
            or arrays["first_ns"].shape != (instances,)):
        raise ValueError("stored kernel columns of another shape")
    for values, lo, hi in ((rows, 0, len(trace)), (chain, 0, names.shape[0]),
                           (names.reshape(-1), -1, len(trace.strings)),
                           (arrays["attribution"], 0, len(ATTRIBUTIONS)),
                           (arrays["combo"], 0, combos.shape[0]),
                           (combos[:, 0], 0, len(trace.strings)),
                           (combos[:, 3], -1, len(trace.strings)),
                           (combos[:, 4], 0, names.shape[0]),
                           (combos[:, 5], 0, len(ATTRIBUTIONS))):
        check_within(values, lo, hi)
    widths = arrays["time_widths"]
    if widths.shape != (2,):
        raise ValueError("stored kernel time widths of another shape")
    check_within(widths, 0, WIDEST_TEXT + 1)
    strings = trace.strings
    chains = [tuple(strings[i] for i in u if i >= 0) for u in names.tolist()]
    wide = [np.asarray(arrays[f], dtype=np.int64) for f in ("ptr", "rows", "offset_ns",
                                                             "chain", "combo")]
    return KernelColumns(wide[0], wide[1], wide[2], wide[3], chains, arrays["attribution"],
                         arrays["first_ns"], names, combos, wide[4],  # int64, as computed
                         (int(widths[0]), int(widths[1])))


def _kernel_columns(analysed: AnalysedTrace,
                    instances: Sequence[RegionInstance]) -> KernelColumns:
    trace, links = analysed.trace, analysed.links
    batch = analysed.launch_batch(instances, remember=False)
    rows, ptr = batch.rows, batch.inst_ptr
    ts = trace.ts_ns[rows]
    first = np.full(len(instances), -1, dtype=np.int64)
    nonempty = np.flatnonzero(np.diff(ptr) > 0)
    if nonempty.shape[0]:
        first[nonempty] = np.minimum.reduceat(ts, ptr[nonempty])
    owner = np.repeat(np.arange(len(instances)), np.diff(ptr))
    # Distinct chains by their names: a padded matrix of name ids, unique by row.
    lengths = np.diff(batch.chain_ptr)
    width = int(lengths.max()) if lengths.shape[0] else 0
    names = np.full((rows.shape[0], width), -1, dtype=np.int64)
    entry = np.repeat(np.arange(rows.shape[0]), lengths)
    level = np.arange(batch.chain.shape[0]) - np.repeat(batch.chain_ptr[:-1], lengths)
    names[entry, level] = trace.name_id[batch.chain]
    if rows.shape[0] and width:
        unique, inverse = unique_rows(names)
    else:  # no event, or no event with a known launch: one empty chain
        unique, inverse = np.full((1, 0), -1), np.zeros(rows.shape[0], dtype=np.int64)
    strings = trace.strings
    chains = [tuple(strings[i] for i in u if i >= 0) for u in unique.tolist()]
    chain = np.asarray(inverse).reshape(-1)
    how = attribution(trace, links, rows)
    combos, combo = _combinations(analysed, rows, chain, how)
    offset = ts - first[owner]
    return KernelColumns(ptr, rows, offset, chain, chains, how, first, unique, combos, combo,
                         (widest(offset), widest(trace.dur_ns[rows])))


def _combinations(analysed: AnalysedTrace, rows: np.ndarray, chain: np.ndarray,
                  how: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (name id, kind, stream, launcher's name id or -1, chain, attribution)
    of the events, and each event's: all an event's text but its two times."""
    trace, links = analysed.trace, analysed.links
    if rows.shape[0] == 0:
        return np.zeros((0, 6), dtype=np.int64), np.zeros(0, dtype=np.int64)
    op = links.op[rows]
    op_name = np.where(op >= 0, trace.name_id[np.maximum(op, 0)], -1)
    key = np.stack([trace.name_id[rows].astype(np.int64), trace.kind[rows].astype(np.int64),
                    trace.stream[rows].astype(np.int64), op_name.astype(np.int64),
                    chain.astype(np.int64), how.astype(np.int64)], axis=1)
    unique, inverse = unique_rows(key)
    return unique, np.asarray(inverse).reshape(-1)


def kernels_of(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
               which: Sequence[int] | None = None) -> list[InstanceKernels]:
    """``instance_kernels`` of ``instances[k]`` for each ``k`` of ``which`` (all: None),
    from the columns of every one of them (``kernel_columns``: a region's are kept
    with the index, so one instance of it is read, not recomputed from the whole
    trace's links and op nesting); objects are made for those asked for only."""
    trace = analysed.trace
    cols = kernel_columns(analysed, instances)
    chosen = np.arange(len(instances)) if which is None else np.asarray(which, dtype=np.int64)
    lo, hi = cols.ptr[chosen], cols.ptr[chosen + 1]
    events = concat_ranges(lo, hi)
    at = cols.rows[events]
    rows, name_id, kind = at.tolist(), trace.name_id[at].tolist(), trace.kind[at].tolist()
    offset = (cols.offset_ns[events] / 1000.0).tolist()
    dur = (trace.dur_ns[at] / 1000.0).tolist()
    stream = trace.stream[at].tolist()
    op_name = cols.combos[cols.combo[events], 3].tolist()
    chain, how = cols.chain[events].tolist(), cols.attribution[events].tolist()
    strings, origin = trace.strings, trace.start_ns
    ends, first = np.cumsum(hi - lo).tolist(), cols.first_ns[chosen].tolist()
    kinds = {int(k): v for k, v in KIND_NAMES.items()}
    out = []
    for n, k in enumerate(chosen.tolist()):
        inst = instances[k]
        entries = [
            KernelEntry(
                row=rows[j], name=strings[name_id[j]], kind=kinds.get(kind[j], "other"),
                start_offset_us=offset[j], dur_us=dur[j],
                stream=None if stream[j] == NO_ID else stream[j],
                launched_by=strings[op_name[j]] if op_name[j] >= 0 else None,
                launch_chain=cols.chains[chain[j]], attribution=ATTRIBUTIONS[how[j]])
            for j in range(ends[n - 1] if n else 0, ends[n])
        ]
        out.append(InstanceKernels(
            region=inst.name,
            instance=inst.index,
            start_us=(inst.start_ns - origin) / 1000.0,
            cpu_time_us=inst.cpu_ns / 1000.0,
            device_time_us=inst.device_ns / 1000.0,
            gpu_start_us=None if not entries else (first[n] - origin) / 1000.0,
            kernels=entries,
        ))
    return out


def instance_kernels(analysed: AnalysedTrace, inst: RegionInstance) -> InstanceKernels:
    """The GPU events of one instance (see the module doc for the offsets)."""
    return kernels_of(analysed, [inst])[0]
