"""The bundled Triton flash-attention kernel, checked on CPU under Triton's interpreter.

``tests/test_capture_cuda.py`` checks the kernel on a GPU; CI has none, so here the
same kernel (``profiling/capture/flash_kernel``) runs under ``TRITON_INTERPRET=1``
against torch's math SDPA in fp32: causal and non-causal, sequences that are and
are not a multiple of the kernel's 64-key block, several query tiles (the causal
path's unmasked left blocks and its diagonal blocks), batch and heads above one.

The interpreter reads ``TRITON_INTERPRET`` when triton is imported, so the kernel
runs in a child process started with it set; the child prints one JSON line of
errors and this file checks them.

Dtypes: fp32 through the kernel's ``launch`` (the interpreter computes exactly what
the program says, so the tolerance is tight) and fp16 through the public
``flash_attn_func`` (the torch custom op around the launch).  bf16 is not run
here: Triton 3.9's interpreter returns wrong ``tl.dot`` results for bf16
operands on CPU (a one-line ``tl.dot`` kernel is off by ~1e10), a limitation of
the interpreter, not of the kernel, which the GPU test covers in bf16.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# (name, seq, heads, head_dim, causal, dtype, entry point)
CASES: list[tuple[str, int, int, int, bool, str, str]] = [
    ("causal_one_tile", 128, 2, 16, True, "float32", "launch"),
    ("causal_ragged", 200, 2, 32, True, "float32", "launch"),
    ("causal_three_tiles_ragged", 300, 1, 16, True, "float32", "launch"),
    ("noncausal_even", 192, 2, 16, False, "float32", "launch"),
    ("noncausal_ragged", 333, 1, 32, False, "float32", "launch"),
    ("fp16_causal_ragged", 150, 2, 16, True, "float16", "flash_attn_func"),
    ("fp16_noncausal_ragged", 100, 2, 32, False, "float16", "flash_attn_func"),
]
TOLERANCE = {"float32": 1e-5, "float16": 4e-3}
REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None,
    reason="needs triton and torch (pip install -e '.[test,capture]')",
)


def _run_cases() -> dict[str, dict[str, Any]]:
    """In the child (TRITON_INTERPRET=1): every case's max error and output dtype."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    module = _load_kernel_package()
    launch = sys.modules[f"{module.__name__}._triton_fwd"].launch
    gen = torch.Generator().manual_seed(1234)
    out: dict[str, dict[str, Any]] = {}
    for name, seq, heads, head_dim, causal, dtype, entry in CASES:
        q, k, v = (torch.randn(2, seq, heads, head_dim, generator=gen).to(getattr(torch, dtype))
                   for _ in range(3))
        if entry == "launch":
            got = torch.empty_like(q)
            launch(q, k, v, got, head_dim**-0.5, causal)
        else:
            got = module.flash_attn_func(q, k, v, causal=causal)
        with sdpa_kernel(SDPBackend.MATH):
            ref = F.scaled_dot_product_attention(
                *(t.float().transpose(1, 2) for t in (q, k, v)), is_causal=causal
            ).transpose(1, 2)
        out[name] = {"max_error": float((got.float() - ref).abs().max()),
                     "dtype": str(got.dtype).removeprefix("torch."),
                     "shape_ok": got.shape == q.shape}
    return out


def _load_kernel_package() -> Any:
    """The kernel folder as a package, straight from its files (no ``kernels`` library,
    which picks a build variant for the local torch and would find no CUDA one on CPU)."""
    sys.path.insert(0, str(REPO))
    from profiling.capture.kernel_source import bundled_kernel_dir

    folder = bundled_kernel_dir() / "build" / "torch-cuda"
    spec = importlib.util.spec_from_file_location(
        "attn_tui_flash_interpreted", folder / "__init__.py",
        submodule_search_locations=[str(folder)],
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Any]]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True,
                          timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_kernel_matches_math_sdpa(results: dict[str, dict[str, Any]], case: tuple) -> None:
    name, dtype = case[0], case[5]
    got = results[name]
    assert got["shape_ok"] and got["dtype"] == dtype
    assert got["max_error"] <= TOLERANCE[dtype], got


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") != "1":
        sys.exit("run with TRITON_INTERPRET=1 (set before triton is imported)")
    print(json.dumps(_run_cases()))
