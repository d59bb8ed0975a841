"""One analysis per trace, computed once: ``AnalysedTrace``.

Every command and view asks the same questions of a trace (which call launched
each kernel, which ops nest in which, the region instances and their GPU work,
the op table), and each answer walks the whole trace.  ``AnalysedTrace`` wraps a
``Trace`` and builds each part the first time it is asked for, once, whichever
thread asks (the TUI analyses on worker threads while the UI thread reads the
links): ``stats``, ``kernels``, ``compare``, ``findings`` and every TUI view take
one and share its parts, so a number shown twice is one number computed once.

The parts are plain data (numpy arrays and frozen dataclasses: ``OpTree``,
``Links``, ``Regions`` of ``RegionInstance``, ``KeyAverages``), so they can be
stored with the trace's sidecar index and handed back through ``parts``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import numpy as np

from profiling.analysis import analysis_store
from profiling.analysis.analysis_parts import CODECS, decode_instances, encode_instances
from profiling.analysis.attention_regions import attention_regions, region_instances
from profiling.analysis.chains import (
    InstanceLaunches,
    LaunchChains,
    batch_launches,
    decode_launches,
    encode_launches,
    instance_launches,
    launch_chains,
)
from profiling.analysis.launch_chain import Launch, launch_chain
from profiling.analysis.links import Links, OpTree, link_gpu_events
from profiling.analysis.ranges import concat_ranges
from profiling.analysis.regions import RegionInstance, Regions, find_regions
from profiling.analysis.stored_regions import StoredRegions, instance_column
from profiling.cores import usable_cores
from profiling.trace.model import Trace

if TYPE_CHECKING:  # imported where built: a reopened `kernels` never builds these three
    from profiling.analysis.copies import CopyStats
    from profiling.analysis.key_averages import KeyAverages
    from profiling.analysis.op_dtypes import OpDtypes

T = TypeVar("T")


class part(Generic[T]):  # noqa: N801 - used as a decorator, like functools.cached_property
    """``functools.cached_property`` with a lock per part and per object.

    Two threads asking for the same part compute it once (the second waits);
    parts that depend on each other take their locks in dependency order, which
    is acyclic, so they never deadlock; asking for a part that is ready takes no
    lock at all.
    """

    def __init__(self, build: Callable[[Any], T]) -> None:
        self.build = build
        self.name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> part[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj: object | None, owner: type) -> part[T] | T:
        if obj is None:
            return self
        cache = obj.__dict__
        if self.name in cache:
            return cache[self.name]
        with obj._lock_for(self.name):  # type: ignore[attr-defined]
            if self.name not in cache:
                cache[self.name] = obj._stored_or_built(self.name, self.build)  # type: ignore[attr-defined]
            return cache[self.name]


PARTS = ("ops", "links", "regions", "attention_regions", "key_averages", "copies", "chains",
         "op_dtypes")
"""The parts an ``AnalysedTrace`` builds (``parts`` accepts any of them ready-made)."""

BESIDE_MIN_CORES = 4
"""``beside`` builds a part on a thread of its own from this many usable cores (below,
the thread would only take turns with the asker's)."""

STORED_BATCH = 64
"""``launch_batch`` keeps a batch of at least this many instances with the index (a
region's, for ``kernels`` and ``findings``); smaller ones cost less to recompute..."""
STORED_EVENTS = 16_384
"""... unless they hold this many GPU events: an annotation around a whole run is one
instance of every GPU event (296,478 on a 1 GB trace: 0.5 s and 0.3 GB to recompute
on each ``kernels --region`` of it, in the Regions view on each visit)."""


class AnalysedTrace:
    """A trace and its analysis parts, each built once on first use (see module doc)."""

    def __init__(self, trace: Trace, **parts: Any) -> None:
        unknown = set(parts) - set(PARTS)
        if unknown:
            raise TypeError(f"unknown analysis parts: {', '.join(sorted(unknown))}")
        self.trace = trace
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._instances: dict[str, list[RegionInstance]] = {}
        self._launches: dict[int, tuple[Launch, ...]] = {}
        # the remembered batches, by their instances: (instance row -> position, batch)
        self._batches: dict[int, tuple[dict[int, int], InstanceLaunches]] = {}
        self.__dict__.update(parts)

    def _stored_or_built(self, name: str, build: Callable[[Any], Any]) -> Any:
        """Part ``name`` from the trace's index (``analysis_store``) if a current copy
        is there, else built, then stored for the next open (best effort)."""
        encode, decode = CODECS[name]
        stored = analysis_store.load(self.trace, name)
        if stored is not None:
            try:
                return decode(self.trace, *stored)
            except (KeyError, ValueError, TypeError, IndexError):
                pass  # a damaged or foreign copy: rebuilt and rewritten below
        value = build(self)
        if analysis_store.available(self.trace):
            analysis_store.save(self.trace, name, *encode(value))
        return value

    def _lock_for(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def ready(self, name: str) -> bool:
        """Whether part ``name`` is built already (asking for it costs nothing then)."""
        return name in self.__dict__

    def beside(self, name: str) -> Callable[[], Any]:
        """Part ``name``, asked for later (call the result): with cores to spare
        (``BESIDE_MIN_CORES``) it is built from now on, on a thread of its own, so the
        asker's work until then runs beside it.  A failure there is left for the
        asker's own call to meet (it builds the part again, and raises)."""
        if not self.ready(name) and usable_cores() >= BESIDE_MIN_CORES:
            def build() -> None:
                try:
                    getattr(self, name)
                except Exception:  # noqa: BLE001,S110 - see the docstring
                    pass

            threading.Thread(target=build, name=f"attn-tui-{name}", daemon=True).start()
        return lambda: getattr(self, name)

    # ---- the parts ----

    @part
    def ops(self) -> OpTree:
        """Every cpu_op / user_annotation, nested by torch's rule (``links.OpTree``)."""
        return OpTree.of(self.trace)

    @part
    def links(self) -> Links:
        """Each GPU event's launching call and the op around it (the op nesting, wanted
        only for the latter, is built beside the join of the launches)."""
        return link_gpu_events(self.trace, self.beside("ops"))

    @part
    def regions(self) -> Regions:
        """Every ``record_function`` instance and the GPU events launched inside it."""
        return find_regions(self.trace, self.links)

    @part
    def attention_regions(self) -> tuple[str, ...]:
        """The regions worth explaining as attention (``attention_regions``)."""
        return tuple(attention_regions(self.trace, self.links, self.regions))

    @part
    def key_averages(self) -> KeyAverages:
        """torch's ``key_averages`` op table (over the shared links, asked for once the
        host events are nested: see ``key_averages``)."""
        from profiling.analysis.key_averages import key_averages

        return key_averages(self.trace, links=lambda: self.links)

    @part
    def copies(self) -> list[CopyStats]:
        """Memcpy/Memset names with counts, launchers and regions (``stats``)."""
        from profiling.analysis.copies import copy_stats

        return copy_stats(self.trace, self.links, self.regions)

    @part
    def chains(self) -> LaunchChains:
        """Every GPU event's ops around its launch, innermost first (``chains``)."""
        return launch_chains(self.trace, self.links, self.ops)

    @part
    def op_dtypes(self) -> OpDtypes:
        """Input dtypes of the compute and cast ops (``op_dtypes``: their args, read once)."""
        from profiling.analysis.op_dtypes import op_dtypes

        return op_dtypes(self.trace)

    # ---- per region and per instance (cached by key) ----

    def instances(self, region: str) -> list[RegionInstance]:
        """Instances of a region: a group key, one exact name, or an attention op."""
        found = self._instances.get(region)
        if found is None:
            with self._lock_for("instances"):
                found = self._instances.get(region)
                if found is None:
                    found = self.regions.select(region) or self._op_instances(region)
                    self._instances[region] = found
        return found

    def lazy_instances(self, region: str) -> Sequence[RegionInstance]:
        """``instances(region)``, as the stored table's ``InstanceRange`` when the region
        is in it: readers by column (``findings``, ``kernels``) make no object per
        instance (38,400 on a 1 GB trace), and one asked for by position is made then."""
        regions = self.regions
        if region not in self._instances and isinstance(regions, StoredRegions):
            found = regions.select_lazily(region)
            if len(found):
                return found
        return self.instances(region)

    def _op_instances(self, region: str) -> list[RegionInstance]:
        """Instances of a region that is not an annotation (an attention op, or the
        sites of attention kernels): stored with the index like the parts."""
        return self.stored(
            f"instances:{region}",
            lambda: region_instances(self.trace, self.links, self.regions, region),
            lambda found: (encode_instances(found), None),
            lambda arrays, _doc: decode_instances(self.trace, arrays))

    def stored(self, name: str, build: Callable[[], T],
               encode: Callable[[T], tuple[dict[str, np.ndarray], Any]],
               decode: Callable[[dict[str, np.ndarray], Any], T]) -> T:
        """A result kept with the index under ``name`` (see ``analysis_store``): read
        when a current copy is there, else built and written.  For results beyond
        the parts (a region's instances, the findings); not cached in memory.  One
        thread at a time per name: a second asker (a first open's ``warm`` beside
        the command) waits, then reads the copy the first one stored."""
        with self._lock_for(f"stored:{name}"):
            found = analysis_store.load(self.trace, name)
            if found is not None:
                try:
                    return decode(*found)
                except (KeyError, ValueError, TypeError, IndexError):
                    pass  # a damaged or foreign copy: rebuilt and rewritten below
            value = build()
            if analysis_store.available(self.trace):
                analysis_store.save(self.trace, name, *encode(value))
            return value

    def launch_batch(self, instances: Sequence[RegionInstance],
                     remember: bool = True) -> InstanceLaunches:
        """GPU rows and launch chains of many instances, computed for all at once
        (``chains.instance_launches``), in the order given.  A batch of
        ``STORED_BATCH`` instances or more (or of ``STORED_EVENTS`` GPU events) is kept
        with the index (keyed by the instances' rows), so a reopen maps it.  With
        ``remember``, ``launches`` and ``gpu_rows`` of each instance are then answered
        from the batch's arrays, lazily: no object is made per instance here (338,000
        ``Launch`` tuples on a 1 GB trace, most never looked at)."""
        batch = self._batch_of(instances)
        if remember:
            rows = instance_column(instances, "row").tolist()
            key = hash(tuple(rows))  # the same instances again replace their batch
            with self._guard:
                # a new dict, not an update: readers iterate the old one unlocked
                position = {row: k for k, row in enumerate(rows)}
                self._batches = {**self._batches, key: (position, batch)}
        return batch

    def _batch_of(self, instances: Sequence[RegionInstance]) -> InstanceLaunches:
        def build() -> InstanceLaunches:
            if self.ready("chains"):
                chains = self.chains
            else:  # only the GPU rows asked about
                lo = instance_column(instances, "launch_lo")
                hi = instance_column(instances, "launch_hi")
                rows = self.links.by_launch[concat_ranges(lo, hi)]
                chains = launch_chains(self.trace, self.links, self.ops, rows)
            return instance_launches(self.trace, self.links, chains, instances)

        key = batch_key(instances)
        if key is None:
            return build()
        return self.stored(f"launches:{key}", build, encode_launches,
                           lambda arrays, _doc: decode_launches(self.trace, arrays,
                                                                len(instances)))

    def _where(self, row: int) -> tuple[InstanceLaunches, int] | None:
        """The remembered batch holding instance ``row``, and its position there."""
        for position, batch in self._batches.values():
            k = position.get(row)
            if k is not None:
                return batch, k
        return None

    def gpu_rows(self, inst: RegionInstance) -> np.ndarray:
        """The instance's GPU events, in GPU start order."""
        found = self._where(inst.row)
        if found is not None:
            batch, k = found
            return batch.rows[int(batch.inst_ptr[k]) : int(batch.inst_ptr[k + 1])]
        return inst.gpu_rows(self.trace, self.links)

    def launches(self, inst: RegionInstance) -> tuple[Launch, ...]:
        """The instance's GPU events with their launch chains inside it, in GPU order."""
        found = self._launches.get(inst.row)
        if found is None:
            where = self._where(inst.row)  # a race computes it twice, harmlessly
            found = self._launches[inst.row] = (
                batch_launches(*where) if where is not None
                else batch_launches(self.launch_batch([inst], remember=False), 0))
        return found

    def launch_chain(self, gpu_row: int, within: int = -1) -> tuple[int, ...]:
        """The launch chain of one GPU row (``launch_chain.launch_chain``)."""
        return launch_chain(self.trace, self.links, self.ops, gpu_row, within)


def batch_key(instances: Sequence[RegionInstance]) -> str | None:
    """The name under which results about exactly these instances (in this order) are
    kept with the index (a hash of their rows), or None for fewer than ``STORED_BATCH``
    holding fewer than ``STORED_EVENTS`` GPU events."""
    if len(instances) < STORED_BATCH and sum(
            int(instance_column(instances, f).sum())
            for f in ("kernels", "memcpys", "memsets")) < STORED_EVENTS:
        return None
    rows = np.ascontiguousarray(instance_column(instances, "row"), dtype=np.int64)
    return hashlib.sha256(rows.view(np.uint8).data).hexdigest()[:24]


def as_analysed(trace: Trace | AnalysedTrace) -> AnalysedTrace:
    """``trace`` analysed (an ``AnalysedTrace`` is returned as it is)."""
    return trace if isinstance(trace, AnalysedTrace) else AnalysedTrace(trace)
