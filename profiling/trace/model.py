"""The in-memory model of one trace file: numpy columns, not a list of dicts.

Every consumer (analysis, headless commands, the TUI) reads traces through this
one model.  Events are rows of parallel numpy arrays; strings are interned once
into ``Trace.strings`` and referenced by id, so a trace of ten million events
costs a few hundred bytes per event at most and no Python object per event.

Times are integer nanoseconds, converted once at load (Kineto writes
microseconds, often fractional).  ``dur_ns`` is 0 for instants and flows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol, cast

import numpy as np

NOT_READ = -1
"""``Trace.op_input`` where the decoder read no input dtype (see ``op_inputs``)."""


class ArgsSource(Protocol):
    """Reads the ``args`` of entries of the file's event list, by entry index."""

    def args(self, entry: int) -> dict[str, Any]: ...

    def args_many(self, entries: list[int]) -> list[dict[str, Any]]: ...


NO_ID = -1
"""Value of an integer id column (correlation, external id, stream...) that is absent."""

NARROW_COLUMNS = {"correlation": np.int32, "external_id": np.int32, "stream": np.int32,
                  "source_index": np.int32, "name_id": np.int16, "cat_id": np.int16}
"""The columns the loader stores narrower than their usual dtype (int64 for the ids
and positions, int32 for the string ids) when every value of the trace fits
(``narrow``): ids that CUPTI and torch number from small counters, positions in
the event list, a string table of fewer than 32768 names.  A third of a big
trace's index; times stay int64 always."""


def narrow(values: np.ndarray, to: type = np.int32, wide: type = np.int64) -> np.ndarray:
    """``values`` (integers) as ``to`` when every one fits, else as ``wide``: chosen per
    trace from its values, so code reading a ``NARROW_COLUMNS`` column must be right
    for both (widen with ``astype(np.int64)`` before arithmetic that could overflow)."""
    if values.dtype == to:
        return values
    if not fits(values, to):
        return values.astype(wide, copy=False)
    return values.astype(to)


def fits(values: np.ndarray, to: type, offset: int = 0) -> bool:
    """Every value of ``values`` (integers) plus ``offset`` fits ``to`` (none: True)."""
    if not values.shape[0] or (values.dtype == to and not offset):
        return True
    limits = np.iinfo(to)
    return limits.min <= int(values.min()) + offset and int(values.max()) + offset <= limits.max


class Kind(IntEnum):
    """What an event is, decided from its phase and category (old and new spellings)."""

    CPU_OP = 0
    USER_ANNOTATION = 1
    RUNTIME = 2
    KERNEL = 3
    MEMCPY = 4
    MEMSET = 5
    GPU_ANNOTATION = 6
    PYTHON_FUNCTION = 7
    INSTANT = 8
    FLOW = 9
    OTHER = 10


GPU_KINDS = (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)
"""Kinds that run on a device and are launched from the host (the 'GPU events')."""

GPU_KIND_TABLE = np.zeros(256, dtype=bool)
GPU_KIND_TABLE[list(GPU_KINDS)] = True
"""``GPU_KIND_TABLE[kind]``: whether each row's (uint8) kind is in ``GPU_KINDS``, one
look-up a row (``np.isin`` sorts)."""

STEP_PREFIX = "ProfilerStep#"
"""How ``torch.profiler.profile.step()`` names each step's range: ``ProfilerStep#N``."""


class DeviceType(IntEnum):
    """Where an event ran, as torch's ``DeviceType`` names it in ``key_averages``.

    torch calls ROCm "CUDA" (HIP stands in for CUDA), and so does this model; an
    MTIA, XPU or HPU device event is one of those, as in torch's
    ``deviceTypeFromActivity``.  Host events are CPU.
    """

    CPU = 0
    CUDA = 1
    MTIA = 2
    XPU = 3
    HPU = 4
    PRIVATEUSE1 = 5


DEVICE_TYPE_NAMES = ("CPU", "CUDA", "MTIA", "XPU", "HPU", "PrivateUse1")
"""``DeviceType`` -> the name torch prints (``FunctionEventAvg.device_type``)."""


class LaneKind:
    CPU = "cpu"
    GPU = "gpu"
    OTHER = "other"


@dataclass
class Lane:
    """One CPU thread (pid, tid) or one GPU stream (device, stream).

    ``pid`` and ``tid`` are kept exactly as the file spelled them (int or str).
    ``group`` indexes ``Trace.groups`` (the process or device the lane belongs to).
    """

    index: int
    pid: int | str
    tid: int | str
    kind: str = LaneKind.OTHER
    label: str = ""
    group: int = 0
    sort_index: int = 0
    events: int = 0
    max_depth: int = 0


@dataclass
class Group:
    """A process (host) or a device: the unit lanes are grouped and folded by."""

    index: int
    pid: int | str
    kind: str
    label: str
    sort_index: int = 0
    lanes: list[int] = field(default_factory=list)


