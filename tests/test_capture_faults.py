"""Capture under faults, on the CPU at a tiny shape (runs in CI).

- an unwritable ``--out`` (a file, a path under a file, a folder without write
  permission) is one clear line, exit 2, and nothing is written;
- a disk that fills up while a variant's files are written stops the capture
  with one line; no trace, oracle or temp file is left half-written, and the
  manifest says what finished (when it can still be written);
- existing traces and oracles are never replaced without ``--force``;
- Ctrl+C after the first variant leaves no partial trace and a manifest that
  records what finished (exit 130, one line);
- a variant that runs out of memory is skipped with the reason; the others go on.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from profiling import atomic  # noqa: E402
from profiling.capture import variants  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tui.cli import main  # noqa: E402

TINY = ["--device", "cpu", "--batch", "1", "--heads", "2", "--seq", "64", "--head-dim", "32"]


def capture(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["capture", "--out", str(out), *TINY, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.iterdir())}


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def replace_variant(monkeypatch: pytest.MonkeyPatch, name: str, prepare) -> None:  # type: ignore[no-untyped-def]
    spec = variants.VARIANTS[name]
    monkeypatch.setitem(variants.VARIANTS, name,
                        variants.VariantSpec(spec.name, spec.summary, spec.needs_cuda, prepare))


# ---- where the files go ----


def test_out_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    target = tmp_path / "not_a_folder"
    target.write_text("keep me")
    code, _, err = capture(capsys, target, "--variant", "naive")
    assert code == 2 and "not a folder" in one_line(err) and str(target) in err
    assert target.read_text() == "keep me"


def test_out_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = capture(capsys, blocker / "traces", "--variant", "naive")
    assert code == 2 and "cannot write there" in one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def _without_root_powers() -> tuple[str, ...] | None:
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set=-all", "--inh-caps=-all")
    return prefix if subprocess.run([*prefix, "true"]).returncode == 0 else None


def test_out_without_write_permission(tmp_path: Path):
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("root without setpriv: root may write any folder, so there is no "
                    "permission error to provoke")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        result = subprocess.run(
            [*prefix, sys.executable, "-m", "tui.cli", "capture", "--out", str(locked / "t"),
             *TINY, "--variant", "naive"],
            capture_output=True, text=True, cwd=REPO, timeout=300)
    finally:
        locked.chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert "cannot write there" in one_line(result.stderr) and "Permission denied" in result.stderr
    assert list(locked.iterdir()) == []


def test_disk_full_while_writing_stops_with_one_line_and_no_partial_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """The first variant is written; the disk fills while the second's oracle is."""
    real_fsync = atomic.os.fsync
    writes = []

    def fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
        writes.append(name)
        if "inplace" in name:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    code, _, err = capture(capsys, tmp_path, "--variant", "naive", "--variant", "inplace",
                           "--variant", "sdpa_math")
    assert code == 2
    line = one_line(err)
    assert "No space left on device" in line and "manifest.json says what finished" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "manifest.json", "naive.json", "naive.key_averages.json"]
    assert leftovers(tmp_path) == []
    entries = manifest(tmp_path)["variants"]
    assert manifest(tmp_path)["complete"] is False
    assert entries["naive"]["status"] == "ok"
    assert entries["inplace"]["status"] == "interrupted"
    assert "No space left" in entries["inplace"]["reason"]
    assert entries["sdpa_math"]["reason"].startswith("not started")
    assert json.loads((tmp_path / "naive.json").read_text())["traceEvents"]


def test_disk_full_for_the_manifest_too(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch):
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    code, _, err = capture(capsys, tmp_path, "--variant", "naive")
    assert code == 2 and "No space left on device" in one_line(err)
    assert list(tmp_path.iterdir()) == []


# ---- never overwrite without --force ----


