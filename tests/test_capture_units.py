"""Capture's parts that need no profiler run: counting, kernel loading, imports, config."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from profiling.capture import kernel_source
from profiling.capture.config import make_config
from profiling.capture.trace_counts import RegionCounts, count_file
from profiling.errors import CaptureError

REPO = Path(__file__).resolve().parents[1]


def _x(name: str, cat: str, ts: float, dur: float, tid: int = 1, **args: object) -> dict:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid,
            "args": args}


def _count(tmp_path: Path, events: list[dict]) -> RegionCounts:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return count_file(path, "attn_fwd")


def test_count_region_links_gpu_events_through_correlation(tmp_path: Path) -> None:
    events = [
        _x("attn_fwd", "user_annotation", 100, 50),
        _x("cudaLaunchKernel", "cuda_runtime", 110, 2, correlation=7),
        _x("cudaMemcpyAsync", "cuda_runtime", 120, 2, correlation=8),
        _x("cuLaunchKernelEx", "cuda_driver", 130, 2, correlation=9),
        _x("cudaLaunchKernel", "cuda_runtime", 200, 2, correlation=10),  # outside the region
        _x("attn_fwd", "user_annotation", 300, 50),
        _x("cudaMemsetAsync", "cuda_runtime", 310, 2, correlation=11),
        # GPU side, on a stream "thread", out of CPU order
        _x("gemm", "kernel", 400, 5.5, tid=7, correlation=7),
        _x("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 406, 1.0, tid=7, correlation=8),
        _x("triton_kernel", "kernel", 408, 3.0, tid=7, correlation=9),
        _x("stray", "kernel", 420, 1.0, tid=7, correlation=10),
        _x("Memset (Device)", "gpu_memset", 430, 0.5, tid=7, correlation=11),
        _x("attn_fwd", "gpu_user_annotation", 400, 20, tid=7),  # not a CPU region
    ]
    counts = _count(tmp_path, events)
    assert len(counts.instances) == 2
    first, second = counts.instances
    assert (first.kernels, first.memcpys, first.memsets) == (2, 1, 0)
    assert first.device_ns == 9_500
    assert counts.memcpy_names == ("Memcpy DtoD (Device -> Device)",)
    assert (second.kernels, second.memcpys, second.memsets) == (0, 0, 1)
    assert counts.per_instance("kernels") == 1.0
    assert counts.per_instance("memcpys") == 0.5
    with pytest.raises(ValueError):
        counts.per_instance("memcpy")  # a figure RegionInstance does not have


def test_count_region_other_thread_does_not_count(tmp_path: Path) -> None:
    events = [
        _x("attn_fwd", "user_annotation", 100, 50, tid=1),
        _x("cudaLaunchKernel", "cuda_runtime", 110, 2, tid=2, correlation=1),
        _x("k", "kernel", 200, 1, tid=7, correlation=1),
    ]
    assert _count(tmp_path, events).instances[0].kernels == 0


def test_parse_kernel_repo() -> None:
    assert kernel_source.parse_kernel_repo(None) == ("kernels-community/flash-attn2", None, 2)
    assert kernel_source.parse_kernel_repo("me/my-flash@3") == ("me/my-flash", None, 3)
    with pytest.raises(CaptureError):
        kernel_source.parse_kernel_repo("no such thing")


def test_bundled_kernel_has_the_kernels_layout() -> None:
    variant = kernel_source.bundled_kernel_dir() / "build" / "torch-cuda"
    assert (variant / "__init__.py").is_file()
    meta = json.loads((variant / "metadata.json").read_text())
    for key in ("name", "id", "version", "license"):
        assert meta[key]
    assert meta["python-depends"] == []
    assert meta["backend"] == {"type": "cuda"}
    from kernels._rust import Metadata  # the library's own parser accepts it

    assert Metadata.read_from_file(variant / "metadata.json").id == meta["id"]


def _fake_kernel(root: Path) -> Path:
    """A kernel folder in the 'universal' variant, which ``kernels`` accepts on any backend."""
    variant = root / "build" / "torch-universal"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps({
        "name": "fake-flash", "id": "_fake_flash_test", "version": 1, "license": "MIT",
        "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text(textwrap.dedent("""
        def flash_attn_func(q, k, v, causal=False):
            return q
    """))
    return root


def test_local_folder_loads_with_get_local_kernel(tmp_path: Path) -> None:
    pytest.importorskip("kernels")
    pytest.importorskip("torch")
    folder = _fake_kernel(tmp_path / "fake")
    module, source = kernel_source.load_flash_kernel(str(folder))
    assert module.flash_attn_func(1, 2, 3) == 1
    assert source.how == "kernels.get_local_kernel"
    assert source.fallback_reason is None


def test_unreachable_hub_falls_back_to_bundled_through_local_kernels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("kernels")
    pytest.importorskip("torch")
    folder = _fake_kernel(tmp_path / "bundled")
    monkeypatch.setattr(kernel_source, "bundled_kernel_dir", lambda: folder)
    monkeypatch.setattr(kernel_source, "hub_reachable", lambda: "no network (test)")
    monkeypatch.delenv("LOCAL_KERNELS", raising=False)
    module, source = kernel_source.load_flash_kernel(None)
    assert callable(module.flash_attn_func)
    assert source.how == "kernels.get_kernel via LOCAL_KERNELS"
    assert source.requested == "kernels-community/flash-attn2@2"
    assert "no network (test)" in (source.fallback_reason or "")
    import os

    assert "LOCAL_KERNELS" not in os.environ  # restored after the load


def test_explicit_folder_that_does_not_load_is_unavailable(tmp_path: Path) -> None:
    pytest.importorskip("kernels")
    pytest.importorskip("torch")
    (tmp_path / "empty").mkdir()
    with pytest.raises(kernel_source.KernelUnavailable):
        kernel_source.load_flash_kernel(str(tmp_path / "empty"))


def test_capture_modules_import_without_torch() -> None:
    code = textwrap.dedent("""
        import sys
        import profiling.capture.availability, profiling.capture.config
        import profiling.capture.kernel_source, profiling.capture.outputs
        import profiling.capture.runner, profiling.capture.session
        import profiling.capture.trace_counts, profiling.capture.variants
        import tui.commands.capture, tui.commands.variants
        bad = [m for m in ("torch", "textual", "kernels", "triton") if m in sys.modules]
        assert not bad, bad
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_defaults_follow_the_blog_post_on_gpu_and_shrink_on_cpu() -> None:
    gpu, cpu = make_config("cuda"), make_config("cpu")
    assert (gpu.batch, gpu.heads, gpu.seq, gpu.head_dim, gpu.dtype) == (8, 16, 1024, 64, "bf16")
    assert (gpu.wait, gpu.warmup, gpu.active) == (1, 1, 3)
    assert gpu.flops_per_forward() == 4 * 8 * 16 * 1024 * 1024 * 64 / 2
    assert cpu.seq < gpu.seq and cpu.dtype == "fp32"
    assert make_config("cpu", seq=32).seq == 32
