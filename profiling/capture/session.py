"""A whole ``attn-tui capture``: every chosen variant, then the manifest.

A variant this machine cannot run is skipped with its reason; one that should
run and does not is failed with its reason; either way the capture goes on to
the next variant.  The manifest is written at the end, and also when the user
presses Ctrl+C: then it records what finished and marks the rest interrupted,
and no partial trace is left behind (every file is written atomically).

The caller (``tui/commands/capture.py``) passes a ``Reporter`` for the screen;
this module prints nothing itself.
"""

from __future__ import annotations

import importlib.metadata
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from profiling.capture.availability import why_not
from profiling.capture.config import MULTI_RANK_VARIANTS, VARIANT_NAMES, CaptureConfig
from profiling.capture.kernel_source import parse_kernel_repo
from profiling.capture.outputs import (
    MANIFEST,
    load_manifest,
    merge_manifest,
    prepare_out_dir,
    remove_quietly,
    variant_files,
    write_json,
)
from profiling.capture.runner import OutputsUnwritable, VariantResult, now_iso, run_variant
from profiling.errors import CaptureError


class Reporter(Protocol):
    """What the screen hears about: variant starts, phases, and results."""

    def started(self, name: str) -> None: ...
    def phase(self, name: str, phase: str) -> None: ...
    def finished(self, result: VariantResult) -> None: ...


class SilentReporter:
    def started(self, name: str) -> None:
        pass

    def phase(self, name: str, phase: str) -> None:
        pass

    def finished(self, result: VariantResult) -> None:
        pass


@dataclass
class CaptureReport:
    """The results of one capture, in variant order, and the manifest written."""

    out: Path
    results: list[VariantResult]
    manifest: dict[str, Any]
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[VariantResult]:
        return [r for r in self.results if r.status == "failed"]

    @property
    def ok(self) -> list[VariantResult]:
        return [r for r in self.results if r.status == "ok"]

    @property
    def exit_code(self) -> int:
        """1 when a variant that should run failed, or none ran; else 0."""
        return 1 if self.failed or not self.ok else 0


def select_variants(all_: bool, names: list[str] | None) -> list[str]:
    """``--variant`` names in canonical order, without repeats; all when none given."""
    if not names or all_:
        return list(VARIANT_NAMES)
    needs_ranks = [n for n in names if n in MULTI_RANK_VARIANTS]
    if needs_ranks:
        raise CaptureError(f"variant {needs_ranks[0]!r} shards the sequence across ranks",
                           "--variant", "add --nproc 2 (or more)")
    unknown = [n for n in names if n not in VARIANT_NAMES]
    if unknown:
        raise CaptureError(f"unknown variant {unknown[0]!r}", "--variant",
                           f"choose from {', '.join(VARIANT_NAMES)}")
    return [n for n in VARIANT_NAMES if n in names]


def environment(config: CaptureConfig) -> dict[str, Any]:
    """Versions and hardware that decide what a trace shows."""
    import torch

    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    env: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "gpu": None,
        "gpu_capability": None,
        "triton": version("triton"),
        "kernels": version("kernels"),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    if config.device == "cuda":
        env["gpu"] = torch.cuda.get_device_name()
        env["gpu_capability"] = "{}.{}".format(*torch.cuda.get_device_capability())
    return env


def build_manifest(config: CaptureConfig, env: dict[str, Any], gz: bool,
                   results: list[VariantResult], complete: bool) -> dict[str, Any]:
    return {
        "tool": "attn-tui capture",
        "manifest_version": 1,
        "created": now_iso(),
        "complete": complete,
        "device": config.device,
        **{key: env.get(key) for key in ("torch", "cuda", "cudnn", "gpu")},
        "environment": env,
        "shape": config.shape(),
        "dtype": config.dtype,
        "causal": config.causal,
        "config": config.as_dict(),
        "comparable": config.comparable(),
        "flops_per_forward": config.flops_per_forward(),
        "flops_formula": "4*B*H*S*S*D/2 (causal forward)" if config.causal else "4*B*H*S*S*D",
        "gzip": gz,
        "variants": {r.name: r.as_dict() for r in results},
    }


def run_capture(config: CaptureConfig, names: list[str], out: Path, gz: bool = False,
                force: bool = False, reporter: Reporter | None = None) -> CaptureReport:
    """Capture ``names`` into ``out``; always leaves a manifest that says what finished."""
    reporter = reporter or SilentReporter()
    if "kernels" in names:
        parse_kernel_repo(config.kernel_repo)  # a typo fails now, not after other variants
    prepare_out_dir(out, names, force)
    env = environment(config)
    results: list[VariantResult] = []
    interrupted = False
    unwritable: OutputsUnwritable | None = None
    current: str | None = None
    try:
        for name in names:
            current = name
            reporter.started(name)
            reason = why_not(name, config)
            if reason is not None:
                result = VariantResult(name=name, status="skipped", reason=reason,
                                       captured_at=now_iso())
            else:
                def on_phase(p: str, n: str = name) -> None:
                    reporter.phase(n, p)

                result = run_variant(config, name, out, gz, env, on_phase)
            if result.status != "ok" and force:
                # A forced rerun that did not produce new files must not leave old ones
                # that the manifest no longer describes.
                remove_quietly(variant_files(out, name))
            results.append(result)
            reporter.finished(result)
            current = None
    except KeyboardInterrupt:
        interrupted = True
        _mark_rest(results, names, current, "interrupted (Ctrl+C) while capturing",
                   "not started: capture interrupted (Ctrl+C)")
    except OutputsUnwritable as exc:
        unwritable = exc
        _mark_rest(results, names, current, f"not written: {exc.what}",
                   "not started: the output folder could not be written")
    manifest = merge_manifest(load_manifest(out), build_manifest(
        config, env, gz, results, not interrupted and unwritable is None))
    try:
        write_json(out / MANIFEST, manifest, indent=2)
    except OSError as exc:
        if unwritable is not None:
            raise unwritable from None  # the first failure says it; no manifest either
        raise CaptureError(f"cannot write {MANIFEST} ({exc.strerror or exc})", str(out),
                           "free some space or choose another --out") from None
    if unwritable is not None:
        raise OutputsUnwritable(unwritable.what, unwritable.where,
                                f"{unwritable.hint}; {MANIFEST} says what finished") from None
    report = CaptureReport(out=out, results=results, manifest=manifest, interrupted=interrupted)
    if interrupted:
        raise CaptureInterrupted(report)
    return report


def _mark_rest(results: list[VariantResult], names: list[str], current: str | None,
               current_reason: str, rest_reason: str) -> None:
    """Results for the variants a stopped capture did not finish."""
    done = {r.name for r in results}
    for name in names:
        if name not in done:
            why = current_reason if name == current else rest_reason
            results.append(VariantResult(name=name, status="interrupted", reason=why))


class CaptureInterrupted(KeyboardInterrupt):
    """Ctrl+C during a capture, after the manifest was written; carries the report."""

    def __init__(self, report: CaptureReport) -> None:
        super().__init__("capture interrupted")
        self.report = report