@pytest.mark.parametrize("existing", ["naive.json", "naive.json.gz", "naive.key_averages.json"])
def test_existing_files_are_not_overwritten_without_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], existing: str):
    (tmp_path / existing).write_bytes(b"precious, not a real trace")
    (tmp_path / "manifest.json").write_text('{"old": true}')
    before = snapshot(tmp_path)
    for extra in ((), ("--gzip",)):
        code, _, err = capture(capsys, tmp_path, "--variant", "naive", *extra)
        assert code == 2 and "--force" in one_line(err) and existing in err
        assert snapshot(tmp_path) == before


def test_force_replaces_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "naive.json").write_bytes(b"old")
    code, _, _ = capture(capsys, tmp_path, "--variant", "naive", "--force")
    assert code == 0
    assert json.loads((tmp_path / "naive.json").read_text())["attn_tui"]["variant"] == "naive"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("content", [b'{"old": true}', b"[1, 2, 3]", b"not json at all"])
def test_a_foreign_manifest_is_not_replaced_without_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes):
    """A manifest.json attn-tui did not write is someone's file: one line, exit 2, untouched."""
    (tmp_path / "manifest.json").write_bytes(content)
    before = snapshot(tmp_path)
    code, _, err = capture(capsys, tmp_path, "--variant", "inplace")
    assert code == 2 and "manifest.json" in one_line(err) and "--force" in err
    assert snapshot(tmp_path) == before
    code, _, _ = capture(capsys, tmp_path, "--variant", "inplace", "--force")
    assert code == 0 and manifest(tmp_path)["tool"] == "attn-tui capture"
    assert list(manifest(tmp_path)["variants"]) == ["inplace"]


def test_a_foreign_manifest_stops_a_job_capture_before_any_work(tmp_path: Path):
    from profiling.capture.job import prepare_job_out
    from profiling.errors import CaptureError

    (tmp_path / "manifest.json").write_text('{"old": true}')
    with pytest.raises(CaptureError, match="manifest.json"):
        prepare_job_out(tmp_path, ["naive"], force=False)
    prepare_job_out(tmp_path, ["naive"], force=True)


# ---- Ctrl+C and out of memory ----


def test_ctrl_c_after_the_first_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch):
    def interrupted(config, q, k, v):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    replace_variant(monkeypatch, "inplace", interrupted)
    code, out, err = capture(capsys, tmp_path, "--variant", "naive", "--variant", "inplace",
                             "--variant", "sdpa_math")
    assert code == 130 and "interrupted" in one_line(err)
    assert "records what finished" in out  # the summary still reaches the screen
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "manifest.json", "naive.json", "naive.key_averages.json"]
    data = manifest(tmp_path)
    assert data["complete"] is False
    assert {n: e["status"] for n, e in data["variants"].items()} == {
        "naive": "ok", "inplace": "interrupted", "sdpa_math": "interrupted"}
    assert "while capturing" in data["variants"]["inplace"]["reason"]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("error", ["OutOfMemoryError", "RuntimeError"])
def test_out_of_memory_is_skipped_with_the_reason_and_the_others_go_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        error: str):
    original = variants.VARIANTS["naive"].prepare

    def hungry(config, q, k, v):  # type: ignore[no-untyped-def]
        prepared = original(config, q, k, v)

        def forward():  # type: ignore[no-untyped-def]
            if error == "OutOfMemoryError":
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")
            raise RuntimeError("CUDA error: out of memory")

        prepared.forward = forward
        return prepared

    replace_variant(monkeypatch, "naive", hungry)
    code, _, err = capture(capsys, tmp_path, "--variant", "naive", "--variant", "inplace")
    assert code == 0, err
    entries = manifest(tmp_path)["variants"]
    assert entries["naive"]["status"] == "skipped"
    assert "out of memory at B=1 H=2 S=64 D=32" in entries["naive"]["reason"]
    assert entries["inplace"]["status"] == "ok"
    assert not (tmp_path / "naive.json").exists() and (tmp_path / "inplace.json").exists()
    assert manifest(tmp_path)["complete"] is True
