"""``capture --nproc 2`` on two GPUs: NCCL, one trace per rank, the ring checked.

Marked ``cuda`` and skipped without two GPUs; they run on the lent GPU machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                       reason="needs two CUDA GPUs"),
]

from profiling.capture.outputs import read_json  # noqa: E402
from profiling.trace import Kind, load_trace  # noqa: E402
from tui.cli import main  # noqa: E402

SMALL = ["--batch", "2", "--heads", "4", "--seq", "512", "--head-dim", "64", "--dtype", "bf16"]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cuda_job")
    assert main(["capture", "--nproc", "2", "--device", "cuda", "--variant", "sdpa_flash",
                 "--variant", "ring", "--variant", "sdpa_cp", "--out", str(out), *SMALL]) == 0
    return out


def test_torch_context_parallel_ran_or_said_why_not(captured: Path) -> None:
    entry = read_json(captured / "manifest.json")["variants"]["sdpa_cp"]
    if entry["status"] == "skipped":  # a torch without context_parallel: said, not failed
        assert "context_parallel" in entry["reason"]
    else:
        assert entry["status"] == "ok" and entry["notes"]["local_seq"] == 256  # S/N = 512/2


def test_nccl_job_both_ranks_ok(captured: Path) -> None:
    manifest = read_json(captured / "manifest.json")
    assert manifest["job"]["backend"] == "nccl" and manifest["job"]["world_size"] == 2
    for name in ("sdpa_flash", "ring"):
        entry = manifest["variants"][name]
        assert entry["status"] == "ok", entry["reason"]
        assert [r["status"] for r in entry["ranks"]] == ["ok", "ok"]


@pytest.mark.parametrize("name", ["sdpa_flash", "ring"])
def test_rank_traces_hold_nccl_kernels_and_distributed_info(captured: Path, name: str) -> None:
    for rank in (0, 1):
        trace = load_trace(captured / f"{name}.rank{rank}.json", use_cache=False, workers=1)
        info = trace.metadata["distributedInfo"]
        assert (info["rank"], info["world_size"], info["backend"]) == (rank, 2, "nccl")
        kernels = {trace.name(int(i)) for i in (trace.kind == int(Kind.KERNEL)).nonzero()[0]}
        assert any("nccl" in k.lower() for k in kernels), sorted(kernels)[:10]
