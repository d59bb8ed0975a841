"""``--align step`` aligns the ranks on one step number, not on whatever step each
rank recorded first.

Found on a synthetic 4-rank job where rank 2's trace starts at ProfilerStep#6 (its
#5 not recorded) while the others start at #5: each rank's first step was aligned
with the others', so rank 2 sat one step (2 ms) early and every collective's wait
was a step long.  The ranks are now aligned on the first step number all of them
recorded, and the header names it.
"""

from __future__ import annotations

from pathlib import Path

from profiling.analysis.job import aligning_steps
from profiling.analysis.job_align import realign
from profiling.analysis.job_merge import load_job
from profiling.trace import load_trace
from tests.job_fixtures import Gpu, Step, rank_doc, write


def _job(tmp_path: Path) -> list[str]:
    paths = []
    for r in range(3):
        steps = [Step(t + 7 * r, t + 7 * r + 1500, [Gpu("gemm", t + 7 * r + 20, 100)])
                 for t in (1000, 3000, 5000)]
        first = 5
        if r == 2:  # its first step was not recorded
            steps, first = steps[1:], 6
        paths.append(write(tmp_path / f"r{r}.json",
                           rank_doc(r, 3, steps, base_ns=10_000 * r, first_step=first)))
    return paths


def _load(path: str):
    return load_trace(path, min_cache_bytes=1 << 40)


def test_ranks_align_on_the_first_common_step(tmp_path: Path) -> None:
    job = load_job(_job(tmp_path), _load, "step")
    # ProfilerStep#6 of each rank starts at rank 0's: 3000 µs on its clock
    assert [r.offset_ns for r in job.ranks] == [0, -7_000, -14_000]
    assert "ProfilerStep#6 of each rank" in job.header()
    again = realign(realign(job, "clock"), "step")
    assert [r.offset_ns for r in again.ranks] == [0, -7_000, -14_000]


def test_aligning_steps_rule() -> None:
    assert aligning_steps([{5: 10, 6: 20}, {5: 11, 6: 21}, {}]) == (
        [10, 11, None], "first ProfilerStep")
    assert aligning_steps([{5: 10, 6: 20}, {6: 25, 7: 40}]) == ([20, 25], "ProfilerStep#6")
    assert aligning_steps([{1: 10}, {9: 50}]) == ([10, 50], "first ProfilerStep")  # none shared
