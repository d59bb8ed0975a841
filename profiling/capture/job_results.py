"""A finished job's ranks, read back: one variant result and each rank's line.

Each rank reports through ``rank<k>.status.json`` (``rank_entry.py``).  A rank
that died without a word (killed, ``os._exit``, a native crash) is found in the
elastic agent's failure summary (each failed rank's exit code) and its
own stderr log.  The job is ``ok`` only when every rank is; otherwise it failed,
at the first failing rank, whose number and reason the manifest keeps.

Job figures, per forward: ``ms_per_forward`` is the slowest rank's (a step of a
job ends when its last rank does); ``tflops`` is the job's, every rank's FLOPs
over that time; counts (kernels, Memcpy) are rank 0's, each rank's own are in its
line.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

from profiling.capture.config import MULTI_RANK_VARIANTS, CaptureConfig
from profiling.capture.outputs import oracle_path, rank_stem, trace_path
from profiling.capture.runner import VariantResult

RANK_FIELDS = ("status", "reason", "ms_per_forward", "device_ms_per_forward", "tflops",
               "kernels_per_forward", "memcpy_per_forward", "memset_per_forward",
               "attn_fwd_regions", "max_abs_error", "trace", "key_averages", "seconds")


def read_status(staging: Path, rank: int) -> dict[str, Any] | None:
    try:
        data = json.loads((staging / f"rank{rank}.status.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def rank_files(folder: Path, name: str, rank: int, gz: bool) -> list[Path]:
    stem = rank_stem(name, rank)
    return [trace_path(folder, stem, gz), oracle_path(folder, stem)]


def precheck(name: str, config: CaptureConfig, nproc: int) -> str | None:
    """A reason known before starting any rank (saves a job start); None: launch."""
    from profiling.capture.rank_plans import RankContext, why_not_rank

    if name in MULTI_RANK_VARIANTS:
        ctx = RankContext(rank=0, world_size=nproc, local_rank=0,
                          backend="nccl" if config.device == "cuda" else "gloo")
        return why_not_rank(name, config, ctx)
    if config.device == "cpu":
        from profiling.capture.availability import why_not

        return why_not(name, config)
    return None  # the ranks ask their own GPUs


def exit_codes(staging: Path) -> dict[int, int]:
    """Each failed rank's exit code from the agent's failure summary (negative: a signal)."""
    try:
        log = (staging / "agent.log").read_text(errors="replace")
    except OSError:
        return {}
    pairs = re.findall(r"rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)", log)
    return {int(rank): int(code) for rank, code in pairs}


def describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def stderr_tail(staging: Path, rank: int) -> str:
    """The last meaningful line a rank wrote to stderr (torchrun --redirects)."""
    for path in sorted((staging / "logs").glob(f"**/attempt_*/{rank}/stderr.log")):
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith(("USDT:", "STAGE:", "INFO:"))]
        if lines:
            return lines[-1][:300]
    return ""


def combine(name: str, staging: Path, nproc: int, returncode: int | None,
            gz: bool) -> tuple[VariantResult, dict[str, Any]]:
    """The variant's job result and its manifest extras (ranks, failed rank, files)."""
    statuses = [read_status(staging, k) or {} for k in range(nproc)]
    results = [s.get("result") if isinstance(s.get("result"), dict) else None for s in statuses]
    lines = [{"rank": k, **{f: (r or {}).get(f) for f in RANK_FIELDS}}
             for k, r in enumerate(results)]
    failed = [k for k, r in enumerate(results) if r and r["status"] in ("failed", "interrupted")]
    missing = [k for k, r in enumerate(results) if r is None]
    failed_rank: int | None = None
    codes = exit_codes(staging) if missing else {}
    # A rank that died without a word (crashed, killed by the kernel) while the others
    # were still reporting is the cause; one the agent stopped (SIGTERM) is not.
    died = [k for k in missing if k in codes and codes[k] != -signal.SIGTERM]
    if died:
        failed = []
    if failed:
        # The first to fail is the cause; the others failed because it went (a closed
        # connection, a collective that timed out).
        failed_rank = min(failed, key=lambda k: (statuses[k].get("ended_at") or 0.0, k))
        reason = f"rank {failed_rank}: {results[failed_rank]['reason']}"  # type: ignore[index]
    elif missing:
        failed_rank = died[0] if died else missing[0]
        tail = stderr_tail(staging, failed_rank)
        how = describe_exit(codes.get(failed_rank))
        why = f"ended without a result ({how})" + (f": {tail}" if tail else "")
        reason = f"rank {failed_rank}: {why}"[:400]
        lines[failed_rank].update(status="failed", reason=why[:400])
    for k, r in enumerate(results):
        if r and r["status"] == "failed" and k != failed_rank and lines[k]["status"] == "failed":
            lines[k].update(status="stopped", reason=f"after rank {failed_rank} failed: "
                                                     f"{lines[k]['reason']}"[:400])
    for k in missing:
        if k != failed_rank:
            lines[k].update(status="stopped", reason=f"stopped when rank {failed_rank} failed")
    for k, r in enumerate(results):
        if r and r["status"] == "ok" and failed_rank is not None:
            lines[k]["status"] = "stopped"
            lines[k]["reason"] = f"finished, files discarded: rank {failed_rank} failed"
            lines[k]["trace"] = lines[k]["key_averages"] = None
    extras: dict[str, Any] = {"ranks": lines, "failed_rank": failed_rank,
                              "environment": statuses[0].get("environment"),
                              "backend": statuses[0].get("backend"), "world_size": nproc}
    first = results[0] or {}
    result = VariantResult(name=name, status="failed", captured_at=first.get("captured_at"))
    if failed_rank is not None:
        result.reason = reason
        return result, extras
    kinds = {r["status"] for r in results if r}
    if kinds == {"skipped"}:
        result.status, result.reason = "skipped", first.get("reason")
        return result, extras
    if kinds != {"ok"}:
        result.reason = "the ranks disagree: " + ", ".join(
            f"rank {k} {r['status']}" for k, r in enumerate(results) if r)
        return result, extras
    _aggregate(result, [r for r in results if r])
    extras["traces"] = [trace_path(Path(), rank_stem(name, k), gz).name for k in range(nproc)]
    extras["key_averages_files"] = [oracle_path(Path(), rank_stem(name, k)).name
                                    for k in range(nproc)]
    if returncode:
        result.notes["agent_exit_code"] = returncode
    return result, extras


def _aggregate(result: VariantResult, ranks: list[dict[str, Any]]) -> None:
    """Job figures from every rank's (all ok)."""
    first = ranks[0]
    ms = [float(r["ms_per_forward"]) for r in ranks]
    slowest = max(ms)
    flops = sum(float(r["tflops"]) * 1e12 * float(r["ms_per_forward"]) * 1e-3 for r in ranks)
    result.status = "ok"
    result.ms_per_forward = slowest
    device = [r["device_ms_per_forward"] for r in ranks if r.get("device_ms_per_forward")]
    result.device_ms_per_forward = max(device) if device else None
    result.tflops = flops / (slowest * 1e-3) / 1e12
    for key in ("kernels_per_forward", "memcpy_per_forward", "memset_per_forward",
                "attn_fwd_regions", "tolerance", "seconds"):
        setattr(result, key, first.get(key))
    result.max_abs_error = max(float(r["max_abs_error"]) for r in ranks)
    result.notes = {**(first.get("notes") or {}),
                    "ms_per_forward_by_rank": ms,
                    "slowest_rank": ms.index(slowest)}
