"""A flash-attention forward in Triton: one program per (query tile, batch*head).

Each program keeps a BLOCK_M x HEAD_DIM tile of queries on chip and walks the
keys and values in BLOCK_N blocks, folding each block into a running softmax
(the "online softmax": a running row maximum ``m``, a running denominator ``l``,
and an accumulator rescaled whenever the maximum grows).  The S x S score
matrix never reaches memory, which is the whole point of the variant next to
``naive`` in a trace.

With a causal mask, key blocks entirely left of a query tile's diagonal need no
mask at all; only the blocks that cross the diagonal pay for one.  Query tiles
are launched last-first so the longest rows (the bottom of the triangle) start
earliest and the tail of the launch is short.

Tensors use the ``flash_attn_func`` layout ``[batch, seq, heads, head_dim]``
with any strides as long as ``head_dim`` is contiguous.  Softmax runs in fp32
with ``exp2`` (the scale is pre-multiplied by log2(e)).
"""

from __future__ import annotations

import triton
import triton.language as tl

LOG2_E = 1.4426950408889634


@triton.jit
def _fold_block(
    acc, m_i, l_i, q, k_base, v_base, start_n, offs_m, offs_n, offs_d,
    stride_ks, stride_vs, seq_k, qk_scale,
    MASK_CAUSAL: tl.constexpr, MASK_SEQ: tl.constexpr,
):
    """Fold one key/value block into the running softmax state of a query tile."""
    cols = start_n + offs_n
    k_ptrs = k_base + cols[None, :] * stride_ks + offs_d[:, None]
    v_ptrs = v_base + cols[:, None] * stride_vs + offs_d[None, :]
    if MASK_SEQ:
        k = tl.load(k_ptrs, mask=cols[None, :] < seq_k, other=0.0)
        v = tl.load(v_ptrs, mask=cols[:, None] < seq_k, other=0.0)
    else:
        k = tl.load(k_ptrs)
        v = tl.load(v_ptrs)
    s = tl.dot(q, k) * qk_scale
    if MASK_CAUSAL:
        keep = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < seq_k)
        s = tl.where(keep, s, float("-inf"))
    elif MASK_SEQ:
        s = tl.where(cols[None, :] < seq_k, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, m_new, l_i


@triton.jit
def attn_tui_flash_fwd_kernel(
    Q, K, V, O,  # noqa: E741 (the attention output, named as in the papers)
    stride_qb, stride_qs, stride_qh,
    stride_kb, stride_ks, stride_kh,
    stride_vb, stride_vs, stride_vh,
    stride_ob, stride_os, stride_oh,
    heads, seq_q, seq_k, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr, EVEN_N: tl.constexpr,
):
    """One query tile of one (batch, head): O = softmax(Q K^T * scale) V."""
    tile = tl.num_programs(0) - 1 - tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // heads
    h = pid_bh % heads

    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :]
    q = tl.load(q_ptrs, mask=offs_m[:, None] < seq_q, other=0.0)
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    if CAUSAL:
        # Blocks wholly left of the tile's first row: every score is kept.
        diag = tile * BLOCK_M
        for start_n in range(0, diag, BLOCK_N):
            acc, m_i, l_i = _fold_block(
                acc, m_i, l_i, q, k_base, v_base, start_n, offs_m, offs_n, offs_d,
                stride_ks, stride_vs, seq_k, qk_scale, False, False,
            )
        # Blocks that cross the diagonal: mask the future (and the ragged end; a
        # block wholly past seq_k folds in nothing, since all its scores are -inf).
        for start_n in range(diag, diag + BLOCK_M, BLOCK_N):
            acc, m_i, l_i = _fold_block(
                acc, m_i, l_i, q, k_base, v_base, start_n, offs_m, offs_n, offs_d,
                stride_ks, stride_vs, seq_k, qk_scale, True, True,
            )
    else:
        for start_n in range(0, seq_k, BLOCK_N):
            acc, m_i, l_i = _fold_block(
                acc, m_i, l_i, q, k_base, v_base, start_n, offs_m, offs_n, offs_d,
                stride_ks, stride_vs, seq_k, qk_scale, False, not EVEN_N,
            )

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :]
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < seq_q)


def tile_config(head_dim: int) -> dict[str, int]:
    """Fixed tiles per head_dim (no autotuning: a capture must launch one kernel)."""
    if head_dim <= 64:
        return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}


def launch(q, k, v, out, softmax_scale: float, causal: bool) -> None:
    """Launch the kernel on [batch, seq, heads, head_dim] tensors, writing ``out``."""
    batch, seq_q, heads, head_dim = q.shape
    seq_k = k.shape[1]
    cfg = tile_config(head_dim)
    block_m, block_n = cfg["BLOCK_M"], cfg["BLOCK_N"]
    grid = (triton.cdiv(seq_q, block_m), batch * heads)
    attn_tui_flash_fwd_kernel[grid](
        q, k, v, out,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        heads, seq_q, seq_k, softmax_scale * LOG2_E,
        HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n,
        CAUSAL=causal, EVEN_N=(seq_k % block_n == 0),
        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )
