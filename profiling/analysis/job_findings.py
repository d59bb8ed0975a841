"""A job's findings: its straggler findings, then each rank's own, labelled by rank.

The single-trace rules (``findings.RULES``) compare a region's instances with
each other; run over a merged job they would compare rank 0's ``attn_fwd`` with
rank 5's and call a slow rank an "odd instance".  So each rank's instances are
examined on their own, as if its trace had been opened alone, but over the
merged trace's one ``AnalysedTrace``: the evidence rows are the job's rows (the
ones ``attn-tui open DIR`` jumps to), times count from the job's first event,
and an instance is numbered within its rank (``attn_fwd #2`` of rank 3), as the
straggler items number them.  Job-wide findings (``straggler-rank``) come first
with no rank; then rank by rank, each rank's by severity.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.finding_types import SEVERITIES, Finding, TraceFindings
from profiling.analysis.findings import RULES, region_context
from profiling.analysis.job_merge import Job
from profiling.analysis.regions import STEP_GROUP, RegionInstance


@dataclass(frozen=True)
class JobFindings:
    """The findings of a job; ``ranks[i]`` is the rank of ``findings[i]`` (None: the job's)."""

    path: str
    header: str  # Job.header(): ranks, world size, backend, alignment
    rank_numbers: tuple[int, ...]
    regions: tuple[str, ...]
    findings: tuple[Finding, ...]
    ranks: tuple[int | None, ...]
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The single-trace ``findings --json`` object, plus ``job`` and each finding's
        ``rank`` (null for a finding about the job as a whole)."""
        return {"path": self.path, "job": {"ranks": list(self.rank_numbers),
                                           "header": self.header},
                "regions": list(self.regions),
                "findings": [{**f.as_json(), "rank": r}
                             for f, r in zip(self.findings, self.ranks, strict=True)],
                "notes": list(self.notes)}

    def labelled(self) -> TraceFindings:
        """As one trace's findings, each rank's titled ``rank 3 · ...`` (for the Findings
        view and the text and Markdown forms, which show single-trace findings)."""
        found = tuple(f if r is None else replace(f, title=f"rank {r} · {f.title}")
                      for f, r in zip(self.findings, self.ranks, strict=True))
        return TraceFindings(self.path, self.regions, found, self.notes)


def rank_instances(job: Job, a: AnalysedTrace, region: str) -> list[list[RegionInstance]]:
    """The region's instances per rank position (``Job.ranks`` order), numbered from 0
    within each rank (the analysis's caches are keyed by row, not by number)."""
    lane_pos = np.zeros(len(job.trace.lanes), dtype=np.int64)
    for k, r in enumerate(job.ranks):
        lane_pos[r.lanes[0]:r.lanes[1]] = k
    out: list[list[RegionInstance]] = [[] for _ in job.ranks]
    for inst in a.instances(region):
        out[int(lane_pos[inst.lane])].append(inst)
    return [[replace(inst, index=i) for i, inst in enumerate(insts)] for insts in out]


def _rank_region(a: AnalysedTrace, region: str, instances: list[RegionInstance]) -> list[Finding]:
    """``findings.region_findings`` over one rank's instances of ``region``."""
    if not instances:
        return []
    ctx = region_context(a, region, instances)
    ctx.prepare()
    found = [replace(f, of_instances=len(instances)) for rule in RULES for f in rule(ctx)]
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(found, key=lambda f: order.get(f.severity, len(order)))


def _counts(found: Sequence[Finding]) -> str:
    counts = Counter(f.severity for f in found)
    return ", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s]) or "nothing to point out"


def job_findings(job: Job, analysed: AnalysedTrace | None = None,
                 job_wide: Sequence[Finding] | None = None,
                 regions: Sequence[str] | None = None) -> JobFindings:
    """The job's findings: ``job_wide`` (default: the straggler findings of
    ``job_report``), then every rank's findings over ``regions`` (default: the
    attention regions of any rank, else the profiler steps)."""
    a = analysed or AnalysedTrace(job.trace)
    if job_wide is None:
        from profiling.analysis.job_report import job_report

        job_wide = job_report(job, a).findings if len(job.ranks) > 1 else []
    notes: list[str] = []
    names = list(regions) if regions else list(a.attention_regions)
    if not names:
        steps = [n for n in a.regions.names() if n == STEP_GROUP]
        notes.append("no attention region or attention op in this job"
                     + ("; looked at the profiler steps instead" if steps else ""))
        names = steps
    n = len(job_wide)
    notes.append(f"{n} straggler finding{'s' if n != 1 else ''} across the job's "
                 f"{len(job.ranks)} ranks" if n else
                 f"no rank is consistently the slowest of the {len(job.ranks)}")
    per_rank: list[list[Finding]] = [[] for _ in job.ranks]
    for name in names:
        for k, insts in enumerate(rank_instances(job, a, name)):
            per_rank[k].extend(_rank_region(a, name, insts))
    found: list[Finding] = list(job_wide)
    ranks: list[int | None] = [None] * len(found)
    for r, mine in zip(job.ranks, per_rank, strict=True):
        found += mine
        ranks += [r.rank] * len(mine)
        notes.append(f"rank {r.rank}: {_counts(mine)}")
    return JobFindings(job.trace.path, job.header(), tuple(r.rank for r in job.ranks),
                       tuple(names), tuple(found), tuple(ranks), tuple(notes))


def findings_of(analysed: AnalysedTrace) -> TraceFindings:
    """The Findings view's findings: a job's (labelled by rank), else the trace's."""
    from profiling.analysis.findings import trace_findings
    from profiling.analysis.job_merge import job_of_trace

    job = job_of_trace(analysed.trace)
    if job is None or len(job.ranks) < 2:
        return trace_findings(analysed)
    return job_findings(job, analysed).labelled()
