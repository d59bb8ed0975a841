"""Capture one variant: prepare, warm up, check, time, profile, write.

The order matters for what the trace means.  Everything a user would not pay
for on every forward (building the mask, loading a kernel, ``torch.compile``,
cuDNN's plan, the first-call allocator growth) happens in the warm-up, outside
the profiler.  The output is then checked against an fp32 math reference, so a
fast variant that computes the wrong thing fails loudly instead of topping the
table.  Timing runs outside the profiler too (its overhead would inflate small
kernels).  Finally ``torch.profiler`` runs one schedule cycle (wait, warmup,
active) with ``record_function("attn_fwd")`` around each forward, so the trace
holds one ``attn_fwd`` region per active step inside ``ProfilerStep#N``.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from profiling.capture.config import DTYPE_NAMES, REGION, CaptureConfig
from profiling.capture.kernel_source import KernelUnavailable
from profiling.capture.outputs import (
    oracle_path,
    oracle_rows,
    read_json,
    remove_quietly,
    trace_path,
    write_json,
)
from profiling.capture.trace_counts import count_file
from profiling.capture.variants import VARIANTS, Prepared, reference_attention
from profiling.errors import CaptureError

Phase = Callable[[str], None]


class VariantFailed(Exception):
    """A variant that should run did not: wrong answer, crash, or a trace without regions."""


@dataclass
class VariantResult:
    """One variant's line in the manifest and in the end-of-capture table."""

    name: str
    status: str
    reason: str | None = None
    ms_per_forward: float | None = None
    device_ms_per_forward: float | None = None
    tflops: float | None = None
    kernels_per_forward: float | None = None
    memcpy_per_forward: float | None = None
    memset_per_forward: float | None = None
    attn_fwd_regions: int | None = None
    max_abs_error: float | None = None
    tolerance: dict[str, float] | None = None
    trace: str | None = None
    key_averages: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    captured_at: str | None = None
    seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("name")
        return data


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def make_inputs(config: CaptureConfig) -> tuple[Any, Any, Any]:
    """Seeded q, k, v of shape [batch, heads, seq, head_dim] on the capture device."""
    import torch

    dtype = getattr(torch, DTYPE_NAMES[config.dtype])
    gen = torch.Generator(device="cpu").manual_seed(config.seed)
    shape = (config.batch, config.heads, config.seq, config.head_dim)
    return tuple(torch.randn(shape, generator=gen).to(device=config.device, dtype=dtype)
                 for _ in range(3))  # type: ignore[return-value]


def _sync(config: CaptureConfig) -> None:
    if config.device == "cuda":
        import torch

        torch.cuda.synchronize()


def check_output(out: Any, reference: Any, config: CaptureConfig) -> float:
    """Max abs error against the fp32 reference; VariantFailed when out of tolerance."""
    import torch

    atol, rtol = config.tolerance
    got = out.float()
    if got.shape != reference.shape:
        raise VariantFailed(f"output shape {tuple(got.shape)} != {tuple(reference.shape)}")
    diff = (got - reference).abs()
    if not torch.isfinite(got).all():
        raise VariantFailed("output holds NaN or inf")
    err = float(diff.max())
    excess = diff - (atol + rtol * reference.abs())
    if float(excess.max()) > 0:
        where = tuple(int(i) for i in torch.unravel_index(excess.argmax(), excess.shape))
        raise VariantFailed(
            f"wrong answer: max abs error {err:.3g} vs fp32 reference exceeds "
            f"atol={atol:g} + rtol={rtol:g}*|ref| at {where}"
        )
    return err


def time_forward(forward: Callable[[], Any], config: CaptureConfig) -> float:
    """Milliseconds per forward over ``timed_iters`` calls, outside the profiler."""
    import torch

    n = max(1, config.timed_iters)
    if config.device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(n):
            forward()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / n
    begin = time.perf_counter()
    for _ in range(n):
        forward()
    return (time.perf_counter() - begin) * 1e3 / n


