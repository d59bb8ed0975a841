"""``attn-tui capture --nproc 2`` on the CPU (gloo), as CI runs it.

Real jobs through ``torch.distributed.run``: the traces are read back with the
project's own loader, which must find each rank's ``distributedInfo`` and its
collectives (gloo ops are CPU ops); the ring variant's shards are checked against
the single-device result inside each rank, and the manifest must say so.  The
failure path is driven by ``ATTN_TUI_CAPTURE_FAIL_RANK`` (inherited by the ranks).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

from profiling.capture.outputs import read_json  # noqa: E402
from profiling.trace import Kind, load_trace  # noqa: E402
from tui.cli import main  # noqa: E402

TINY = ["--batch", "1", "--heads", "2", "--seq", "64", "--head-dim", "32"]
REPO = Path(__file__).resolve().parents[1]


def job(out: Path, *extra: str) -> int:
    return main(["capture", "--nproc", "2", "--device", "cpu", "--out", str(out), *TINY, *extra])


def leftovers(folder: Path) -> list[str]:
    """Staging folders and temp files a job must never leave behind."""
    return [p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cpu_job")
    here = Path.cwd()
    os.chdir(out.parent)  # a relative --out: the ranks must write where the user meant
    try:
        assert job(Path(out.name), "--variant", "sdpa_math", "--variant", "ring") == 0
    finally:
        os.chdir(here)
    return out


def test_manifest_describes_the_job(captured: Path) -> None:
    manifest = read_json(captured / "manifest.json")
    assert manifest["job"]["world_size"] == 2 and manifest["job"]["backend"] == "gloo"
    assert manifest["job"]["launcher"].startswith("torch.distributed.run")
    assert manifest["comparable"]["world_size"] == 2
    for name in ("sdpa_math", "ring"):
        entry = manifest["variants"][name]
        assert entry["status"] == "ok", entry["reason"]
        assert entry["failed_rank"] is None
        assert [(r["rank"], r["status"]) for r in entry["ranks"]] == [(0, "ok"), (1, "ok")]
        assert entry["traces"] == [f"{name}.rank0.json", f"{name}.rank1.json"]
        assert entry["ms_per_forward"] == max(r["ms_per_forward"] for r in entry["ranks"])
        for k in (0, 1):
            assert (captured / f"{name}.rank{k}.json").is_file()
            assert (captured / f"{name}.rank{k}.key_averages.json").is_file()
    assert leftovers(captured) == []


def names_of(trace, kinds: tuple[Kind, ...]) -> list[str]:  # type: ignore[no-untyped-def]
    rows = [i for i in range(len(trace.kind)) if int(trace.kind[i]) in {int(k) for k in kinds}]
    return [trace.name(i) for i in rows]


@pytest.mark.parametrize("name", ["sdpa_math", "ring"])
def test_loader_reads_both_ranks_and_their_collectives(captured: Path, name: str) -> None:
    for rank in (0, 1):
        trace = load_trace(captured / f"{name}.rank{rank}.json", use_cache=False, workers=1)
        info = trace.metadata["distributedInfo"]  # filled by torch's profiler itself
        assert (info["rank"], info["world_size"], info["backend"]) == (rank, 2, "gloo")
        assert trace.metadata["attn_tui"]["job"]["rank"] == rank
        ops = names_of(trace, (Kind.CPU_OP, Kind.USER_ANNOTATION))
        # the step-end all_reduce: one per active step, as c10d op and gloo's own range
        assert ops.count("c10d::allreduce_") == 3, sorted(set(ops))
        assert ops.count("gloo:all_reduce") == 3
        assert ops.count("step_sync") == 3 and ops.count("attn_fwd") == 3
        if name == "ring":  # k/v travel round the ring once per forward (2 ranks)
            assert ops.count("gloo:send") == 3 and ops.count("gloo:recv") == 3


@pytest.mark.parametrize("name", ["sdpa_math", "ring"])
def test_op_table_of_each_rank_equals_torchs_key_averages(
        captured: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """gloo's ranges (gloo:send, gloo:all_reduce) are async in torch: the table must agree."""
    from tests.test_key_averages_oracles import compare

    for rank in (0, 1):
        stem = captured / f"{name}.rank{rank}"
        assert main(["table", f"{stem}.json", "--json", "--no-cache"]) == 0
        rows = json.loads(capsys.readouterr().out)
        problems, _, n = compare(rows, read_json(Path(f"{stem}.key_averages.json")))
        assert not problems, problems[:10]
        assert n > 0