@dataclass
class Trace:
    """A loaded trace.  Columns are indexed by event row; rows are sorted by
    (lane, ts_ns, -dur_ns) so each lane is one contiguous, time-ordered slice
    (``lane_start[l]:lane_start[l+1]``) and nesting depth is a count over it.

    ``source_index`` maps a row back to the entry's position in the file's event
    list, for error messages and for readers who count entries.
    """

    path: str
    n_entries: int  # entries in the file's event list, metadata included
    strings: list[str]
    ts_ns: np.ndarray  # int64
    dur_ns: np.ndarray  # int64, 0 for instants and flows
    name_id: np.ndarray  # int16 or int32 (``narrow``) into strings
    cat_id: np.ndarray  # int16 or int32 (``narrow``) into strings
    kind: np.ndarray  # uint8, Kind
    ph: np.ndarray  # uint8, ord() of the phase letter ('X', 'i', 's', ...)
    lane: np.ndarray  # int32 into lanes
    depth: np.ndarray  # int16, nesting depth within the lane (0 = outermost)
    # int32 or int64 (``narrow``: int32 when every value of the trace fits):
    correlation: np.ndarray  # args.correlation (flows: the flow id); NO_ID if absent
    external_id: np.ndarray  # args["External id"]; NO_ID if absent
    stream: np.ndarray  # args.stream for device events; NO_ID if absent
    source_index: np.ndarray  # position in the file's event list
    lanes: list[Lane]
    lane_start: np.ndarray  # int64, len(lanes) + 1 boundaries into the rows
    groups: list[Group]
    metadata: dict[str, Any]  # top-level keys of the file other than traceEvents
    warnings: list[str] = field(default_factory=list)
    # Where ``args`` come from: a loaded trace reads them lazily from its file;
    # a trace built in memory (synthetic data) has none.
    args_source: ArgsSource | None = None
    # uint8, DeviceType of each row (from its category; see kinds.device_types).
    # A trace built in memory without it gets CUDA for device kinds, else CPU.
    device_type: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    # int8, the input dtype code of each compute and cast op, read by the decoder
    # (see op_inputs); NOT_READ (-1) elsewhere, and on every row of a trace built
    # in memory, whose ops' args are then read when asked for.
    op_input: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))

    def __post_init__(self) -> None:
        if self.device_type.shape[0] != self.ts_ns.shape[0]:
            device = np.isin(self.kind, [*GPU_KINDS, Kind.GPU_ANNOTATION])
            self.device_type = np.where(device, DeviceType.CUDA, DeviceType.CPU).astype(np.uint8)
        if self.op_input.shape[0] != self.ts_ns.shape[0]:
            self.op_input = np.full(self.ts_ns.shape[0], NOT_READ, dtype=np.int8)

    # ---- small, readable accessors (the columns are the fast path) ----

    def __len__(self) -> int:
        return int(self.ts_ns.shape[0])

    def name(self, row: int) -> str:
        return self.strings[int(self.name_id[row])]

    def category(self, row: int) -> str:
        return self.strings[int(self.cat_id[row])]

    def end_ns(self) -> np.ndarray:
        return self.ts_ns + self.dur_ns

    def args(self, row: int) -> dict[str, Any]:
        """The event's ``args`` object, decoded on demand (never kept per event)."""
        if self.args_source is None:
            return {}
        return self.args_source.args(int(self.source_index[row]))

    def args_of(self, rows: Any) -> list[dict[str, Any]]:
        """``args`` of many rows at once (cheaper than one by one for loaded traces)."""
        rows = [int(r) for r in rows]
        if self.args_source is None:
            return [{} for _ in rows]
        return self.args_source.args_many([int(self.source_index[r]) for r in rows])

    def lane_rows(self, lane: int) -> slice:
        return slice(int(self.lane_start[lane]), int(self.lane_start[lane + 1]))

    def string_ids(self, name: str) -> int | None:
        """The interned id of ``name``, or None if no event carries it."""
        index = self._string_index()
        return index.get(name)

    def _string_index(self) -> dict[str, int]:
        cached = getattr(self, "_string_index_cache", None)
        if cached is None:
            cached = {s: i for i, s in enumerate(self.strings)}
            object.__setattr__(self, "_string_index_cache", cached)
        return cached

    @property
    def start_ns(self) -> int:
        """The first event's start."""
        return self._bound("start", lambda: self.ts_ns.min())

    @property
    def end_ns_max(self) -> int:
        """The last end of any event."""
        return self._bound("end", lambda: (self.ts_ns + self.dur_ns).max())

    @property
    def last_start_ns(self) -> int:
        """The last event's start."""
        return self._bound("last_start", lambda: self.ts_ns.max())

    def all_bounds(self) -> dict[str, int]:
        """The three bounds by name (``start``, ``end``, ``last_start``), each computed
        if not yet: an index keeps them, so a reopen makes no pass over 3 M rows for
        them (``know_bounds``)."""
        return {"start": self.start_ns, "end": self.end_ns_max,
                "last_start": self.last_start_ns}

    def known_bounds(self) -> dict[str, int]:
        """The bounds computed or taken so far, by name (none asked yet: empty)."""
        return dict(self.__dict__.get("_bounds_cache", {}))

    def know_bounds(self, bounds: dict[str, int]) -> None:
        """Take ``bounds`` (``all_bounds()`` of a trace with these very columns: an
        index's) as this trace's, instead of computing them."""
        self.__dict__.setdefault("_bounds_cache", {}).update(bounds)

    def _bound(self, name: str, reduce: Callable[[], Any]) -> int:
        """One of the trace's bounds, each a pass over every row (3 M on a 1 GB trace):
        computed once, when first asked for, as a loaded trace's columns never change,
        and every range question (``slices``, the ruler) asks again."""
        cache = self.__dict__.setdefault("_bounds_cache", {})
        if name not in cache:
            cache[name] = int(reduce()) if len(self) else 0
        return cast(int, cache[name])
