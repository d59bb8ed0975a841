"""The ring variant's arithmetic without processes: blocks merged by log-sum-exp.

``ring_attention`` gives rank r the blocks of ranks ``r, r-1, ..., 0`` (its own
causal, earlier ones whole, later ones skipped).  Doing the same here block by
block for every rank of a 4-rank job must give the single-device causal result;
the job-result rules (which rank is the cause) are checked on made-up status
files, with no job started.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from profiling.capture.job_results import combine  # noqa: E402
from profiling.capture.ring import merge, sdpa_op, shard  # noqa: E402
from profiling.capture.variants import reference_attention  # noqa: E402


@pytest.mark.parametrize("world", [2, 4])
def test_merged_blocks_equal_single_device_causal_attention(world: int) -> None:
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 64, 16, generator=gen) for _ in range(3))
    reference = reference_attention(q, k, v)
    _, block = sdpa_op("cpu", q.dtype)
    pieces = []
    for rank in range(world):
        out = lse = None
        for step in range(world):  # the order the ring delivers the blocks in
            source = (rank - step) % world
            if source <= rank:
                b_out, b_lse = block(shard(q, rank, world), shard(k, source, world),
                                     shard(v, source, world), source == rank)
                out, lse = merge(out, lse, b_out, b_lse)
        pieces.append(out)
    assert torch.allclose(torch.cat(pieces, dim=2), reference, atol=1e-5, rtol=1e-5)


def test_a_wrong_merge_would_be_caught() -> None:
    """Dropping an earlier rank's block changes the answer (the test above can fail)."""
    gen = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 32, 8, generator=gen) for _ in range(3))
    _, block = sdpa_op("cpu", q.dtype)
    own, _ = block(shard(q, 1, 2), shard(k, 1, 2), shard(v, 1, 2), True)
    assert not torch.allclose(own, reference_attention(q, k, v)[:, :, 16:], atol=1e-3)


def write_status(folder: Path, rank: int, result: dict | None, ended_at: float = 0.0) -> None:
    data = {"rank": rank, "pid": 1, "phase": "done", "result": result, "ended_at": ended_at}
    (folder / f"rank{rank}.status.json").write_text(json.dumps(data))


def ok(ms: float) -> dict:
    return {"status": "ok", "reason": None, "ms_per_forward": ms, "tflops": 1.0,
            "max_abs_error": 0.0, "kernels_per_forward": 1.0, "notes": {}}


def test_the_first_rank_to_fail_is_the_cause(tmp_path: Path) -> None:
    write_status(tmp_path, 0, {"status": "failed", "reason": "Connection closed by peer"}, 2.0)
    write_status(tmp_path, 1, {"status": "failed", "reason": "OOM"}, 1.0)
    write_status(tmp_path, 2, ok(1.0))
    result, extras = combine("ring", tmp_path, 3, 1, gz=False)
    assert (result.status, result.reason, extras["failed_rank"]) == ("failed", "rank 1: OOM", 1)
    assert [r["status"] for r in extras["ranks"]] == ["stopped", "failed", "stopped"]
    assert extras["ranks"][2]["trace"] is None  # its files were discarded


def test_a_rank_that_died_silently_is_the_cause(tmp_path: Path) -> None:
    write_status(tmp_path, 0, {"status": "failed", "reason": "Connection reset by peer"}, 1.0)
    write_status(tmp_path, 1, None)
    (tmp_path / "agent.log").write_text(
        "Failures:\n[1]:\n  rank      : 1 (local_rank: 1)\n  exitcode  : -9 (pid: 7)\n"
        "Root Cause (first observed failure):\n[0]:\n  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : 1 (pid: 6)\n")
    result, extras = combine("ring", tmp_path, 2, 1, gz=False)
    assert extras["failed_rank"] == 1
    assert result.reason == "rank 1: ended without a result (killed by SIGKILL)"


def test_job_figures_are_the_slowest_ranks(tmp_path: Path) -> None:
    write_status(tmp_path, 0, ok(2.0))
    write_status(tmp_path, 1, ok(3.0))
    result, extras = combine("naive", tmp_path, 2, 0, gz=True)
    assert result.status == "ok" and result.ms_per_forward == 3.0
    assert result.notes["slowest_rank"] == 1
    assert extras["traces"] == ["naive.rank0.json.gz", "naive.rank1.json.gz"]
    # every rank's FLOPs (1 TFLOP/s for 2 ms and for 3 ms) over the slowest rank's 3 ms
    assert result.tflops == pytest.approx((2.0 + 3.0) / 3.0)
