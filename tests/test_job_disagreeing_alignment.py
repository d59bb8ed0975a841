"""An alignment that contradicts the collectives: a rank's waits stay within its own
kernels, and the report says so in one line.

Aligning on step starts puts ranks whose steps began apart out of step with their
collectives: a rank's all-reduce can then end before another rank starts it,
which no real run does.  Its wait was the last arrival minus its own start, so
the DLRM job's ranks waited 39-51 ms in 11-13 ms of GPU time, and a step's median
"busy" time fell to 0 (shown as an excess of "+0%").
"""

from __future__ import annotations

from pathlib import Path

from profiling.analysis.collectives import disagreement
from profiling.analysis.job_merge import load_job
from profiling.analysis.job_report import job_report
from profiling.analysis.stragglers import Straggle
from profiling.trace import load_trace
from tests.job_fixtures import Gpu, Step, rank_doc, write
from tui.fmt import fmt_time
from tui.ranks_data import excess_cell

ALL_REDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"


def _late_steps_job(folder: Path) -> list[str]:
    """Two ranks on one clock, whose all-reduces run together (100 µs each), but rank
    1's steps start 1000 µs after rank 0's (a slow data loader before the work)."""
    paths = []
    for rank in (0, 1):
        late = 1000 * rank
        steps = [Step(1000 + s * 5000 + late, 1000 + s * 5000 + 4000, [
            Gpu("attn_kernel", 2000 + s * 5000, 300),
            Gpu(ALL_REDUCE, 3000 + s * 5000 + 10 * rank, 100, stream=20)]) for s in range(3)]
        paths.append(write(folder / f"job.rank{rank}.json", rank_doc(rank, 2, steps)))
    return paths


def _load(path: str):
    return load_trace(path, use_cache=False)


def test_on_the_clock_the_collectives_agree(tmp_path: Path) -> None:
    report = job_report(load_job(_late_steps_job(tmp_path), _load, "clock"))
    assert disagreement(report.collectives) == (0, 0)
    assert report.alignment_warning(fmt_time) == ""
    assert [c.wait_ns for c in report.collectives] == [(10_000, 0)] * 3  # rank 0 came first


def test_on_step_starts_they_disagree_and_waits_stay_within_the_kernels(tmp_path: Path) -> None:
    report = job_report(load_job(_late_steps_job(tmp_path), _load, "step"))
    # rank 1 moved 1000 µs earlier: its all-reduces end 890 µs before rank 0 starts them
    assert disagreement(report.collectives) == (3, 890_000)
    assert [c.wait_ns for c in report.collectives] == [(0, 100_000)] * 3  # its kernel's length
    for row in report.ranks:
        assert row["collective_wait_us"] <= row["comm_us"]
    warning = report.alignment_warning(fmt_time)
    assert warning.startswith("3 of 3 collectives end on one rank before another starts them")
    assert "890 µs" in warning and "try aligning on clock" in warning


def test_an_excess_over_a_median_of_zero_has_no_share() -> None:
    zero = Straggle("step", "ProfilerStep*", "ProfilerStep#1", "busy", (0, 0, 19_100_000),
                    (1, 2, 3), 2, 0.0)
    assert excess_cell(zero) == "19.1 ms"
    some = Straggle("step", "ProfilerStep*", "ProfilerStep#1", "busy", (10, 10, 15),
                    (1, 2, 3), 2, 10.0)
    assert excess_cell(some) == f"{fmt_time(5.0)} (+50%)"
