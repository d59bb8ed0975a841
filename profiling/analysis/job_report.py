"""Everything ``attn-tui ranks`` and the Ranks view say about a job, computed once.

Per rank the breakdown (``rank_breakdown``) plus the rank's total wait in
collectives; across ranks the matched collectives, the straggler items and the
findings.  One function so the command and the view show the same numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.collectives import (
    Collective,
    disagreement,
    job_collectives,
    wait_by_rank,
)
from profiling.analysis.finding_types import Finding
from profiling.analysis.job import Loader, RankInfo, group_paths, load_all, rank_info_of
from profiling.analysis.job_merge import Job, job_path, load_job, merge_ranks
from profiling.analysis.job_split import merged_file_job
from profiling.analysis.rank_breakdown import rank_breakdown
from profiling.analysis.stragglers import MIN_EXCESS, Straggle, straggler_findings, stragglers


@dataclass
class JobReport:
    job: Job
    ranks: list[dict[str, Any]]  # ranks --json
    collectives: list[Collective]
    stragglers: list[Straggle]
    findings: list[Finding]

    def alignment_warning(self, fmt: Callable[[float], str]) -> str:
        """One line when the alignment contradicts the collectives ('' when it does
        not); ``fmt`` writes a time in ns."""
        count, worst = disagreement(self.collectives)
        if not count:
            return ""
        other = "clock" if self.job.alignment == "step" else "step"
        return (f"{count} of {len(self.collectives)} collectives end on one rank before "
                f"another starts them (by up to {fmt(worst)}): the ranks' times disagree "
                f"under this alignment, so each wait is capped at its kernel's length "
                f"(try aligning on {other})")

    def worst_collectives(self, limit: int = 5) -> list[Collective]:
        """The collectives whose arrivals were furthest apart, largest skew first."""
        return sorted(self.collectives, key=lambda c: -c.skew_ns)[:limit]


def job_report(job: Job, analysed: AnalysedTrace | None = None) -> JobReport:
    """The report of ``job`` (``analysed``: the merged trace's shared analysis; for a
    one-trace job, its trace's own, read from that trace's index)."""
    a = analysed or AnalysedTrace(job.rows_of if job.rows_of is not None else job.trace)
    collectives = job_collectives(job)[0]
    ranks = rank_breakdown(job, a)
    items = stragglers(job, a, collectives) if len(job.ranks) > 1 else []
    slow = Counter(s.slowest for s in items if s.excess_share >= MIN_EXCESS)
    for row, wait in zip(ranks, wait_by_rank(job, collectives), strict=True):
        row["collective_wait_us"] = wait / 1000.0
        row["slowest_in"] = slow.get(row["rank"], 0)  # straggler items, by 5 % or more
    return JobReport(job, ranks, collectives, items, straggler_findings(job, items))


def load_ranks(paths: Sequence[str], load: Loader, alignment: str = "clock", *,
               use_index: bool = False) -> Job:
    """``paths`` as a job: the ranks of one job, or one trace on its own (its rank,
    else 0).  Several traces that are not one job are an ``AttnTuiError``
    (``job_merge.load_job``).  ``use_index``: the job's stored merge, else its big
    ranks parsed in processes of their own and the merge stored (``job_open``), as
    ``attn-tui open`` does; off for ``--no-cache``."""
    if len(paths) > 1 and use_index:
        from profiling.analysis.job_open import open_job  # its parse machinery: when asked

        groups = group_paths(paths)  # rank order, as the TUI keys the stored job
        ordered = groups[0] if len(groups) == 1 and len(groups[0]) == len(paths) else paths
        return open_job(ordered, load, alignment, job_path(ordered))
    if len(paths) > 1:
        return load_job(paths, load, alignment)
    (trace,) = load_all(paths, load)
    merged = merged_file_job(trace, paths[0], alignment)  # one file of several ranks
    if merged is not None:
        return merged
    info = rank_info_of(paths[0], trace.metadata) or RankInfo(paths[0], 0, None, "")
    # the file itself names a one-trace job (job_path gives the folder of several)
    return merge_ranks([trace], [info], [0], paths[0], alignment, "one trace")

