"""attn-tui's own flash-attention forward, shipped in the ``kernels`` library's layout.

The ``kernels`` variant loads a kernel with the Hugging Face ``kernels`` library;
when the hub is out of reach (as on the lent GPU machines) it loads this folder
instead, with ``get_local_kernel`` or through ``LOCAL_KERNELS``.  The entry point
mirrors ``flash_attn_func`` of FlashAttention-2: ``[batch, seq, heads, head_dim]``
tensors in, the attention output out.

The Triton launch is wrapped in the torch custom op ``attn_tui::flash_attn_fwd``.
A bare Triton launch has no aten op above it, so torch.profiler's op table would
have nowhere to put its time; as a custom op it gets a CPU op row of its own
that launches exactly one kernel.
"""

from __future__ import annotations

import torch

from ._triton_fwd import launch

__all__ = ["flash_attn_func", "SUPPORTED_HEAD_DIMS", "SUPPORTED_DTYPES"]

SUPPORTED_HEAD_DIMS = (16, 32, 64, 128)
SUPPORTED_DTYPES = (torch.float16, torch.bfloat16)
OP_NAME = "attn_tui::flash_attn_fwd"


def _flash_attn_fwd(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: float, causal: bool
) -> torch.Tensor:
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    launch(q, k, v, out, softmax_scale, causal)
    return out


def _fake_flash_attn_fwd(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: float, causal: bool
) -> torch.Tensor:
    return torch.empty(q.shape, dtype=q.dtype, device=q.device)


def _registered_op():
    """The custom op, registered once per process even if this module loads twice."""
    namespace = torch.ops.attn_tui
    try:
        return namespace.flash_attn_fwd
    except (AttributeError, RuntimeError):
        pass
    op = torch.library.custom_op(OP_NAME, mutates_args=())(_flash_attn_fwd)
    op.register_fake(_fake_flash_attn_fwd)
    return torch.ops.attn_tui.flash_attn_fwd


_op = _registered_op()


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("expected [batch, seq, heads, head_dim] tensors")
    if q.dtype not in SUPPORTED_DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"expected fp16 or bf16 tensors of one dtype, got {q.dtype}")
    head_dim = q.shape[-1]
    if head_dim not in SUPPORTED_HEAD_DIMS or k.shape[-1] != head_dim or v.shape[-1] != head_dim:
        raise ValueError(f"head_dim must be one of {SUPPORTED_HEAD_DIMS}, got {head_dim}")
    if k.shape != v.shape or k.shape[0] != q.shape[0] or k.shape[2] != q.shape[2]:
        raise ValueError("k and v must match q in batch and heads (no grouped-query attention)")
    if causal and k.shape[1] != q.shape[1]:
        raise ValueError("causal attention here needs seq_q == seq_k")
    if q.stride(-1) != 1 or k.stride(-1) != 1 or v.stride(-1) != 1:
        raise ValueError("head_dim must be the contiguous dimension")


def flash_attn_func(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p: float = 0.0,
    softmax_scale: float | None = None,
    causal: bool = False,
    **unsupported: object,
) -> torch.Tensor:
    """Attention forward of FlashAttention-2's ``flash_attn_func`` (no dropout, no extras).

    Arguments that FlashAttention-2 accepts but this kernel does not implement
    (window sizes, ALiBi, returning probabilities) raise instead of being ignored,
    so a caller never gets an answer to a question it did not ask.
    """
    if dropout_p:
        raise ValueError("dropout is not supported by attn-tui's flash kernel (forward only)")
    used = {name: value for name, value in unsupported.items()
            if value not in (None, False, (-1, -1), 0.0)}
    if used:
        raise ValueError(f"unsupported arguments: {', '.join(sorted(used))}")
    _check(q, k, v, causal)
    scale = softmax_scale if softmax_scale is not None else q.shape[-1] ** -0.5
    return _op(q, k, v, float(scale), bool(causal))