def profile_steps(forward: Callable[[], Any], config: CaptureConfig,
                  after_forward: Callable[[], Any] | None = None) -> Any:
    """One schedule cycle of torch.profiler; every forward inside ``attn_fwd``.

    ``after_forward`` runs in each step after the region (a job's step-end collective)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    activities = [ProfilerActivity.CPU]
    if config.device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    plan = schedule(wait=config.wait, warmup=config.warmup, active=config.active, repeat=1)
    with warnings.catch_warnings():
        # torch warns that events do not accumulate across cycles; there is one cycle.
        warnings.filterwarnings("ignore", message=".*Profiler clears events at the end")
        with profile(activities=activities, schedule=plan, record_shapes=True) as prof:
            for _ in range(config.steps):
                with record_function(REGION):
                    forward()
                if after_forward is not None:
                    after_forward()
                if config.device == "cuda":
                    torch.cuda.synchronize()
                prof.step()
    return prof


def run_variant(config: CaptureConfig, name: str, out: Path, gz: bool,
                environment: dict[str, Any], phase: Phase = lambda _p: None) -> VariantResult:
    """Capture ``name``; errors a variant can cause become a failed or skipped result."""
    import torch

    began = time.perf_counter()
    result = VariantResult(name=name, status="failed", captured_at=now_iso())
    atol, rtol = config.tolerance
    result.tolerance = {"atol": atol, "rtol": rtol}
    try:
        with torch.no_grad():
            q, k, v = make_inputs(config)
            phase("prepare")
            try:
                prepared = VARIANTS[name].prepare(config, q, k, v)
            except KernelUnavailable as exc:
                result.status, result.reason = "skipped", str(exc)
                return result
            result.notes = dict(prepared.notes)
            phase("warm-up" if name != "flex" else "compile + warm-up")
            output = None
            for _ in range(max(1, config.warmup_iters)):
                output = prepared.forward()
            _sync(config)
            phase("check")
            reference = reference_attention(q, k, v)
            assert output is not None  # warmup_iters >= 1 ran the forward
            result.max_abs_error = check_output(prepared.to_reference_layout(output), reference,
                                                config)
            del reference, output
            phase("time")
            result.ms_per_forward = time_forward(prepared.forward, config)
            result.tflops = config.flops_per_forward() / (result.ms_per_forward * 1e-3) / 1e12
            phase("profile")
            prof = profile_steps(prepared.forward, config)
        phase("write")
        _write(config, name, out, gz, prof, prepared, result, environment)
        result.status = "ok"
    except VariantFailed as exc:
        result.reason = str(exc)
    except OutputsUnwritable:
        raise  # the folder, not the variant: the capture stops (session.run_capture)
    except Exception as exc:
        # Backend refusals, compile errors (torch and Triton raise many types):
        # this variant fails loudly, and the capture goes on to the next one.
        lines = str(exc).strip().splitlines()
        result.reason = f"{exc.__class__.__name__}: {lines[0] if lines else ''}"[:400]
        if out_of_memory(exc):  # this machine cannot run it at this shape: skipped
            result.status = "skipped"
            shape = "B={batch} H={heads} S={seq} D={head_dim}".format(**config.shape())
            result.reason = f"out of memory at {shape} {config.dtype}: {result.reason}"[:400]
            _free_device_memory(config)
    finally:
        result.seconds = round(time.perf_counter() - began, 3)
    return result


class OutputsUnwritable(CaptureError):
    """A variant's files could not be written (disk full, read-only, gone)."""


def out_of_memory(exc: BaseException) -> bool:
    """torch's OutOfMemoryError (any spelling across versions and devices)."""
    import torch

    types = tuple(t for t in (getattr(torch, "OutOfMemoryError", None),
                              getattr(torch.cuda, "OutOfMemoryError", None)) if t is not None)
    return isinstance(exc, types) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


def _free_device_memory(config: CaptureConfig) -> None:
    if config.device == "cuda":
        import gc

        import torch

        gc.collect()
        torch.cuda.empty_cache()


def _write(config: CaptureConfig, name: str, out: Path, gz: bool, prof: Any,
           prepared: Prepared, result: VariantResult, environment: dict[str, Any],
           stem: str | None = None, job: dict[str, Any] | None = None) -> None:
    """Export, count, annotate and write the trace and the oracle (atomically).

    A rank of a job (``capture --nproc``) writes ``<stem>`` files (``<variant>.rank<k>``)
    and its ``job`` description beside the config; torch fills ``distributedInfo``."""
    stem = stem or name
    with tempfile.TemporaryDirectory(prefix="attn-tui-capture-") as tmp:
        raw = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(raw))
        trace = read_json(raw)
        counts = count_file(raw, REGION)  # the trace engine's count, as ``stats`` gives it
    result.attn_fwd_regions = len(counts.instances)
    if result.attn_fwd_regions != config.active:
        raise VariantFailed(f"trace holds {result.attn_fwd_regions} {REGION} regions, "
                            f"expected one per active step ({config.active})")
    if config.device == "cuda":
        result.kernels_per_forward = counts.per_instance("kernels")
        result.memcpy_per_forward = counts.per_instance("memcpys")
        result.memset_per_forward = counts.per_instance("memsets")
        device_ns = counts.per_instance("device_ns")
        result.device_ms_per_forward = device_ns / 1e6 if device_ns is not None else None
        if not result.kernels_per_forward:
            raise VariantFailed(f"no GPU kernels recorded inside {REGION} "
                                "(is CUPTI available to torch.profiler?)")
        if counts.memcpy_names:
            result.notes["memcpy_names"] = list(counts.memcpy_names)
    else:
        result.kernels_per_forward = result.memcpy_per_forward = result.memset_per_forward = 0.0
    trace["attn_tui"] = {
        "tool": "attn-tui capture",
        "variant": name,
        "summary": VARIANTS[name].summary if name in VARIANTS else (job or {}).get("summary"),
        "created": result.captured_at,
        "config": config.as_dict(),
        "environment": environment,
        "notes": result.notes,
        "per_forward": {
            "ms": result.ms_per_forward,
            "tflops": result.tflops,
            "kernels": result.kernels_per_forward,
            "memcpy": result.memcpy_per_forward,
        },
    }
    if job is not None:
        trace["attn_tui"]["job"] = job
        if not isinstance(trace.get("distributedInfo"), dict):  # torch did not: say it anyway
            trace["distributedInfo"] = {k: job[k] for k in ("backend", "rank", "world_size")}
    final_trace, final_oracle = trace_path(out, stem, gz), oracle_path(out, stem)
    try:
        write_json(final_oracle, oracle_rows(prof), indent=1)
        write_json(final_trace, trace, gz=gz)
    except BaseException as exc:
        # Never leave a trace without its oracle (or the reverse) from this run.
        remove_quietly([final_trace, final_oracle])
        if isinstance(exc, OSError):
            raise OutputsUnwritable(
                f"cannot write {name}'s files ({exc.strerror or exc})", str(out),
                "free some space or choose another --out",
            ) from None
        raise
    remove_quietly([trace_path(out, stem, not gz)])  # a stale trace of the other format
    result.trace, result.key_averages = final_trace.name, final_oracle.name
