"""Capture one variant on one rank of a job: the single-device steps, per rank.

The order is ``runner.run_variant``'s (prepare, warm up, check, time, profile,
write) so a rank's trace means what a one-device trace means.  Two additions:
every profiled step ends with a one-element ``all_reduce`` (in a ``step_sync``
region, outside ``attn_fwd``), the step-end synchronisation a data-parallel job
has, so each rank's trace holds the collective and how long that rank waited in
it; and the ranks meet at a barrier before timing, so they time the same seconds.

Files go to the job's staging folder as ``<variant>.rank<k>.*``; the launcher
(``job.py``) moves them into the output folder only when every rank finished, so
a failed job leaves no partial trace.

``ATTN_TUI_CAPTURE_FAIL_RANK=k`` makes rank k fail (for tests of the failure
path): ``ATTN_TUI_CAPTURE_FAIL`` says how (``raise``, ``oom``, ``exit``: the process
dies without a word, ``hang``), ``ATTN_TUI_CAPTURE_FAIL_VARIANT`` for which variant (all).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from profiling.capture.availability import why_not
from profiling.capture.config import MULTI_RANK_VARIANTS, CaptureConfig
from profiling.capture.kernel_source import KernelUnavailable
from profiling.capture.outputs import rank_stem
from profiling.capture.rank_plans import RankContext, RankPlan, make_plan, summary, why_not_rank
from profiling.capture.runner import (
    Phase,
    VariantFailed,
    VariantResult,
    _write,
    check_output,
    now_iso,
    out_of_memory,
    profile_steps,
    time_forward,
)

STEP_SYNC = "step_sync"


def inject_failure(name: str, rank: int) -> None:
    """Fail here when the environment asks this rank to (tests of the failure path)."""
    if os.environ.get("ATTN_TUI_CAPTURE_FAIL_RANK") != str(rank):
        return
    only = os.environ.get("ATTN_TUI_CAPTURE_FAIL_VARIANT")
    if only and only != name:
        return
    how = os.environ.get("ATTN_TUI_CAPTURE_FAIL", "raise")
    if how == "exit":
        os._exit(3)
    if how == "hang":  # for Ctrl+C tests: a rank that never finishes
        time.sleep(3600)
    if how == "oom":
        import torch

        raise torch.OutOfMemoryError(f"CUDA out of memory (injected on rank {rank})")
    raise RuntimeError(f"injected failure on rank {rank} (ATTN_TUI_CAPTURE_FAIL_RANK)")


def step_sync(config: CaptureConfig) -> Any:
    """The step-end collective: a one-element all_reduce on the job's backend."""
    import torch
    import torch.distributed as dist
    from torch.profiler import record_function

    flag = torch.ones(1, device=config.device)

    def sync() -> None:
        with record_function(STEP_SYNC):
            dist.all_reduce(flag)

    return sync


def _sync_device(config: CaptureConfig) -> None:
    if config.device == "cuda":
        import torch

        torch.cuda.synchronize()


def run_rank_variant(config: CaptureConfig, name: str, ctx: RankContext, staging: Path,
                     gz: bool, environment: dict[str, Any], job: dict[str, Any],
                     phase: Phase = lambda _p: None) -> VariantResult:
    """Capture ``name`` on this rank; failures become a failed (or skipped) result."""
    import torch
    import torch.distributed as dist

    began = time.perf_counter()
    result = VariantResult(name=name, status="failed", captured_at=now_iso())
    atol, rtol = config.tolerance
    result.tolerance = {"atol": atol, "rtol": rtol}
    plan: RankPlan | None = None
    try:
        reason = (why_not_rank(name, config, ctx) if name in MULTI_RANK_VARIANTS
                  else why_not(name, config))
        if reason is not None:
            result.status, result.reason = "skipped", reason
            return result
        with torch.no_grad():
            phase("prepare")
            inject_failure(name, ctx.rank)
            try:
                plan = make_plan(name, config, ctx)
            except KernelUnavailable as exc:
                result.status, result.reason = "skipped", str(exc)
                return result
            result.notes = {"mode": plan.mode, **plan.notes, **plan.prepared.notes}
            phase("warm-up")
            output = None
            for _ in range(max(1, config.warmup_iters)):
                output = plan.prepared.forward()
            _sync_device(config)
            phase("check")
            assert output is not None  # warmup_iters >= 1 ran the forward
            got = plan.prepared.to_reference_layout(output)
            result.max_abs_error = check_output(got, plan.reference(), config)
            del got, output
            phase("time")
            dist.barrier()
            result.ms_per_forward = time_forward(plan.prepared.forward, config)
            result.tflops = plan.flops / (result.ms_per_forward * 1e-3) / 1e12
            phase("profile")
            dist.barrier()
            prof = profile_steps(plan.prepared.forward, config, after_forward=step_sync(config))
        phase("write")
        job = {**job, "summary": summary(name), "mode": plan.mode}
        _write(config, name, staging, gz, prof, plan.prepared, result, environment,
               stem=rank_stem(name, ctx.rank), job=job)
        result.status = "ok"
    except VariantFailed as exc:
        result.reason = str(exc)
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        result.reason = f"{exc.__class__.__name__}: {lines[0] if lines else ''}"[:400]
        if out_of_memory(exc):
            result.reason = f"out of memory: {result.reason}"[:400]
    finally:
        if plan is not None:
            plan.close()
        result.seconds = round(time.perf_counter() - began, 3)
    return result
