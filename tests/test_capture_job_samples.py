"""The committed two-GPU job samples (``sample_traces/nproc2``) say what issue 15 promises.

``attn-tui capture --nproc 2 --all --device cuda --gzip`` on two H200s: every rank
trace carries ``distributedInfo`` (NCCL, world size 2), holds NCCL kernels, is
small, and its op table equals torch's own ``key_averages`` of that rank (NCCL's
``nccl:*`` ranges are async events there).  No torch needed; skipped when the
folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling.capture.outputs import read_json
from profiling.trace import Kind, load_trace
from tui.cli import main

JOB = Path(__file__).resolve().parents[1] / "sample_traces" / "nproc2"
pytestmark = pytest.mark.skipif(not (JOB / "manifest.json").exists(),
                                reason="no sample_traces/nproc2/manifest.json")


def manifest() -> dict:
    return read_json(JOB / "manifest.json")


def rank_traces() -> list[tuple[str, int, Path]]:
    if not (JOB / "manifest.json").exists():
        return []
    return [(name, k, JOB / t) for name, entry in manifest()["variants"].items()
            for k, t in enumerate(entry.get("traces") or [])]


def test_a_two_rank_nccl_job_with_the_context_parallel_variants_ok() -> None:
    m = manifest()
    assert m["device"] == "cuda" and m["job"]["world_size"] == 2 and m["job"]["backend"] == "nccl"
    assert m["variants"]["ring"]["status"] == "ok"
    for entry in m["variants"].values():
        if entry["status"] == "ok":
            assert [r["status"] for r in entry["ranks"]] == ["ok", "ok"]


def test_every_file_is_small() -> None:
    for path in JOB.iterdir():
        assert path.stat().st_size < 2 * 1024 * 1024, path.name


@pytest.mark.parametrize("name, rank, path", rank_traces(),
                         ids=[f"{n}.rank{k}" for n, k, _ in rank_traces()])
def test_rank_trace_is_one_rank_of_the_job(name: str, rank: int, path: Path) -> None:
    trace = load_trace(path, use_cache=False, workers=1)
    info = trace.metadata["distributedInfo"]
    assert (info["rank"], info["world_size"], info["backend"]) == (rank, 2, "nccl")
    kernels = {trace.name(int(i)) for i in (trace.kind == int(Kind.KERNEL)).nonzero()[0]}
    assert any("nccl" in k.lower() for k in kernels), name  # the step-end all_reduce at least


@pytest.mark.parametrize("name, rank, path", rank_traces(),
                         ids=[f"{n}.rank{k}" for n, k, _ in rank_traces()])
def test_op_table_equals_torchs_key_averages(name: str, rank: int, path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_key_averages_oracles import compare

    assert main(["table", str(path), "--json", "--no-cache"]) == 0
    rows = json.loads(capsys.readouterr().out)
    oracle = read_json(JOB / f"{name}.rank{rank}.key_averages.json")
    problems, _, n = compare(rows, oracle)
    assert not problems, problems[:10]
    assert n == len(oracle) > 0
