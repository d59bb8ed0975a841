"""What a capture measures: device, shape, dtype and profiler schedule.

One frozen ``CaptureConfig`` travels from the command line to every variant and
into every output file (the trace's ``attn_tui`` key, the manifest), so a trace
alone says what produced it.  Defaults follow the blog post the project comes
from on a GPU (batch 8, heads 16, seq 1024, head_dim 64, bf16, causal) and are
smaller on a CPU so that a CPU capture takes seconds, not minutes.

No torch at import time: ``import profiling.capture.config`` works on a laptop
without torch (DESIGN.md section 2).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from profiling.errors import CaptureError

VARIANT_NAMES: tuple[str, ...] = (
    "naive",
    "inplace",
    "sdpa_math",
    "sdpa_flash",
    "sdpa_efficient",
    "sdpa_cudnn",
    "kernels",
    "flex",
)
"""Every variant, in the order they are captured and shown (DESIGN.md section 4)."""

MULTI_RANK_VARIANTS: tuple[str, ...] = ("ring", "sdpa_cp")
"""Variants that need a job of several ranks (``capture --nproc N``, N >= 2): the
sequence sharded across ranks (context parallelism).  ``ring``: this project's ring
of send/recv around SDPA (any backend); ``sdpa_cp``: torch's own
``context_parallel`` (CUDA).  Under ``--nproc`` the single-device variants run too,
data parallel: each rank its own batch."""

ALL_VARIANT_NAMES: tuple[str, ...] = VARIANT_NAMES + MULTI_RANK_VARIANTS

REGION = "attn_fwd"
"""The ``record_function`` name around each forward: one region per active step."""

DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}

GPU_DEFAULTS: dict[str, Any] = {
    "batch": 8, "heads": 16, "seq": 1024, "head_dim": 64, "dtype": "bf16"}
CPU_DEFAULTS: dict[str, Any] = {
    "batch": 2, "heads": 4, "seq": 256, "head_dim": 64, "dtype": "fp32"}

TOLERANCES: dict[str, tuple[float, float]] = {
    # (atol, rtol) against an fp32 math reference.  bf16 keeps 8 mantissa bits, so
    # the naive variant's rounded bf16 scores alone move outputs by about 1e-2.
    "bf16": (5e-2, 5e-2),
    "fp16": (1e-2, 1e-2),
    # fp32 kernels differ from the reference only by summation order.
    "fp32": (2e-4, 2e-4),
}


@dataclass(frozen=True)
class CaptureConfig:
    """Everything that decides what a capture measures (not where it is written)."""

    device: str
    batch: int
    heads: int
    seq: int
    head_dim: int
    dtype: str
    causal: bool = True
    wait: int = 1
    warmup: int = 1
    active: int = 3
    warmup_iters: int = 3
    timed_iters: int = 20
    seed: int = 0
    kernel_repo: str | None = None

    @property
    def steps(self) -> int:
        """Profiler steps run: one schedule cycle (wait + warmup + active)."""
        return self.wait + self.warmup + self.active

    @property
    def tolerance(self) -> tuple[float, float]:
        return TOLERANCES[self.dtype]

    def flops_per_forward(self) -> float:
        """FLOPs of one attention forward, causal-aware.

        Two matmuls of 2*B*H*S*S*D FLOPs each; a causal mask halves the useful work,
        which is what fused kernels actually do (4*B*H*S*S*D/2).
        """
        full = 4.0 * self.batch * self.heads * self.seq * self.seq * self.head_dim
        return full / 2.0 if self.causal else full

    def shape(self) -> dict[str, int]:
        return {"batch": self.batch, "heads": self.heads, "seq": self.seq,
                "head_dim": self.head_dim}

    def as_dict(self) -> dict[str, Any]:
        """The config as JSON, stored in every trace and in the manifest."""
        data = asdict(self)
        data["region"] = REGION
        data["layout"] = "[batch, heads, seq, head_dim]"
        return data

    def comparable(self) -> dict[str, Any]:
        """The fields two captures must share for their results to sit in one manifest."""
        data = self.as_dict()
        for key in ("kernel_repo", "timed_iters", "warmup_iters"):
            data.pop(key, None)
        return data


def resolve_device(requested: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` must exist."""
    if requested not in ("auto", "cuda", "cpu"):
        raise CaptureError(f"unknown device {requested!r}", "--device", "use auto, cuda or cpu")
    if requested == "cpu":
        return "cpu"
    try:
        import torch
    except ImportError:
        raise CaptureError(
            "torch is not installed", "capture", "pip install 'attn-tui[capture]'"
        ) from None
    has_cuda = torch.cuda.is_available()
    if requested == "cuda" and not has_cuda:
        raise CaptureError(
            "no CUDA device (torch.cuda.is_available() is False)",
            "--device cuda",
            "use --device cpu or auto",
        )
    return "cuda" if has_cuda else "cpu"


def make_config(device: str, **options: Any) -> CaptureConfig:
    """Build a config for a resolved device; options left as None take its defaults."""
    defaults = GPU_DEFAULTS if device == "cuda" else CPU_DEFAULTS
    values: dict[str, Any] = {
        key: (options.get(key) if options.get(key) is not None else value)
        for key, value in defaults.items()
    }
    if values["dtype"] not in DTYPE_NAMES:
        raise CaptureError(f"unknown dtype {values['dtype']!r}", "--dtype",
                           "use bf16, fp16 or fp32")
    extra = {key: options[key] for key in
             ("wait", "warmup", "active", "warmup_iters", "timed_iters", "seed", "kernel_repo")
             if options.get(key) is not None}
    config = CaptureConfig(device=device, **values, **extra)
    if config.active < 1:
        raise CaptureError("the profiler needs at least one active step", "--active",
                           "use 1 or more")
    return config
