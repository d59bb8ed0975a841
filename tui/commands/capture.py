"""``attn-tui capture``: profile attention variants, with a progress display and a summary.

The work lives in ``profiling.capture``; this module turns arguments into a
config, shows progress with Rich while variants run, and ends with one table of
every variant (status, ms per forward, achieved TFLOP/s, kernels and Memcpy per
forward) so a person sees at a glance what the traces will show.  torch is
imported only through ``profiling.capture``, inside ``run``, after a check that
it is there at all (without it, one line says what to install: exit 2).

torch's profiler writes log lines of its own (``USDT: ... profiler_start``) from
C++ straight to file descriptor 2; ``native_stderr_filtered`` keeps those out of
the capture's output and passes any other native message through.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from profiling.errors import CaptureError
from tui.fmt import fmt_time
from tui.names import visible

STATUS_STYLE = {"ok": "green", "skipped": "yellow", "failed": "bold red", "interrupted": "magenta"}


class RichReporter:
    """Progress bar over variants; one line per finished variant above it."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.task = progress.add_task("capture", total=total, variant="", phase="starting")

    def started(self, name: str) -> None:
        self.progress.update(self.task, variant=name, phase="checking")

    def phase(self, name: str, phase: str) -> None:
        self.progress.update(self.task, variant=name, phase=phase)

    def finished(self, result: Any) -> None:
        line = Text(f"{result.status:>7}", style=STATUS_STYLE.get(result.status, ""))
        line.append(f" {result.name:<15}")  # reasons hold brackets ('attn-tui[capture]')
        if result.status == "ok":
            line.append(f" {fmt_time(result.ms_per_forward, 'ms', digits=4)}/forward")
        if result.reason:
            line.append(f"  {visible(result.reason)}")
        self.progress.console.print(line, highlight=False)
        self.progress.advance(self.task)


NATIVE_NOISE = re.compile(rb"^(USDT|STAGE|INFO):\d{4}-\d\d-\d\d [\d:]+ \d+:\d+ \S+:\d+\] ")
"""Kineto's informational lines (``USDT:... SyncActivityProfilerHandler.cpp:52]
profiler_start``): printed on every profiler start and stop whatever its log level."""


