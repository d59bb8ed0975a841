"""``Regions`` read back from the index: the instance table stays mapped, objects on demand.

A reopened trace's regions are a stored table of integers, one row per instance
(``analysis_parts``).  Turning every row into a ``RegionInstance`` costs about a
microsecond and 200 bytes each: on a 1 GB trace (85,000 instances) a tenth of a
second and 20 MB before a command has done anything, and most commands need none
of it (``stats`` wants the per-name sums) or half of it (``kernels --region
attn_fwd`` never looks at the steps).  ``StoredRegions`` answers ``names``,
``summaries`` and ``select`` from the table's columns and makes an instance
object only when one is asked for (each once: ``select`` and ``instances`` hand
out the same objects).  What it answers is what ``Regions`` answers for the same
instances; ``tests/test_stored_regions.py`` compares the two.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from profiling.analysis.regions import (
    INSTANCE_COL,
    INSTANCE_INTS,
    STEP_GROUP,
    STEP_PREFIX,
    RegionInstance,
    Regions,
    RegionSummary,
    make_instances,
)
from profiling.trace.model import Trace

_ROW = INSTANCE_INTS.index("row")
_COL = INSTANCE_COL


class StoredRegions(Regions):
    """``Regions`` over a stored instance table (see the module doc).

    ``table`` is the (instances x ``INSTANCE_INTS``) int64 array, usually mapped
    read-only.  Not a dataclass field: set once here, like the private ones."""

    table: np.ndarray
    _names: list[str]
    _groups: list[str]
    _first: np.ndarray
    _code: np.ndarray
    _made: list[RegionInstance | None]
    _all: list[RegionInstance] | None
    _lock: threading.Lock
    _trace: Trace

    def __init__(self, trace: Trace, table: np.ndarray) -> None:  # no dataclass __init__
        name_ids = np.asarray(trace.name_id[table[:, _ROW]], dtype=np.int64)
        ids, first, inverse = np.unique(name_ids, return_index=True, return_inverse=True)
        strings = trace.strings
        names = [strings[i] for i in ids.tolist()]
        setattr_ = object.__setattr__  # Regions is a frozen dataclass
        setattr_(self, "table", table)
        setattr_(self, "_names", names)  # each distinct name once, by id
        setattr_(self, "_groups", [STEP_GROUP if n.startswith(STEP_PREFIX) else n
                                   for n in names])  # group_name, inline: 38,400 steps
        setattr_(self, "_first", first)  # first instance of each distinct name
        setattr_(self, "_code", np.asarray(inverse).reshape(-1))  # distinct name of each
        setattr_(self, "_made", [None] * table.shape[0])  # objects made so far
        setattr_(self, "_all", None)  # ``instances``, once asked for
        setattr_(self, "_lock", threading.Lock())
        setattr_(self, "_trace", trace)

    @property
    def instances(self) -> list[RegionInstance]:  # type: ignore[override]
        """Every instance as an object (made on first use; then the same list, as
        ``Regions.instances`` is: callers index it in loops)."""
        every = self._all
        if every is None:
            every = self._objects(np.arange(self.table.shape[0]))
            object.__setattr__(self, "_all", every)
        return every

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regions) and self.instances == other.instances

    __hash__ = None  # type: ignore[assignment]  # like Regions (a list inside)

    def _objects(self, positions: np.ndarray) -> list[RegionInstance]:
        """The instances at ``positions``, each made once (under a lock: the TUI asks
        from several threads, and one instance must stay one object)."""
        made: list[Any] = self._made
        with self._lock:
            todo = [p for p in positions.tolist() if made[p] is None]
            if todo:
                names, groups, code = self._names, self._groups, self._code
                pairs = [(names[c], groups[c]) for c in code[todo].tolist()]
                for p, inst in zip(todo, make_instances(pairs, self.table[todo]), strict=True):
                    made[p] = inst
        return [made[p] for p in positions.tolist()]

    def positions(self, name: str) -> np.ndarray:
        """Table rows of ``select(name)``'s instances, in order."""
        return self.positions_of([name])[0]

    def positions_of(self, names: Sequence[str]) -> tuple[np.ndarray, set[str]]:
        """Table rows of the instances of any of ``names``, in order, from one pass over
        the distinct names, and the names that matched none (``Regions.select_all``)."""
        wanted, matched = set(names), set()
        hit = np.zeros(len(self._names), dtype=bool)
        for j, (n, g) in enumerate(zip(self._names, self._groups, strict=True)):
            if g in wanted or n in wanted:
                hit[j] = True
                matched.update({g, n} & wanted)
        return np.flatnonzero(hit[self._code]), wanted - matched

    def select_all(self, names: Sequence[str]) -> tuple[list[RegionInstance], set[str]]:
        at, missing = self.positions_of(names)
        return self._objects(at), missing

    def names(self) -> list[str]:
        """Group keys in order of first appearance (``ProfilerStep*`` once)."""
        order = np.argsort(self._first, kind="stable")
        return list(dict.fromkeys(self._groups[i] for i in order.tolist()))

    def select(self, name: str) -> list[RegionInstance]:
        """Instances of a group key or of one exact name (``Regions.select``)."""
        return self._objects(self.positions(name))

    def instance_groups(self) -> list[str]:
        """Each instance's group key (``RegionInstance.group``), from its name's code."""
        groups = self._groups
        return [groups[c] for c in self._code.tolist()]

    def subset(self, positions: np.ndarray) -> StoredRegions:
        """The instances at table ``positions`` (in order) as regions of their own,
        still columns: a rank's regions (``rank_breakdown``) with no object made."""
        return StoredRegions(self._trace, self.table[positions])

    def lanes(self) -> np.ndarray:
        """Each instance's lane (``RegionInstance.lane``)."""
        return self.table[:, _COL["lane"]]

    def select_lazily(self, name: str) -> InstanceRange:
        """``select(name)`` as an ``InstanceRange``: no object made until one is asked for."""
        return InstanceRange(self, self.positions(name))

    def summaries(self) -> list[RegionSummary]:
        """``Regions.summaries`` from the table's columns: integer sums per group
        (exact, as the Python sums are), then the same float divisions."""
        k = self.table.shape[0]
        if k == 0:
            return []
        keys = self.names()
        slot = {g: j for j, g in enumerate(keys)}
        group_of = np.array([slot[g] for g in self._groups], dtype=np.int64)[self._code]
        t = self.table
        cols = np.stack([t[:, _COL["end_ns"]] - t[:, _COL["start_ns"]], t[:, _COL["device_ns"]],
                         t[:, _COL["kernels"]], t[:, _COL["memcpys"]], t[:, _COL["memsets"]]],
                        axis=1)
        sums = np.zeros((len(keys), 5), dtype=np.int64)
        np.add.at(sums, group_of, cols)
        counts = np.bincount(group_of, minlength=len(keys)).tolist()
        return [RegionSummary.from_totals(name, n, *t)
                for name, n, t in zip(keys, counts, sums.tolist(), strict=True)]


