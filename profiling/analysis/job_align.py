"""A merged job placed again on one time axis, by another alignment, without reading
its ranks again.

Each rank is one contiguous slice of the merged trace's rows and only ``ts_ns``
depends on the alignment (``job_merge``), so re-aligning is a copy of that one
column with each rank's slice shifted by its new offset minus its old one.  The
other columns, the lanes and the groups are shared with the old trace, which
stays valid for whoever still holds it; the analysis (links, regions) is the new
trace's own, since region and collective times move with their ranks.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from profiling.analysis.job import (
    ALIGNMENTS,
    aligning_steps,
    base_ns,
    lost_bases,
    offsets_of,
    step_starts,
)
from profiling.analysis.job_merge import JOB_ATTR, JOB_KEY, Job
from profiling.errors import AttnTuiError


def first_events(job: Job) -> list[int | None]:
    """Each rank's first event on its own clock (its merged rows less its offset)."""
    ts = job.trace.ts_ns
    return [int(ts[lo:hi].min()) - r.offset_ns if hi > lo else None
            for r in job.ranks for lo, hi in [r.rows]]


def realign(job: Job, alignment: str) -> Job:
    """``job`` on the time axis of ``alignment`` (``clock`` or ``step``): a new merged
    trace and job; the same job back when nothing would move."""
    if alignment not in ALIGNMENTS:
        raise AttnTuiError(f"unknown alignment {alignment!r}", "align",
                           "use " + " or ".join(ALIGNMENTS))
    bases = [base_ns(r.metadata) for r in job.ranks]
    firsts = first_events(job)
    need_steps = alignment != "clock" or bool(lost_bases(bases, firsts))
    steps, label = aligning_steps([step_starts(job.trace, r.rows, r.offset_ns)
                                   for r in job.ranks]) if need_steps else ([], "")
    offsets, note = offsets_of(bases, steps, alignment, firsts, label)
    if alignment == job.alignment and note == job.alignment_note:
        return job
    old = job.trace
    ts = old.ts_ns.copy()
    for r, off in zip(job.ranks, offsets, strict=True):
        if off != r.offset_ns:
            ts[r.rows[0]:r.rows[1]] += np.int64(off - r.offset_ns)
    metadata = dict(old.metadata)
    metadata[JOB_KEY] = {**metadata.get(JOB_KEY, {}), "alignment": alignment,
                         "offsets_ns": [int(o) for o in offsets]}
    trace = replace(old, ts_ns=ts, metadata=metadata, warnings=list(old.warnings))
    ranks = [replace(r, offset_ns=int(off)) for r, off in zip(job.ranks, offsets, strict=True)]
    new = Job(trace, ranks, alignment, note, job.world_size, job.backend)
    object.__setattr__(trace, JOB_ATTR, new)  # job_of_trace, as merge_ranks does
    return new
