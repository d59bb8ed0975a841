"""Capture on the CPU, as CI runs it: real torch.profiler traces at a tiny shape.

These run the real command (``tui.cli.main``) and read the files it wrote, so they
fail if the trace, the oracle or the manifest stops saying what DESIGN.md
section 6 promises.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from profiling import atomic  # noqa: E402
from profiling.capture import outputs, runner  # noqa: E402
from profiling.capture.config import VARIANT_NAMES, make_config  # noqa: E402
from profiling.capture.session import CaptureInterrupted, run_capture  # noqa: E402
from tui.cli import main  # noqa: E402

TINY = ["--batch", "1", "--heads", "2", "--seq", "64", "--head-dim", "32"]
CPU_OK = ("naive", "inplace", "sdpa_math")


def capture(out: Path, *extra: str) -> int:
    return main(["capture", "--device", "cpu", "--out", str(out), *TINY, *extra])


def load(path: Path) -> dict:
    return outputs.read_json(path)


def leftovers(folder: Path) -> list[str]:
    """Temp files a capture must never leave behind."""
    return [p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cpu_capture")
    assert capture(out, "--all") == 0
    return out


def test_cpu_variants_ok_and_cuda_variants_skipped_with_reason(captured: Path) -> None:
    manifest = load(captured / "manifest.json")
    assert list(manifest["variants"]) == list(VARIANT_NAMES)
    for name, entry in manifest["variants"].items():
        if name in CPU_OK:
            assert entry["status"] == "ok", (name, entry["reason"])
            assert entry["reason"] is None
        else:
            assert entry["status"] == "skipped"
            assert "CUDA" in entry["reason"]
            assert not (captured / f"{name}.json").exists()


def test_one_attn_fwd_region_per_active_step(captured: Path) -> None:
    for name in CPU_OK:
        trace = load(captured / f"{name}.json")
        events = trace["traceEvents"]
        regions = [e for e in events if e.get("cat") == "user_annotation"
                   and e.get("name") == "attn_fwd" and e.get("ph") == "X"]
        steps = [e for e in events if e.get("cat") == "user_annotation"
                 and str(e.get("name", "")).startswith("ProfilerStep#")]
        assert len(regions) == 3, name
        assert len(steps) == 3, name
        assert load(captured / "manifest.json")["variants"][name]["attn_fwd_regions"] == 3


def test_naive_and_inplace_differ_by_the_masked_fill_op(captured: Path) -> None:
    def ops(name: str) -> set[str]:
        return {e["name"] for e in load(captured / f"{name}.json")["traceEvents"]
                if e.get("cat") == "cpu_op"}

    assert "aten::masked_fill" in ops("naive")
    assert "aten::masked_fill_" in ops("inplace")
    assert "aten::masked_fill" not in ops("inplace")


def test_trace_says_what_produced_it(captured: Path) -> None:
    meta = load(captured / "naive.json")["attn_tui"]
    assert meta["variant"] == "naive"
    assert meta["config"]["seq"] == 64 and meta["config"]["head_dim"] == 32
    assert meta["config"]["dtype"] == "fp32" and meta["config"]["causal"] is True
    assert meta["config"]["active"] == 3
    assert meta["environment"]["torch"] == torch.__version__


def test_oracle_is_torch_key_averages_rows(captured: Path) -> None:
    for name in CPU_OK:
        rows = load(captured / f"{name}.key_averages.json")
        assert rows, name
        for row in rows:
            assert tuple(row) == outputs.ORACLE_FIELDS
            assert row["device_type"] in ("CPU", "CUDA")
            assert isinstance(row["count"], int)
            for key in outputs.ORACLE_FIELDS[3:]:
                assert isinstance(row[key], float)
        by_key = {(r["key"], r["device_type"]): r for r in rows}
        assert by_key[("attn_fwd", "CPU")]["count"] == 3
        assert by_key[("ProfilerStep*", "CPU")]["count"] == 3
        # inclusive time holds the exclusive time of the region itself
        attn = by_key[("attn_fwd", "CPU")]
        assert attn["cpu_time_total"] >= attn["self_cpu_time_total"] > 0


def test_manifest_fields(captured: Path) -> None:
    manifest = load(captured / "manifest.json")
    for key in ("torch", "cuda", "cudnn", "gpu", "shape", "dtype", "device", "config"):
        assert key in manifest
    assert manifest["shape"] == {"batch": 1, "heads": 2, "seq": 64, "head_dim": 32}
    assert manifest["complete"] is True
    assert manifest["flops_per_forward"] == 4 * 1 * 2 * 64 * 64 * 32 / 2
    for name in CPU_OK:
        entry = manifest["variants"][name]
        assert entry["ms_per_forward"] > 0
        assert entry["tflops"] == pytest.approx(
            manifest["flops_per_forward"] / (entry["ms_per_forward"] * 1e-3) / 1e12)
        assert entry["kernels_per_forward"] == 0 and entry["memcpy_per_forward"] == 0
        assert entry["max_abs_error"] < 1e-4
        assert entry["trace"] == f"{name}.json"
        assert entry["key_averages"] == f"{name}.key_averages.json"


def test_no_temp_files_left(captured: Path) -> None:
    assert leftovers(captured) == []


def test_existing_traces_are_not_overwritten_without_force(
        captured: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p.name: p.read_bytes() for p in captured.iterdir()}
    assert capture(captured, "--variant", "naive") == 2
    err = capsys.readouterr().err
    assert "--force" in err and "naive" in err
    assert len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in captured.iterdir()} == before


def test_force_gzip_replaces_and_removes_stale_format(tmp_path: Path) -> None:
    assert capture(tmp_path, "--variant", "naive") == 0
    assert capture(tmp_path, "--variant", "naive", "--gzip", "--force") == 0
    assert not (tmp_path / "naive.json").exists()
    raw = (tmp_path / "naive.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert json.loads(gzip.decompress(raw))["attn_tui"]["variant"] == "naive"
    assert load(tmp_path / "manifest.json")["variants"]["naive"]["trace"] == "naive.json.gz"
    assert leftovers(tmp_path) == []


def test_manifest_keeps_earlier_variants_of_the_same_config(tmp_path: Path) -> None:
    assert capture(tmp_path, "--variant", "naive") == 0
    assert capture(tmp_path, "--variant", "inplace") == 0
    variants = load(tmp_path / "manifest.json")["variants"]
    assert variants["naive"]["status"] == "ok" and variants["inplace"]["status"] == "ok"


def test_output_is_the_captures_own_progress_and_table(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """torch's profiler prints ``USDT: ... profiler_start`` from C++ on fd 2 (issue 12)."""
    assert capture(tmp_path, "--variant", "naive") == 0
    out, err = capfd.readouterr()
    assert "profiler_start" not in out + err and "USDT" not in out + err
    assert err == ""
    assert "ms/fwd: wall time per forward (perf_counter" in out  # the time base, named
    assert f"attn-tui open {tmp_path}" in " ".join(out.split())


