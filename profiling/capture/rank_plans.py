"""What one rank of a job runs for a variant, and what its output is checked against.

Under ``capture --nproc N`` every variant runs on every rank, in one of two modes:

- ``data_parallel`` (the single-device variants): each rank its own batch (inputs
  seeded with ``seed + rank``), checked against its own fp32 reference, exactly as
  a one-device capture is.  Same shapes on every rank, so differences between the
  ranks' traces are per-rank variance, not different work.
- ``context_parallel`` (``ring``, ``sdpa_cp``): every rank builds the same full q, k,
  v (seed ``seed``) and keeps ``S/N`` of the sequence; the output is checked
  against the single-device result (the fp32 reference of the full sequence) before
  anything is timed.

torch is imported inside functions only (DESIGN.md section 2).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from profiling.capture.config import MULTI_RANK_VARIANTS, CaptureConfig
from profiling.capture.kernel_source import KernelUnavailable
from profiling.capture.variants import VARIANTS, Prepared, reference_attention

SUMMARIES = {
    "ring": "ring of batch_isend_irecv around SDPA, sequence sharded S/N, log-sum-exp merge",
    "sdpa_cp": "SDPA under torch.distributed.tensor.experimental.context_parallel",
}


@dataclass(frozen=True)
class RankContext:
    """Where this rank stands in its job."""

    rank: int
    world_size: int
    local_rank: int
    backend: str


@dataclass
class RankPlan:
    """A variant ready on one rank: the forward, the reference, and the rank's FLOPs."""

    prepared: Prepared
    reference: Callable[[], Any]
    flops: float
    mode: str
    close: Callable[[], None] = lambda: None
    notes: dict[str, Any] = field(default_factory=dict)


def summary(name: str) -> str:
    return SUMMARIES.get(name) or VARIANTS[name].summary


def why_not_rank(name: str, config: CaptureConfig, ctx: RankContext) -> str | None:
    """Why a context-parallel variant cannot run in this job (None: it can)."""
    if name not in MULTI_RANK_VARIANTS:
        return None
    if ctx.world_size < 2:
        return "needs a job of 2 or more ranks (--nproc 2 or more)"
    if config.seq % ctx.world_size:
        return f"--seq {config.seq} does not split into {ctx.world_size} equal shards"
    if name == "sdpa_cp":
        if config.device != "cuda":
            return "needs CUDA (torch's context_parallel runs the flash/efficient/cuDNN " \
                   "SDPA kernels, which have no CPU form); the ring variant runs on CPU"
        if config.dtype == "fp32":
            return "torch's context_parallel takes the fp16/bf16 SDPA kernels (use --dtype bf16)"
        try:
            from torch.distributed.tensor.experimental import context_parallel  # noqa: F401
        except ImportError:
            import torch

            return f"torch {torch.__version__} has no context_parallel"
    return None


def make_inputs(config: CaptureConfig, seed: int) -> tuple[Any, Any, Any]:
    from profiling.capture.runner import make_inputs as single

    return single(replace(config, seed=seed))


def make_plan(name: str, config: CaptureConfig, ctx: RankContext) -> RankPlan:
    """Prepare ``name`` on this rank (everything outside the profiled steps)."""
    if name == "ring":
        return _ring_plan(config, ctx)
    if name == "sdpa_cp":
        return _cp_plan(config, ctx)
    q, k, v = make_inputs(config, config.seed + ctx.rank)
    prepared = VARIANTS[name].prepare(config, q, k, v)
    return RankPlan(prepared=prepared, reference=lambda: reference_attention(q, k, v),
                    flops=config.flops_per_forward(), mode="data_parallel",
                    notes={"inputs_seed": config.seed + ctx.rank})


def _ring_plan(config: CaptureConfig, ctx: RankContext) -> RankPlan:
    from profiling.capture.ring import pack, ring_attention, sdpa_op, shard

    q, k, v = make_inputs(config, config.seed)
    rank, world = ctx.rank, ctx.world_size
    qs, kv = shard(q, rank, world), pack(shard(k, rank, world), shard(v, rank, world))
    op_name, block = sdpa_op(q.device.type, q.dtype)
    length = config.seq // world

    def reference() -> Any:
        return reference_attention(q, k, v)[:, :, rank * length:(rank + 1) * length]

    prepared = Prepared(forward=lambda: ring_attention(qs, kv, rank, world, block),
                        notes={"sdpa_op": op_name, "shard": [rank * length, (rank + 1) * length],
                               "p2p": "torch.distributed.batch_isend_irecv"})
    return RankPlan(prepared=prepared, reference=reference,
                    flops=config.flops_per_forward() / world, mode="context_parallel")


def _cp_plan(config: CaptureConfig, ctx: RankContext) -> RankPlan:
    """torch's own context parallelism; any refusal while setting up is a skip."""
    import torch
    import torch.nn.functional as F

    q, k, v = make_inputs(config, config.seed)
    reference = reference_attention(q, k, v)  # before the buffers are sharded in place
    stack = contextlib.ExitStack()
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.experimental import context_parallel
        from torch.distributed.tensor.experimental._attention import context_parallel_unshard

        mesh = init_device_mesh("cuda", (ctx.world_size,), mesh_dim_names=("cp",))
        stack.enter_context(context_parallel(mesh, buffers=[q, k, v], buffer_seq_dims=[2, 2, 2],
                                             no_restore_buffers={q, k, v}))
    except Exception as exc:
        stack.close()
        raise KernelUnavailable(f"torch's context_parallel did not set up here: "
                                f"{type(exc).__name__}: {exc}"[:300]) from None

    def unshard(out: Any) -> Any:
        return context_parallel_unshard(mesh, [out], [2])[0]

    prepared = Prepared(
        forward=lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        to_reference_layout=unshard,
        notes={"context_parallel": "torch.distributed.tensor.experimental.context_parallel",
               "torch": torch.__version__, "local_seq": int(q.shape[2])},
    )
    return RankPlan(prepared=prepared, reference=lambda: reference,
                    flops=config.flops_per_forward() / ctx.world_size, mode="context_parallel",
                    close=stack.close)
