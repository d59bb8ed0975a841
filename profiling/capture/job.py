"""``attn-tui capture --nproc N``: each variant as one job of N ranks, through torchrun.

For every variant this starts ``python -m torch.distributed.run --nproc-per-node N
--standalone -m profiling.capture.rank_entry SPEC`` (torch's elastic agent: it
starts the ranks, watches them, and stops them all when one fails), NCCL on GPUs,
gloo on CPU.  One job per variant keeps variants apart, as the one-device capture
does: a variant that fails ends its job, with the failing rank and its reason in
the manifest, and the capture goes on with the next variant in fresh processes.

The ranks write into a hidden staging folder inside ``--out``; only when every
rank of the job finished are their files renamed into place (``os.replace`` in one
file system), so a failed or interrupted job leaves no partial trace.  Ctrl+C
sends SIGTERM to the agent, which stops every rank (the ranks run in their own
sessions, so the terminal's Ctrl+C reaches this process alone); a rank still alive
after that is killed by its process id.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from profiling.capture.config import ALL_VARIANT_NAMES, VARIANT_NAMES, CaptureConfig
from profiling.capture.job_results import combine, rank_files, read_status
from profiling.capture.outputs import (
    MANIFEST,
    job_files,
    load_manifest,
    merge_manifest,
    refuse_foreign_manifest,
    write_json,
)
from profiling.capture.runner import VariantResult, now_iso
from profiling.capture.session import (
    CaptureInterrupted,
    CaptureReport,
    Reporter,
    SilentReporter,
    build_manifest,
)
from profiling.errors import CaptureError

REPO_ROOT = Path(__file__).resolve().parents[2]
STOP_GRACE_S = 20.0
"""How long the agent gets to stop its ranks after SIGTERM before they are killed."""


def select_job_variants(all_: bool, names: list[str] | None) -> list[str]:
    """``--variant`` names in canonical order; all (context-parallel ones too) when none."""
    if not names or all_:
        return list(ALL_VARIANT_NAMES)
    unknown = [n for n in names if n not in ALL_VARIANT_NAMES]
    if unknown:
        raise CaptureError(f"unknown variant {unknown[0]!r}", "--variant",
                           f"choose from {', '.join(ALL_VARIANT_NAMES)}")
    return [n for n in ALL_VARIANT_NAMES if n in names]


def backend_for(device: str) -> str:
    return "nccl" if device == "cuda" else "gloo"


def check_nproc(config: CaptureConfig, nproc: int) -> None:
    """Enough devices for one rank each (GPU); any count on the CPU."""
    if nproc < 1:
        raise CaptureError(f"--nproc {nproc}", "--nproc", "use 1 or more")
    if config.device == "cuda":
        import torch

        have = torch.cuda.device_count()
        if have < nproc:
            raise CaptureError(f"--nproc {nproc} needs {nproc} GPUs, torch sees {have}",
                               "--nproc", f"use --nproc {have} or less, or --device cpu")


def prepare_job_out(out: Path, names: list[str], force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise CaptureError("exists and is not a folder", str(out), "choose another --out")
    if not force:
        existing = [p for n in names for p in job_files(out, n)]
        if existing:
            more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
            raise CaptureError(f"would overwrite {existing[0]}{more}", str(out),
                               "pass --force to overwrite, or choose another --out")
        refuse_foreign_manifest(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CaptureError(f"cannot write there ({exc.strerror or exc})", str(out),
                           "choose a writable --out") from None


def torchrun_command(nproc: int, staging: Path, spec: Path) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
            "--standalone", "--monitor-interval", "0.2", "--log-dir", str(staging / "logs"),
            "--redirects", "3", "-m", "profiling.capture.rank_entry", str(spec)]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = f"{REPO_ROOT}{os.pathsep}{path}" if path else str(REPO_ROOT)
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's own default, said so it stays quiet
    if Path("/sys/class/net/lo").exists():
        # Every rank is on this host (--standalone): gloo on loopback works even where the
        # host name resolves to no reachable address (containers, CI runners).
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    return env


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (a ``timeout``, a closed terminal) stop the ranks as Ctrl+C does:
    the agent runs in a session of its own and would outlive this process otherwise."""
    def interrupt(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    saved: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            saved[sig] = signal.signal(sig, interrupt)
    except ValueError:  # not the main thread: signals stay as they are
        pass
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _stop(proc: subprocess.Popen[bytes], staging: Path, nproc: int) -> None:
    """SIGTERM to the agent (it stops its ranks), then kill what is left, by id."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the session started for the agent
        proc.wait()
    for rank in range(nproc):
        pid = (read_status(staging, rank) or {}).get("pid")
        if isinstance(pid, int):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def run_one_job(config: CaptureConfig, name: str, out: Path, nproc: int, gz: bool,
                job_id: str, reporter: Reporter, timeout_s: float) -> tuple[VariantResult,
                                                                             dict[str, Any]]:
    """Launch one variant's job and wait; (the variant's result, its manifest extras)."""
    staging = out.resolve() / f".attn-tui-job-{job_id}-{name}"  # the ranks may start elsewhere
    staging.mkdir()
    try:
        spec = staging / "spec.json"
        write_json(spec, {"job_id": job_id, "variant": name, "config": config.as_dict(),
                          "gzip": gz, "staging": str(staging), "timeout_s": timeout_s})
        with open(staging / "agent.log", "wb") as log:
            proc = subprocess.Popen(torchrun_command(nproc, staging, spec),
                                    stdout=log, stderr=subprocess.STDOUT, env=_child_env(),
                                    start_new_session=True)
            try:
                with _terminate_as_interrupt():
                    last = ""
                    while proc.poll() is None:
                        phase = (read_status(staging, 0) or {}).get("phase", "starting")
                        if phase != last:
                            reporter.phase(name, f"{phase} ×{nproc}")
                            last = phase
                        time.sleep(0.2)
            except KeyboardInterrupt:
                _stop(proc, staging, nproc)
                raise
        result, extras = combine(name, staging, nproc, proc.returncode, gz)
        if result.status == "ok":
            _promote(out, name, staging, nproc, gz)
        return result, extras
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _promote(out: Path, name: str, staging: Path, nproc: int, gz: bool) -> None:
    """Every rank's files into ``out``; rank files of an older job of this variant go."""
    new = [p for k in range(nproc) for p in rank_files(staging, name, k, gz)]
    keep = {p.name for p in new}
    for old in job_files(out, name):
        if old.name not in keep:
            old.unlink(missing_ok=True)
    for path in new:
        os.replace(path, out / path.name)