def test_none_ran_exits_nonzero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert capture(tmp_path, "--variant", "sdpa_flash") == 1
    assert "no variant ran" in capsys.readouterr().err
    assert load(tmp_path / "manifest.json")["variants"]["sdpa_flash"]["status"] == "skipped"


def test_bad_kernel_repo_is_one_line_error(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert capture(tmp_path, "--variant", "kernels", "--kernel-repo", "not a repo!") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--kernel-repo" in err[0]


def test_wrong_answer_fails_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from profiling.capture import variants

    spec = variants.VARIANTS["inplace"]
    original = spec.prepare

    def broken(config, q, k, v):  # type: ignore[no-untyped-def]
        prepared = original(config, q, k, v)
        good = prepared.forward
        prepared.forward = lambda: good() * 1.01
        return prepared

    monkeypatch.setitem(variants.VARIANTS, "inplace",
                        variants.VariantSpec(spec.name, spec.summary, spec.needs_cuda, broken))
    assert capture(tmp_path, "--variant", "naive", "--variant", "inplace") == 1
    captured_io = capsys.readouterr()
    assert "inplace" in captured_io.err and "failed" in captured_io.err
    entry = load(tmp_path / "manifest.json")["variants"]["inplace"]
    assert entry["status"] == "failed" and "wrong answer" in entry["reason"]
    assert not (tmp_path / "inplace.json").exists()
    assert (tmp_path / "naive.json").exists()


def test_ctrl_c_leaves_no_partial_trace_and_a_manifest_of_what_finished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = runner._write
    calls = []

    def interrupt_mid_write(config, name, out, gz, prof, prepared, result, env):  # type: ignore[no-untyped-def]
        calls.append(name)
        if name == "inplace":
            # the oracle is written, then Ctrl+C arrives before the trace is
            original = outputs.write_json

            def write_then_stop(path, obj, gz=False, indent=None):  # type: ignore[no-untyped-def]
                if str(path).endswith(".json") and "key_averages" not in str(path):
                    raise KeyboardInterrupt
                original(path, obj, gz=gz, indent=indent)

            monkeypatch.setattr(runner, "write_json", write_then_stop)
        return real_write(config, name, out, gz, prof, prepared, result, env)

    monkeypatch.setattr(runner, "_write", interrupt_mid_write)
    config = make_config("cpu", batch=1, heads=2, seq=64, head_dim=32)
    with pytest.raises(CaptureInterrupted) as stop:
        run_capture(config, ["naive", "inplace", "sdpa_math"], tmp_path)
    assert calls == ["naive", "inplace"]
    manifest = load(tmp_path / "manifest.json")
    assert manifest["complete"] is False
    statuses = {n: e["status"] for n, e in manifest["variants"].items()}
    assert statuses == {"naive": "ok", "inplace": "interrupted", "sdpa_math": "interrupted"}
    assert "not started" in manifest["variants"]["sdpa_math"]["reason"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "manifest.json", "naive.json", "naive.key_averages.json"]
    assert stop.value.report.interrupted


def test_atomic_write_keeps_old_file_when_rename_fails(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "t.json"
    outputs.write_json(target, {"v": 1})

    def fail(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", fail)
    with pytest.raises(OSError):
        outputs.write_json(target, {"v": 2})
    assert json.loads(target.read_text()) == {"v": 1}
    assert leftovers(tmp_path) == []
