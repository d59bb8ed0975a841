"""The attention variants: each a small function of q, k, v, and how to prepare it.

Every variant computes the same causal attention; what differs is what a trace
of it shows.  ``naive`` spells attention out in aten ops and its out-of-place
``masked_fill`` copies the whole score matrix; ``inplace`` is the same with
``masked_fill_``; the ``sdpa_*`` variants pin one backend of
``scaled_dot_product_attention``; ``kernels`` calls a flash-attention kernel
loaded with the Hugging Face ``kernels`` library; ``flex`` is ``flex_attention``
compiled by ``torch.compile``.

``prepare`` does everything that must stay out of the profiled steps (building
the causal mask, transposing to another layout, loading or compiling a
kernel) and returns a ``Prepared`` whose ``forward`` is the one call profiled
inside ``record_function("attn_fwd")``.  torch is imported inside functions
only (DESIGN.md section 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from profiling.capture.config import CaptureConfig

if TYPE_CHECKING:
    import torch


@dataclass
class Prepared:
    """A variant ready to profile: ``forward()`` runs one attention forward.

    ``to_reference_layout`` maps its output back to ``[batch, heads, seq, head_dim]``
    for the correctness check (outside the profiled steps); ``notes`` go into the
    manifest and the trace (for example where the kernel came from).
    """

    forward: Callable[[], torch.Tensor]
    to_reference_layout: Callable[[torch.Tensor], torch.Tensor] = lambda out: out
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VariantSpec:
    """One variant: its name, what it shows, and whether it needs a CUDA device."""

    name: str
    summary: str
    needs_cuda: bool
    prepare: Callable[[CaptureConfig, Any, Any, Any], Prepared]


# -- the attention functions themselves -------------------------------------------


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    future: torch.Tensor) -> torch.Tensor:
    """Attention in aten ops; ``masked_fill`` copies the score matrix before filling it."""
    import torch

    scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    scores = scores.masked_fill(future, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def inplace_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      future: torch.Tensor) -> torch.Tensor:
    """The naive variant with ``masked_fill_``: the score matrix is filled where it lies."""
    import torch

    scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    scores.masked_fill_(future, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def sdpa_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                   backend: Any) -> torch.Tensor:
    """``scaled_dot_product_attention`` pinned to one backend (no silent fallback)."""
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """fp32 causal attention in plain math: what every variant is checked against."""
    import torch

    qf, kf, vf = q.float(), k.float(), v.float()
    seq = q.shape[-2]
    future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
    scores = torch.matmul(qf, kf.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    scores.masked_fill_(future, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), vf)


# -- preparing each variant ------------------------------------------------------


def causal_future_mask(seq: int, device: Any) -> torch.Tensor:
    """True above the diagonal: the future positions a causal query may not see."""
    import torch

    return torch.ones(seq, seq, dtype=torch.bool, device=device).triu(1)


def _prepare_naive(config: CaptureConfig, q: Any, k: Any, v: Any) -> Prepared:
    future = causal_future_mask(config.seq, q.device)
    return Prepared(forward=lambda: naive_attention(q, k, v, future))


def _prepare_inplace(config: CaptureConfig, q: Any, k: Any, v: Any) -> Prepared:
    future = causal_future_mask(config.seq, q.device)
    return Prepared(forward=lambda: inplace_attention(q, k, v, future))


def _sdpa_preparer(backend_name: str) -> Callable[[CaptureConfig, Any, Any, Any], Prepared]:
    def prepare(config: CaptureConfig, q: Any, k: Any, v: Any) -> Prepared:
        from torch.nn.attention import SDPBackend

        backend = getattr(SDPBackend, backend_name)
        return Prepared(forward=lambda: sdpa_attention(q, k, v, backend),
                        notes={"sdpa_backend": backend_name})

    return prepare


def _prepare_kernels(config: CaptureConfig, q: Any, k: Any, v: Any) -> Prepared:
    from profiling.capture.kernel_source import load_flash_kernel

    module, source = load_flash_kernel(config.kernel_repo)
    # flash_attn_func takes [batch, seq, heads, head_dim]; transpose once, here.
    q2, k2, v2 = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    flash_attn_func = module.flash_attn_func

    def forward() -> Any:
        out = flash_attn_func(q2, k2, v2, causal=True)
        return out[0] if isinstance(out, tuple) else out

    return Prepared(forward=forward, to_reference_layout=lambda out: out.transpose(1, 2),
                    notes={"kernel_source": source.as_dict()})


def _prepare_flex(config: CaptureConfig, q: Any, k: Any, v: Any) -> Prepared:
    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
        return q_idx >= kv_idx

    block_mask = create_block_mask(causal, B=None, H=None, Q_LEN=config.seq,
                                   KV_LEN=config.seq, device=q.device)
    compiled = torch.compile(flex_attention)
    return Prepared(forward=lambda: compiled(q, k, v, block_mask=block_mask),
                    notes={"compiled": "torch.compile(flex_attention), before the profiled steps"})


VARIANTS: dict[str, VariantSpec] = {
    spec.name: spec
    for spec in (
        VariantSpec("naive", "matmul, scale, masked_fill (a copy), softmax, matmul",
                    False, _prepare_naive),
        VariantSpec("inplace", "as naive, with masked_fill_ (no copy)", False, _prepare_inplace),
        VariantSpec("sdpa_math", "scaled_dot_product_attention, MATH backend", False,
                    _sdpa_preparer("MATH")),
        VariantSpec("sdpa_flash", "scaled_dot_product_attention, FLASH_ATTENTION backend",
                    True, _sdpa_preparer("FLASH_ATTENTION")),
        VariantSpec("sdpa_efficient", "scaled_dot_product_attention, EFFICIENT_ATTENTION backend",
                    True, _sdpa_preparer("EFFICIENT_ATTENTION")),
        VariantSpec("sdpa_cudnn", "scaled_dot_product_attention, CUDNN_ATTENTION backend",
                    True, _sdpa_preparer("CUDNN_ATTENTION")),
        VariantSpec("kernels", "flash_attn_func from a kernel loaded with HF `kernels`",
                    True, _prepare_kernels),
        VariantSpec("flex", "flex_attention with a causal block mask, torch.compile'd",
                    True, _prepare_flex),
    )
}