def test_ring_is_sequence_sharded_and_matches_single_device(captured: Path) -> None:
    entry = read_json(captured / "manifest.json")["variants"]["ring"]
    assert entry["notes"]["mode"] == "context_parallel"
    atol = entry["tolerance"]["atol"]
    for rank in (0, 1):
        meta = read_json(captured / f"ring.rank{rank}.json")["attn_tui"]
        assert meta["notes"]["shard"] == [32 * rank, 32 * (rank + 1)]  # S/N = 64/2
        assert entry["ranks"][rank]["max_abs_error"] <= atol


def test_existing_rank_files_need_force(captured: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert job(captured, "--variant", "sdpa_math") == 2
    assert "would overwrite" in capsys.readouterr().err


def test_ring_without_nproc_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["capture", "--device", "cpu", "--variant", "ring", "--out", str(tmp_path)])
    assert code == 2 and "--nproc" in capsys.readouterr().err
    assert not (tmp_path / "manifest.json").exists()


@pytest.mark.parametrize("how, reason", [
    ("raise", "rank 1: RuntimeError: injected failure on rank 1"),
    ("exit", "rank 1: ended without a result (exit code 3)"),
])
def test_a_failing_rank_ends_the_job_with_its_rank_and_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, reason: str) -> None:
    monkeypatch.setenv("ATTN_TUI_CAPTURE_FAIL_RANK", "1")
    monkeypatch.setenv("ATTN_TUI_CAPTURE_FAIL", how)
    assert job(tmp_path, "--variant", "sdpa_math") == 1
    entry = read_json(tmp_path / "manifest.json")["variants"]["sdpa_math"]
    assert entry["status"] == "failed" and entry["failed_rank"] == 1
    assert entry["reason"].startswith(reason), entry["reason"]
    assert entry["ranks"][1]["status"] == "failed"
    assert entry["ranks"][0]["status"] == "stopped"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]  # no partial trace


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _as_in_a_terminal() -> None:
    """Ctrl+C reaches the capture as it does in a terminal: a test run started in the
    background by a script inherits SIGINT ignored, and the capture (rightly) kept it
    so and ran its job to the end (a CI-like run here waited 600 s)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_every_rank(tmp_path: Path, sig: signal.Signals) -> None:
    env = {**os.environ, "ATTN_TUI_CAPTURE_FAIL_RANK": "1", "ATTN_TUI_CAPTURE_FAIL": "hang"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "capture", "--nproc", "2", "--device", "cpu",
         "--variant", "sdpa_math", "--out", str(tmp_path), *TINY],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=_as_in_a_terminal)
    pids: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(pids) < 2:  # both ranks up, rank 1 hanging
        for status in tmp_path.glob(".attn-tui-job-*/rank*.status.json"):
            data = read_json_quietly(status)
            if data.get("phase") in ("prepare", "warm-up", "check", "time", "profile", "write"):
                pids.add(int(data["pid"]))
        time.sleep(0.2)
    assert len(pids) == 2, "the ranks did not start"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not [pid for pid in pids if _alive(pid)]
    manifest = read_json(tmp_path / "manifest.json")
    assert manifest["complete"] is False
    assert manifest["variants"]["sdpa_math"]["status"] == "interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def read_json_quietly(path: Path) -> dict:
    try:
        return read_json(path)
    except (OSError, ValueError):
        return {}


def test_more_ranks_than_gpus_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from profiling.capture.config import make_config
    from profiling.capture.job import check_nproc
    from profiling.errors import CaptureError

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    config = make_config("cuda")
    check_nproc(config, 1)
    with pytest.raises(CaptureError, match="needs 2 GPUs, torch sees 1"):
        check_nproc(config, 2)
    check_nproc(make_config("cpu"), 4)  # gloo: any number of ranks on the CPU


def test_a_job_folder_lists_its_traces_in_manifest_order(captured: Path) -> None:
    from tui.inputs import folder_traces

    assert [Path(p).name for p in folder_traces(str(captured))] == [
        "sdpa_math.rank0.json", "sdpa_math.rank1.json", "ring.rank0.json", "ring.rank1.json"]


def test_variants_lists_the_job_variants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["variants"]) == 0
    out = capsys.readouterr().out
    assert "ring" in out and "--nproc" in out and "sdpa_cp" in out


def test_a_full_disk_is_one_line_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    from profiling.capture import job as job_module

    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(job_module, "write_json", full)
    assert job(tmp_path, "--variant", "naive") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0], err
    assert list(tmp_path.iterdir()) == []  # no staging folder left behind