def run_job_capture(config: CaptureConfig, names: list[str], out: Path, nproc: int,
                    gz: bool = False, force: bool = False, reporter: Reporter | None = None,
                    timeout_s: float = 600.0) -> CaptureReport:
    """Capture ``names`` as jobs of ``nproc`` ranks; always leaves a manifest."""
    from profiling.capture.job_results import precheck

    reporter = reporter or SilentReporter()
    if "kernels" in names:
        from profiling.capture.kernel_source import parse_kernel_repo

        parse_kernel_repo(config.kernel_repo)  # a typo fails now, not in every rank later
    check_nproc(config, nproc)
    prepare_job_out(out, names, force)
    job_id = uuid.uuid4().hex[:12]
    results: list[VariantResult] = []
    extras: dict[str, dict[str, Any]] = {}
    interrupted = False
    for i, name in enumerate(names):
        reporter.started(name)
        reason = precheck(name, config, nproc)
        try:
            if reason is not None:
                result = VariantResult(name=name, status="skipped", reason=reason,
                                       captured_at=now_iso())
            else:
                result, extras[name] = run_one_job(config, name, out, nproc, gz, job_id,
                                                   reporter, timeout_s)
        except KeyboardInterrupt:
            interrupted = True
            results.append(VariantResult(name=name, status="interrupted",
                                         reason="interrupted (Ctrl+C): every rank stopped"))
            results += [VariantResult(name=n, status="interrupted",
                                      reason="not started: capture interrupted (Ctrl+C)")
                        for n in names[i + 1:]]
            break
        except OSError as exc:  # this process's own files: the staging folder, the spec
            raise CaptureError(f"cannot write {name}'s job files ({exc.strerror or exc})",
                               str(out), "free some space or choose another --out") from None
        if result.status != "ok" and force:
            for path in job_files(out, name):  # old files the manifest no longer describes
                path.unlink(missing_ok=True)
        results.append(result)
        reporter.finished(result)
    manifest = job_manifest(config, out, nproc, job_id, gz, results, extras, not interrupted)
    report = CaptureReport(out=out, results=results, manifest=manifest, interrupted=interrupted)
    if interrupted:
        raise CaptureInterrupted(report)
    return report


def job_manifest(config: CaptureConfig, out: Path, nproc: int, job_id: str, gz: bool,
                 results: list[VariantResult], extras: dict[str, dict[str, Any]],
                 complete: bool) -> dict[str, Any]:
    """The folder's manifest: the one-device fields, the job, and each rank's line."""
    env = next((e["environment"] for e in extras.values() if e.get("environment")), None)
    if env is None:
        from profiling.capture.session import environment

        env = environment(CaptureConfig(**{**config.__dict__, "device": "cpu"}))
    manifest = build_manifest(config, env, gz, results, complete)
    backend = backend_for(config.device)
    manifest["job"] = {"world_size": nproc, "backend": backend, "id": job_id,
                       "launcher": "torch.distributed.run (--standalone)",
                       "data_parallel": [n for n in VARIANT_NAMES if n in manifest["variants"]],
                       "step_sync": "one-element all_reduce at the end of every profiled step"}
    manifest["comparable"] = {**manifest["comparable"], "world_size": nproc, "backend": backend}
    for name, extra in extras.items():
        entry = manifest["variants"][name]
        entry.update({k: v for k, v in extra.items() if k != "environment"})
    manifest = merge_manifest(load_manifest(out), manifest)
    try:
        write_json(out / MANIFEST, manifest, indent=2)
    except OSError as exc:
        raise CaptureError(f"cannot write {MANIFEST} ({exc.strerror or exc})", str(out),
                           "free some space or choose another --out") from None
    return manifest