@contextlib.contextmanager
def native_stderr_filtered() -> Iterator[None]:
    """Send what C/C++ code writes to fd 2 to a temp file meanwhile; afterwards pass
    on every line but Kineto's informational ones.  Python's own ``sys.stderr``
    output still appears at once (Rich's progress display routes it); only native
    writes are held back, and they are replayed even when the capture fails."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield  # no usable fd 2 (embedded, closed): nothing to filter
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = [ln for ln in held.read().splitlines(keepends=True)
                    if not NATIVE_NOISE.match(ln)]
            if kept:
                with contextlib.suppress(OSError, ValueError):
                    sys.stderr.flush()
                    os.write(2, b"".join(kept))


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _fmt_tflops(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value >= 1 else f"{value:.3f}"


def _note(result: Any) -> str:
    if result.reason:
        return result.reason
    source = result.notes.get("kernel_source") if result.notes else None
    if source:
        text = source.get("loaded", "")
        if source.get("fallback_reason"):
            text += f"; fallback: {source['fallback_reason']}"
        return text
    names = result.notes.get("memcpy_names") if result.notes else None
    return ", ".join(names) if names else ""


def summary_table(report: Any) -> Table:
    """The end-of-capture table: every variant, what it cost, what it launched."""
    manifest = report.manifest
    shape = manifest["shape"]
    where = manifest.get("gpu") or f"CPU ({manifest['environment'].get('machine')})"
    job = manifest.get("job")
    if job:
        where += f" ×{job['world_size']} ranks ({job['backend']})"
    title = (f"attn-tui capture: {where}, torch {manifest['torch']}, "
             f"B={shape['batch']} H={shape['heads']} S={shape['seq']} D={shape['head_dim']} "
             f"{manifest['dtype']}, causal")
    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("variant", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("ms/fwd", justify="right", no_wrap=True)
    table.add_column("TFLOP/s", justify="right", no_wrap=True)
    table.add_column("kernels/fwd", justify="right", no_wrap=True)
    table.add_column("Memcpy/fwd", justify="right", no_wrap=True)
    if job:
        table.add_column("ms/fwd by rank", no_wrap=True)
    for r in report.results:
        cells: list[Text | str] = [
            Text(r.name), Text(r.status, style=STATUS_STYLE.get(r.status, "")),
            _fmt(r.ms_per_forward, ".3f"), _fmt_tflops(r.tflops),
            _fmt(r.kernels_per_forward, "g"), _fmt(r.memcpy_per_forward, "g"),
        ]
        if job:
            by_rank = (r.notes or {}).get("ms_per_forward_by_rank") or []
            cells.append(" ".join(format(ms, ".3f") for ms in by_rank) or "-")
        table.add_row(*cells)
    return table


def time_base(manifest: dict[str, Any]) -> str:
    """The line under the table that says what ms/fwd and TFLOP/s are measured on: wall
    time per forward, not the summed kernel time that ``attn-tui compare`` divides by,
    so the two TFLOP/s differ (most for short kernels with launch gaps between them)."""
    iters = (manifest.get("config") or {}).get("timed_iters", 20)
    clock = "CUDA events" if manifest.get("device") == "cuda" else "perf_counter"
    if manifest.get("job"):
        return (f"ms/fwd: the slowest rank's wall time per forward ({clock}, mean of {iters} "
                "forwards outside the profiler); TFLOP/s: every rank's FLOPs over that time.")
    return (f"ms/fwd: wall time per forward ({clock}, mean of {iters} forwards outside the "
            "profiler); TFLOP/s from it. attn-tui compare divides by summed kernel time instead.")


def summary_notes(report: Any) -> Text:
    """One line per variant with something to say (why skipped, where a kernel came from).

    Below the table rather than in it: reasons are sentences, and a column of them
    would crush the numbers on an 80-column terminal.
    """
    text = Text()
    for r in report.results:
        note = _note(r)
        if note:
            text.append(f"  {r.name}: ", style=STATUS_STYLE.get(r.status, ""))
            text.append(visible(note) + "\n")
    return text


def build_config(args: argparse.Namespace) -> Any:
    from profiling.capture.config import make_config, resolve_device

    device = resolve_device(args.device)
    return make_config(
        device,
        batch=args.batch, heads=args.heads, seq=args.seq, head_dim=args.head_dim,
        dtype=args.dtype, wait=args.wait, warmup=args.warmup, active=args.active,
        kernel_repo=args.kernel_repo,
    )


def require_torch() -> None:
    """Every capture path needs torch: without it, say what to install (exit 2)."""
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name not in (None, "torch") and not str(exc.name).startswith("torch."):
            raise CaptureError(f"torch does not import: {exc}", "",
                               "reinstall it: pip install 'attn-tui[capture]'") from None
        raise CaptureError("torch is not installed, and capturing needs it", "",
                           "pip install 'attn-tui[capture]'") from None
    except ImportError as exc:
        raise CaptureError(f"torch does not import: {exc}", "",
                           "reinstall it: pip install 'attn-tui[capture]'") from None


def run(args: argparse.Namespace) -> int:
    require_torch()
    from profiling.capture.session import CaptureInterrupted, run_capture, select_variants

    nproc = getattr(args, "nproc", None)
    if nproc:
        from profiling.capture.job import select_job_variants

        names = select_job_variants(bool(args.all), args.variant)
    else:
        names = select_variants(bool(args.all), args.variant)
    config = build_config(args)
    out = Path(args.out)
    console = Console(stderr=False, highlight=False)
    progress = Progress(
        SpinnerColumn(), TextColumn("[bold]{task.fields[variant]:<15}"),
        TextColumn("{task.fields[phase]:<18}"), BarColumn(),
        TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
        console=console, transient=True,
    )
    try:
        with native_stderr_filtered(), progress:
            reporter = RichReporter(progress, len(names))
            if nproc:
                from profiling.capture.job import run_job_capture

                report = run_job_capture(config, names, out, nproc, gz=args.gzip,
                                         force=args.force, reporter=reporter)
            else:
                report = run_capture(config, names, out, gz=args.gzip, force=args.force,
                                     reporter=reporter)
    except CaptureInterrupted as stop:
        console.print(summary_table(stop.report))
        console.print(Text(time_base(stop.report.manifest), style="dim"))
        console.print(summary_notes(stop.report), end="")
        manifest = visible(str(out / "manifest.json"))
        console.print(Text(f"manifest: {manifest} records what finished"))
        raise
    console.print(summary_table(report))
    console.print(Text(time_base(report.manifest), style="dim"))
    console.print(summary_notes(report), end="")
    written = sum(len(report.manifest["variants"][r.name].get("traces") or [r.trace])
                  for r in report.ok)
    folder = visible(str(out))
    console.print(Text(f"{written} trace(s), their key_averages oracles and manifest.json "
                       f"in {folder}/"))
    if written:
        console.print(Text(f"open them: attn-tui open {folder}"))
    if report.failed:
        names_failed = ", ".join(r.name for r in report.failed)
        print(f"attn-tui capture: {len(report.failed)} variant(s) failed: {names_failed}",
              file=sys.stderr)
    elif not report.ok:
        print("attn-tui capture: no variant ran on this machine (see the reasons above)",
              file=sys.stderr)
    return report.exit_code
