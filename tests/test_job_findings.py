"""``attn-tui findings`` on a job: the straggler findings first, then each rank's own,
found as if the rank's trace were opened alone but with the job's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.findings import trace_findings
from profiling.analysis.job_findings import findings_of, job_findings
from profiling.analysis.job_merge import load_job
from profiling.trace import load_trace
from tests.job_fixtures import Gpu, Step, rank_doc, straggler_job, write
from tui.cli import main

REAL = Path(__file__).resolve().parents[2] / "shared" / "real_traces"
DLRM = REAL / "multi_rank" / "param_dlrm_8ranks"
FINDING_KEYS = {"id", "title", "severity", "region", "instances", "of_instances", "detail",
                "suggestion", "evidence"}
"""A single trace's finding in ``findings --json``; a job's adds ``rank``."""
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"


def _load(path: str):
    return load_trace(path, use_cache=False)


def _copying_job(folder: Path, copier: int = 1, ranks: int = 3) -> list[str]:
    """Rank ``copier`` also copies inside every ``attn_fwd`` (a finding of its own) and so
    is the slowest in every instance (a straggler finding)."""
    paths = []
    for r in range(ranks):
        steps = []
        for s in range(3):
            t0 = 1000 + s * 2000
            gpu = [Gpu("attn_kernel", t0 + 10, 300)]
            if r == copier:
                gpu.append(Gpu("attn Memcpy DtoD (Device -> Device)", t0 + 320, 50,
                               cat="gpu_memcpy"))
            gpu.append(Gpu(NCCL, t0 + 400, 100, stream=20))
            steps.append(Step(t0, t0 + 1800, gpu, region=("attn_fwd", t0 + 1, t0 + 5)))
        paths.append(write(folder / f"job.rank{r}.json", rank_doc(r, ranks, steps)))
    return paths


def _same_as_alone(found, job, paths: list[str]) -> None:
    """Every rank's findings are its trace's own, evidence rows shifted to the job's."""
    for k, (r, path) in enumerate(zip(job.ranks, paths, strict=True)):
        alone = trace_findings(AnalysedTrace(_load(path))).findings
        mine = [f for f, rank in zip(found.findings, found.ranks, strict=True) if rank == r.rank]
        assert [(f.id, f.title, f.region, f.instances) for f in mine] == \
            [(f.id, f.title, f.region, f.instances) for f in alone], f"rank {k}"
        assert [[e.row for e in f.evidence] for f in mine] == \
            [[e.row + r.rows[0] for e in f.evidence] for f in alone]
        for f in mine:
            for e in f.evidence:
                assert job.trace.name(e.row) == e.name


def test_job_findings_lead_with_stragglers_then_each_rank(tmp_path: Path) -> None:
    paths = _copying_job(tmp_path)
    job = load_job(paths, _load)
    found = job_findings(job)
    assert found.ranks == (None, 1)
    assert [f.id for f in found.findings] == ["straggler-rank", "memcpy-in-region"]
    assert found.findings[0].title == "rank 1 is the slowest in 3 of 3 attn_fwd instances"
    assert found.notes[-3:] == ("rank 0: nothing to point out", "rank 1: 1 medium",
                                "rank 2: nothing to point out")
    _same_as_alone(found, job, paths)
    labelled = findings_of(AnalysedTrace(job.trace))
    assert [f.title.split(" · ")[0] for f in labelled.findings][1:] == ["rank 1"]
    assert labelled.findings[0].id == "straggler-rank"


def test_findings_command_on_a_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _copying_job(tmp_path)
    assert main(["findings", str(tmp_path), "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    alone = trace_findings(AnalysedTrace(_load(paths[0]))).as_json()
    assert set(alone) <= set(doc) and doc["job"]["ranks"] == [0, 1, 2]
    assert [(f["id"], f["rank"]) for f in doc["findings"]] == [("straggler-rank", None),
                                                               ("memcpy-in-region", 1)]
    assert set(doc["findings"][1]) == FINDING_KEYS | {"rank"}
    assert main(["findings", *paths, "--markdown", "--no-cache"]) == 0  # the files, too
    md = capsys.readouterr().out
    assert md.startswith(f"## Findings: `{tmp_path}`")
    assert "3 ranks of 3" in md and "rank 1 · 1 Memcpy per instance" in md
    assert md.index("straggler-rank") < md.index("memcpy-in-region")
    assert main(["findings", str(tmp_path), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "rank 1: 1 medium" in text and "rank 1 · 1 Memcpy" in text


def test_findings_refuses_traces_that_are_not_one_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = [Step(0, 100, [Gpu("k", 10, 5)])]
    for v in ("ring", "sdpa_cp"):
        for r in (0, 1):
            write(tmp_path / f"{v}.rank{r}.json", rank_doc(r, 2, step))
    assert main(["findings", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not the ranks of one job" in err and "'ranks'" in err and len(err.splitlines()) == 1
    plain = tmp_path / "plain"
    plain.mkdir()
    for v in ("a", "b"):
        write(plain / f"{v}.json", rank_doc(None, None, step))
    assert main(["findings", str(plain / "a.json"), str(plain / "b.json")]) == 2
    assert "holds 2 traces" in capsys.readouterr().err


def test_straggler_job_ranks_have_no_findings_of_their_own(tmp_path: Path) -> None:
    job = load_job(straggler_job(tmp_path, slow=2), _load)
    found = job_findings(job)
    assert set(found.ranks) == {None}
    assert {f.title for f in found.findings} == {"rank 2 is the slowest in 3 of 3 steps",
                                                 "rank 2 is the slowest in 3 of 3 attn_fwd "
                                                 "instances"}


@pytest.mark.skipif(not DLRM.is_dir(), reason="real traces not present")
def test_real_dlrm_job_findings(capsys: pytest.CaptureFixture[str]) -> None:
    paths = sorted(str(p) for p in DLRM.glob("*.json"))
    job = load_job(paths, _load)
    found = job_findings(job)
    assert found.regions == ("ProfilerStep*",)
    assert [r for r in found.ranks if r is not None] == sorted(
        r for r in found.ranks if r is not None)
    assert set(found.ranks) >= set(range(8))
    _same_as_alone(found, job, paths)
    assert main(["findings", str(DLRM), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["job"]["ranks"] == list(range(8))
    assert [f["rank"] for f in doc["findings"]] == list(found.ranks)
