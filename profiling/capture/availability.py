"""Why a variant cannot run on this machine, in words a user can act on.

A variant this machine cannot run is *skipped* with its reason, not an error
(DESIGN.md section 4): no CUDA, a backend this GPU or dtype does not support,
a library that is missing.  The SDPA backends are asked the only way that is
never out of date: a tiny call pinned to the backend, whose refusal (and the
warnings torch gives with it) becomes the reason.  Loading the ``kernels``
kernel is left to the variant itself, which reports "not loadable" the same way.
"""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import dataclass

from profiling.capture.config import DTYPE_NAMES, VARIANT_NAMES, CaptureConfig
from profiling.capture.variants import VARIANTS

_SDPA_BACKENDS = {
    "sdpa_math": "MATH",
    "sdpa_flash": "FLASH_ATTENTION",
    "sdpa_efficient": "EFFICIENT_ATTENTION",
    "sdpa_cudnn": "CUDNN_ATTENTION",
}

_CPU_REASONS = {
    "sdpa_flash": "needs CUDA (the FlashAttention-2 backend; a CPU run would profile "
                  "another kernel)",
    "sdpa_efficient": "needs CUDA (the memory-efficient backend has no CPU kernel)",
    "sdpa_cudnn": "needs CUDA (the cuDNN backend)",
    "kernels": "needs CUDA (a CUDA/Triton flash-attention kernel)",
    "flex": "needs CUDA (profiled as the Triton kernel torch.compile makes for a GPU)",
}


@dataclass(frozen=True)
class Availability:
    """One row of ``attn-tui variants``: can it run here, and if not, why not."""

    name: str
    summary: str
    reason: str | None

    @property
    def available(self) -> bool:
        return self.reason is None


def why_not(name: str, config: CaptureConfig) -> str | None:
    """None when ``name`` can run with ``config`` here; else the reason it cannot."""
    spec = VARIANTS[name]
    if config.device == "cpu":
        return _CPU_REASONS.get(name) if spec.needs_cuda else None
    try:
        import torch
    except ImportError:
        return "torch is not installed (pip install 'attn-tui[capture]')"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    if name in _SDPA_BACKENDS:
        return _sdpa_refusal(_SDPA_BACKENDS[name], config)
    if name == "kernels":
        if importlib.util.find_spec("kernels") is None:
            return "the 'kernels' library is not installed (pip install 'attn-tui[capture]')"
        if config.dtype == "fp32":
            return "flash-attention kernels take fp16 or bf16, not fp32 (use --dtype bf16)"
        return None
    if name == "flex":
        if importlib.util.find_spec("triton") is None:
            return "triton is not installed (torch.compile needs it for flex_attention on CUDA)"
        try:
            from torch.nn.attention import flex_attention  # noqa: F401
        except ImportError:
            return f"torch {torch.__version__} has no torch.nn.attention.flex_attention"
        return None
    return None


def _sdpa_refusal(backend_name: str, config: CaptureConfig) -> str | None:
    """Ask the backend with a tiny call of the real dtype and head_dim."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dtype = getattr(torch, DTYPE_NAMES[config.dtype])
    q = torch.randn(1, 1, config.seq, config.head_dim, device="cuda", dtype=dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel(getattr(SDPBackend, backend_name)), torch.no_grad():
                F.scaled_dot_product_attention(q, q, q, is_causal=True)
            torch.cuda.synchronize()
        except RuntimeError as exc:
            why = [str(w.message).strip().splitlines()[0] for w in caught
                   if "sdp" in str(w.message).lower() or "attention" in str(w.message).lower()]
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "refused"
            detail = "; ".join(dict.fromkeys(why)) or first
            return f"{backend_name} backend refused {config.dtype}, head_dim {config.head_dim} " \
                   f"on this GPU: {detail}"
    return None


def report(config: CaptureConfig) -> list[Availability]:
    """Every variant, in order, with the reason it cannot run here (if any)."""
    return [Availability(name, VARIANTS[name].summary, why_not(name, config))
            for name in VARIANT_NAMES]
