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

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

import numpy as np

from profiling.analysis.attention_regions import attention_regions, region_instances
from profiling.analysis.copies import CopyStats, copy_stats
from profiling.analysis.key_averages import KeyAverages, key_averages
from profiling.analysis.launch_chain import Launch, launch_chain
from profiling.analysis.links import Links, OpTree, link_gpu_events
from profiling.analysis.regions import RegionInstance, Regions, find_regions
from profiling.trace.model import Trace

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
                cache[self.name] = self.build(obj)
            return cache[self.name]


PARTS = ("ops", "links", "regions", "attention_regions", "key_averages", "copies")
"""The parts an ``AnalysedTrace`` builds (``parts`` accepts any of them ready-made)."""


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
        self.__dict__.update(parts)

    def _lock_for(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def ready(self, name: str) -> bool:
        """Whether part ``name`` is built already (asking for it costs nothing then)."""
        return name in self.__dict__

    # ---- the parts ----

    @part
    def ops(self) -> OpTree:
        """Every cpu_op / user_annotation, nested by torch's rule (``links.OpTree``)."""
        return OpTree.of(self.trace)

    @part
    def links(self) -> Links:
        """Each GPU event's launching call and the op around it."""
        return link_gpu_events(self.trace, self.ops)

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
        """torch's ``key_averages`` op table (over the shared links)."""
        return key_averages(self.trace, links=self.links)

    @part
    def copies(self) -> list[CopyStats]:
        """Memcpy/Memset names with counts, launchers and regions (``stats``)."""
        return copy_stats(self.trace, self.links, self.regions)

    # ---- per region and per instance (cached by key) ----

    def instances(self, region: str) -> list[RegionInstance]:
        """Instances of a region: a group key, one exact name, or an attention op."""
        found = self._instances.get(region)
        if found is None:
            with self._lock_for("instances"):
                found = self._instances.get(region)
                if found is None:
                    found = region_instances(self.trace, self.links, self.regions, region)
                    self._instances[region] = found
        return found

    def gpu_rows(self, inst: RegionInstance) -> np.ndarray:
        """The instance's GPU events, in GPU start order."""
        return inst.gpu_rows(self.trace, self.links)

    def launches(self, inst: RegionInstance) -> tuple[Launch, ...]:
        """The instance's GPU events with their launch chains inside it, in GPU order."""
        found = self._launches.get(inst.row)
        if found is None:
            links, ops = self.links, self.ops
            found = tuple(Launch(g, launch_chain(self.trace, links, ops, g, inst.row))
                          for g in self.gpu_rows(inst).tolist())
            self._launches[inst.row] = found  # a race computes it twice, harmlessly
        return found

    def launch_chain(self, gpu_row: int, within: int = -1) -> tuple[int, ...]:
        """The launch chain of one GPU row (``launch_chain.launch_chain``)."""
        return launch_chain(self.trace, self.links, self.ops, gpu_row, within)


def as_analysed(trace: Trace | AnalysedTrace) -> AnalysedTrace:
    """``trace`` analysed (an ``AnalysedTrace`` is returned as it is)."""
    return trace if isinstance(trace, AnalysedTrace) else AnalysedTrace(trace)
