"""Which regions to show when the user named none (``kernels`` without ``--region``).

Most traces made elsewhere have no ``attn_fwd`` annotation, so a fixed default
region would fail on them.  The choice, in order of what is most likely wanted:

1. the attention regions (``AnalysedTrace.attention_regions``: attention
   annotations, else attention ops, else the host sites of attention kernels);
2. else the top-level annotations: ``record_function`` slices that no other
   annotation on their thread encloses (``ProfilerStep#N`` left out, as they
   enclose everything and have their own branch);
3. else the profiler steps (``ProfilerStep*``, also old ``cpu_op`` steps);
4. else nothing (a trace with no region at all).

The answer names its branch so the command can say which it chose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.nesting import nest
from profiling.analysis.regions import INSTANCE_COL, STEP_GROUP, STEP_PREFIX, RegionInstance
from profiling.analysis.stored_regions import InstanceRange, StoredRegions
from profiling.trace.model import Kind, Trace

ATTENTION = "attention regions"
TOP_LEVEL = "top-level annotations"
STEPS = "profiler steps"
NONE = "no regions"


@dataclass(frozen=True)
class RegionChoice:
    """The regions chosen (names usable with ``AnalysedTrace.instances``) and why."""

    branch: str
    names: tuple[str, ...]


def choose_regions(analysis: AnalysedTrace) -> RegionChoice:
    """The regions ``kernels`` lists by default (see the module's text)."""
    attention = analysis.attention_regions
    if attention:
        return RegionChoice(ATTENTION, tuple(attention))
    top = top_level_annotations(analysis.trace)
    if top:
        return RegionChoice(TOP_LEVEL, tuple(top))
    if STEP_GROUP in analysis.regions.names():
        return RegionChoice(STEPS, (STEP_GROUP,))
    return RegionChoice(NONE, ())


def chosen_instances(analysis: AnalysedTrace,
                     names: Sequence[str]) -> Sequence[RegionInstance]:
    """The instances of ``names`` in CPU start order (ties by row).  When every name
    is a region of the stored table, an ``InstanceRange`` of its rows in that order
    (no object made), else the objects of ``analysis.instances`` sorted.  Either way
    the same rows in the same order, so results kept for them under their rows'
    key (``analysed.batch_key``) are found again on reopen."""
    regions = analysis.regions
    if isinstance(regions, StoredRegions):
        at, missing = regions.positions_of(names)
        if names and not missing:
            table = regions.table[at]
            order = np.lexsort((table[:, INSTANCE_COL["row"]],
                                table[:, INSTANCE_COL["start_ns"]]))  # stable
            return InstanceRange(regions, at[order])
    # one pass over the regions for every name; the rest (attention ops) one by one
    selected, missing = regions.select_all(names)
    selected += [i for name in names if name in missing for i in analysis.instances(name)]
    return sorted(selected, key=lambda i: (i.start_ns, i.row))


def top_level_annotations(trace: Trace) -> list[str]:
    """Names of user annotations not nested in another (non-step) annotation on
    their thread, in order of first start; ``ProfilerStep#N`` are left out."""
    rows = np.flatnonzero(trace.kind == int(Kind.USER_ANNOTATION))  # row order: nestable
    if rows.shape[0] == 0:
        return []
    steps = np.array([s.startswith(STEP_PREFIX) for s in trace.strings], dtype=bool)
    rows = rows[~steps[trace.name_id[rows]]]
    if rows.shape[0] == 0:
        return []
    start = trace.ts_ns[rows]
    nesting = nest(start, start + trace.dur_ns[rows], trace.lane[rows].astype(np.int64))
    top = rows[nesting.parent < 0]
    top = top[np.argsort(trace.ts_ns[top], kind="stable")]
    return list(dict.fromkeys(trace.strings[i] for i in trace.name_id[top].tolist()))