class InstanceRange(Sequence[RegionInstance]):
    """Some instances of a ``StoredRegions`` (by table position), as a sequence whose
    objects are made when an item is asked for; column readers (``instance_table``,
    ``instance_names``) take the stored table's rows instead, making none."""

    def __init__(self, regions: StoredRegions, positions: np.ndarray) -> None:
        self.regions = regions
        self.positions = positions
        self.table = regions.table[positions]

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    @overload
    def __getitem__(self, i: int) -> RegionInstance: ...
    @overload
    def __getitem__(self, i: slice) -> list[RegionInstance]: ...

    def __getitem__(self, i: int | slice) -> RegionInstance | list[RegionInstance]:
        if isinstance(i, slice):
            return self.regions._objects(self.positions[i])
        return self.regions._objects(self.positions[[i]])[0]

    def __iter__(self) -> Any:
        return iter(self.regions._objects(self.positions))

    def names(self) -> list[str]:
        """Each instance's own name (``RegionInstance.name``)."""
        names = self.regions._names
        return [names[c] for c in self.regions._code[self.positions].tolist()]


def instance_table(instances: Sequence[RegionInstance]) -> np.ndarray:
    """The instances' integer fields as an (instances x ``INSTANCE_INTS``) int64 table:
    the stored rows for an ``InstanceRange``, else read from the objects."""
    if isinstance(instances, InstanceRange):
        return instances.table
    fields = operator.attrgetter(*INSTANCE_INTS)  # one C call per instance
    return np.array([fields(i) for i in instances], dtype=np.int64).reshape(
        len(instances), len(INSTANCE_INTS))


def instance_column(instances: Sequence[RegionInstance], name: str) -> np.ndarray:
    """One integer field of every instance (``INSTANCE_INTS``), as int64."""
    if isinstance(instances, InstanceRange):
        return np.ascontiguousarray(instances.table[:, _COL[name]])
    return np.fromiter(map(operator.attrgetter(name), instances), dtype=np.int64,
                       count=len(instances))


def instance_names(instances: Sequence[RegionInstance]) -> list[str]:
    """Each instance's own name."""
    if isinstance(instances, InstanceRange):
        return instances.names()
    return [i.name for i in instances]
