"""A merged job re-aligned in memory equals the job merged that way from its files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.job import step_starts
from profiling.analysis.job_align import realign
from profiling.analysis.job_merge import JOB_KEY, job_of_trace, load_job
from profiling.errors import AttnTuiError
from profiling.trace import load_trace
from tests.job_fixtures import Gpu, Step, rank_doc, write

REAL = Path(__file__).resolve().parents[2] / "shared" / "real_traces"
DLRM = REAL / "multi_rank" / "param_dlrm_8ranks"


def _load(path: str):
    return load_trace(path, use_cache=False)


def _ranks(tmp_path: Path) -> list[str]:
    """Rank 1's clock base 5 ms later, its first step 40 µs later; rank 2 has no step."""
    s0 = [Step(100, 300, [Gpu("k0", 150, 50)]), Step(300, 500, [Gpu("k1", 350, 50)])]
    s1 = [Step(140, 340, [Gpu("k0", 190, 50)]), Step(340, 540, [Gpu("k1", 390, 50)])]
    r2 = rank_doc(2, 3, [Step(100, 300, [Gpu("k0", 150, 50)])], base_ns=1_002_000_000)
    r2["traceEvents"] = [e for e in r2["traceEvents"] if not e["name"].startswith("Profiler")]
    return [write(tmp_path / "r0.json", rank_doc(0, 3, s0, base_ns=1_000_000_000)),
            write(tmp_path / "r1.json", rank_doc(1, 3, s1, base_ns=1_005_000_000)),
            write(tmp_path / "r2.json", r2)]


def _same(a, b) -> None:
    assert np.array_equal(a.trace.ts_ns, b.trace.ts_ns)
    assert [r.offset_ns for r in a.ranks] == [r.offset_ns for r in b.ranks]
    assert (a.alignment, a.header()) == (b.alignment, b.header())
    assert a.trace.metadata[JOB_KEY] == b.trace.metadata[JOB_KEY]
    assert job_of_trace(a.trace) is a


@pytest.mark.parametrize(("start", "to"), [("clock", "step"), ("step", "clock")])
def test_realign_equals_merging_that_way(tmp_path: Path, start: str, to: str) -> None:
    paths = _ranks(tmp_path)
    job = load_job(paths, _load, start)
    before = job.trace.ts_ns.copy()
    moved = realign(job, to)
    _same(moved, load_job(paths, _load, to))
    assert np.array_equal(job.trace.ts_ns, before)  # the old trace is left as it was
    assert moved.trace.name_id is job.trace.name_id  # the other columns are shared
    _same(realign(moved, start), job)
    assert realign(job, start) is job


def test_first_steps_are_on_each_rank_clock(tmp_path: Path) -> None:
    job = load_job(_ranks(tmp_path), _load, "step")
    firsts = [step_starts(job.trace, r.rows, r.offset_ns) for r in job.ranks]
    assert [min(s.values()) if s else None for s in firsts] == [100_000, 140_000, None]
    with pytest.raises(AttnTuiError):
        realign(job, "wall")


@pytest.mark.skipif(not DLRM.is_dir(), reason="real traces not present")
def test_real_dlrm_job_realigned() -> None:
    paths = sorted(str(p) for p in DLRM.glob("*.json"))
    _same(realign(load_job(paths, _load, "clock"), "step"), load_job(paths, _load, "step"))
