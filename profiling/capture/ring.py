"""Ring attention: causal SDPA over a sequence sharded across the ranks of a job.

Each of the N ranks holds ``S/N`` consecutive positions of q, k and v (rank r holds
positions ``[r*S/N, (r+1)*S/N)``).  The k/v blocks travel round a ring: at step s
a rank holds the block of rank ``(r - s) mod N``, sends it on to ``r + 1`` and
receives the next from ``r - 1`` while it computes (``batch_isend_irecv``, so the
transfer overlaps the attention of the block in hand).  Each block's attention is
one SDPA call that also returns its log-sum-exp; the partial results are merged
with the log-sum-exp rule

    lse = logaddexp(lse_a, lse_b);  out = e^(lse_a-lse) out_a + e^(lse_b-lse) out_b

which is exactly softmax over the union of the keys.  Causality by blocks: the
rank's own block is causal, blocks of earlier ranks are fully visible, blocks of
later ranks are fully masked and skipped (they still travel on).  With contiguous
shards the work is unbalanced (the last rank attends to every block, rank 0 to
its own only): the traces show it, which is part of what they are for.

Why the private aten ops: ``F.scaled_dot_product_attention`` does not return the
log-sum-exp, and the merge needs it.  torch's own context parallelism calls the
same ops.  Which one depends on the device and dtype (``sdpa_op``).  torch is
imported inside functions only (DESIGN.md section 2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

BlockFn = Callable[[Any, Any, Any, bool], "tuple[torch.Tensor, torch.Tensor]"]


def sdpa_op(device_type: str, dtype: Any) -> tuple[str, BlockFn]:
    """The SDPA op that gives (out, lse) here, and its name for the manifest."""
    import torch

    if device_type == "cpu":
        def cpu_block(q: Any, k: Any, v: Any, causal: bool) -> tuple[Any, Any]:
            out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                q, k, v, 0.0, causal)
            return out, lse

        return "aten._scaled_dot_product_flash_attention_for_cpu", cpu_block
    if dtype in (torch.float16, torch.bfloat16):
        def flash_block(q: Any, k: Any, v: Any, causal: bool) -> tuple[Any, Any]:
            res = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
            return res[0], res[1]

        return "aten._scaled_dot_product_flash_attention", flash_block

    def efficient_block(q: Any, k: Any, v: Any, causal: bool) -> tuple[Any, Any]:
        res = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, None, True, 0.0, causal)
        return res[0], res[1][..., : q.shape[-2]]  # the lse may be padded to 32 rows

    return "aten._scaled_dot_product_efficient_attention", efficient_block


def merge(out: Any, lse: Any, block_out: Any, block_lse: Any) -> tuple[Any, Any]:
    """Fold one block's (out, lse) into the running fp32 (out, lse)."""
    import torch

    if out is None:
        return block_out.float(), block_lse.float()
    new_lse = torch.logaddexp(lse, block_lse.float())
    out = (torch.exp(lse - new_lse).unsqueeze(-1) * out
           + torch.exp(block_lse.float() - new_lse).unsqueeze(-1) * block_out.float())
    return out, new_lse


def pack(k: Any, v: Any) -> Any:
    """k and v in one buffer ``[2, B, H, S/N, D]``: one message per ring step."""
    import torch

    return torch.stack((k, v))


def ring_attention(q: Any, kv: Any, rank: int, world: int, block: BlockFn,
                   group: Any = None) -> Any:
    """Causal attention of this rank's query shard against every rank's k/v shard
    (``kv``: this rank's own, ``pack``ed once outside the profiled forward)."""
    import torch
    import torch.distributed as dist

    send_to, recv_from = (rank + 1) % world, (rank - 1) % world
    peer = (lambda r: dist.get_global_rank(group, r)) if group is not None else (lambda r: r)
    out = lse = None
    for step in range(world):
        pending = []
        if step < world - 1:
            incoming = torch.empty_like(kv)
            ops = [dist.P2POp(dist.isend, kv, peer(send_to), group),
                   dist.P2POp(dist.irecv, incoming, peer(recv_from), group)]
            pending = dist.batch_isend_irecv(ops)
        source = (rank - step) % world
        if source <= rank:  # blocks of later ranks are all in this rank's future
            block_out, block_lse = block(q, kv[0], kv[1], source == rank)
            out, lse = merge(out, lse, block_out, block_lse)
        for work in pending:
            work.wait()
        if pending:
            kv = incoming
    assert out is not None  # step 0 is this rank's own block
    return out.to(q.dtype)


def shard(t: Any, rank: int, world: int) -> Any:
    """This rank's contiguous slice of the sequence dimension (dim 2), contiguous."""
    length = t.shape[2] // world
    return t[:, :, rank * length:(rank + 1) * length].contiguous()
