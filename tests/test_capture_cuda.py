"""Capture on a CUDA GPU: every variant, the Triton kernel, the Memcpy of naive.

Marked ``cuda`` and skipped without a GPU; they run on the lent GPU machine
(see the capture issue's note for their output).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

from profiling.capture import outputs  # noqa: E402
from profiling.capture.config import VARIANT_NAMES  # noqa: E402
from tui.cli import main  # noqa: E402

SMALL = ["--batch", "2", "--heads", "4", "--seq", "512", "--head-dim", "64", "--dtype", "bf16"]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cuda_capture")
    assert main(["capture", "--all", "--device", "cuda", "--out", str(out), *SMALL]) == 0
    return out


def test_every_variant_ok_on_this_gpu(captured: Path) -> None:
    manifest = outputs.read_json(captured / "manifest.json")
    statuses = {n: (e["status"], e["reason"]) for n, e in manifest["variants"].items()}
    assert statuses == {n: ("ok", None) for n in VARIANT_NAMES}
    assert manifest["gpu"] == torch.cuda.get_device_name()
    for entry in manifest["variants"].values():
        assert entry["attn_fwd_regions"] == 3
        assert entry["kernels_per_forward"] >= 1
        assert entry["tflops"] > 0


def test_naive_copies_once_per_forward_and_inplace_never(captured: Path) -> None:
    variants = outputs.read_json(captured / "manifest.json")["variants"]
    assert variants["naive"]["memcpy_per_forward"] == 1
    assert variants["inplace"]["memcpy_per_forward"] == 0


def test_oracle_has_device_rows(captured: Path) -> None:
    rows = outputs.read_json(captured / "sdpa_flash.key_averages.json")
    assert any(r["device_type"] == "CUDA" and r["self_device_time_total"] > 0 for r in rows)
    assert {r["device_type"] for r in rows} <= {"CPU", "CUDA"}


def test_kernels_variant_time_sits_under_its_custom_op(captured: Path) -> None:
    manifest = outputs.read_json(captured / "manifest.json")
    source = manifest["variants"]["kernels"]["notes"]["kernel_source"]
    if "attn-tui" not in source["loaded"]:
        pytest.skip(f"kernel came from {source['loaded']}, not the bundled one")
    rows = outputs.read_json(captured / "kernels.key_averages.json")
    op = [r for r in rows if r["key"] == "attn_tui::flash_attn_fwd" and r["device_type"] == "CPU"]
    assert op and op[0]["count"] == 3
    assert op[0]["device_time_total"] > 0  # the Triton kernel's time is attributed to the op


def _reference(q, k, v, causal):  # type: ignore[no-untyped-def]
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
    scores = qf @ kf.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        seq = scores.shape[-1]
        future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return (scores.softmax(-1) @ vf).transpose(1, 2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("seq,causal", [(1024, True), (200, True), (333, False)])
def test_bundled_triton_kernel_matches_reference(dtype: str, head_dim: int, seq: int,
                                                 causal: bool) -> None:
    from profiling.capture.kernel_source import load_bundled

    module, _ = load_bundled(None, "test")
    gen = torch.Generator(device="cpu").manual_seed(seq + head_dim)
    q, k, v = (torch.randn(2, seq, 3, head_dim, generator=gen)
               .to(device="cuda", dtype=getattr(torch, dtype)) for _ in range(3))
    out = module.flash_attn_func(q, k, v, causal=causal)
    assert out.shape == q.shape and out.dtype == q.dtype
    ref = _reference(q, k, v, causal)
    tol = 2e-2 if dtype == "bfloat16" else 4e-3
    assert torch.allclose(out.float(), ref, atol=tol, rtol=tol), \
        float((out.float() - ref).abs().max())


def test_bundled_kernel_loads_with_get_local_kernel() -> None:
    import kernels

    from profiling.capture.kernel_source import bundled_kernel_dir

    module = kernels.get_local_kernel(bundled_kernel_dir())
    assert callable(module.flash_attn_func)
    assert torch.ops.attn_tui.flash_attn_fwd is not None
