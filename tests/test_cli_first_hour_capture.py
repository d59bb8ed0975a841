"""What a new user meets in the first hour with ``capture`` (issue 12, items 1, 2 and 7).

Capture without torch says what to install, its messages print brackets literally
instead of reading them as Rich markup, its table names its time base, and torch's
native log lines are dropped during a capture (but come back when it fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tests.conftest import REPO

INSTALL_HINT = "pip install 'attn-tui[capture]'"
HIDE_TORCH = "import sys; sys.modules['torch'] = None; "  # `import torch` now fails


def cli_without_torch(*argv: str) -> subprocess.CompletedProcess[str]:
    """``attn-tui ARGV`` in a fresh interpreter where ``import torch`` fails."""
    code = HIDE_TORCH + f"from tui.cli import main; sys.exit(main({list(argv)!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


# ---- 1, 2: no torch ----


@pytest.mark.parametrize("argv", [
    ["--all", "--device", "cpu"],
    ["--variant", "naive", "--device", "cpu"],
    ["--device", "auto"],
    ["--device", "cuda"],
])
def test_capture_without_torch_says_what_to_install(tmp_path: Path, argv: list[str]) -> None:
    result = cli_without_torch("capture", "--out", str(tmp_path / "out"), *argv)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert INSTALL_HINT in result.stderr
    assert "capture: capture:" not in result.stderr and "internal error" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_variants_without_torch_keeps_the_brackets() -> None:
    result = cli_without_torch("variants")
    assert result.returncode == 0, result.stderr
    assert INSTALL_HINT in " ".join(result.stdout.split())  # Rich may wrap the line


def _render(*renderables: Any) -> str:
    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    for r in renderables:
        console.print(r)
    console.file.close()
    return console.export_text()


class _Result:
    def __init__(self, name: str, status: str, reason: str | None = None) -> None:
        self.name, self.status, self.reason = name, status, reason
        self.ms_per_forward = 1.5 if status == "ok" else None
        self.tflops = 2.0 if status == "ok" else None
        self.kernels_per_forward = self.memcpy_per_forward = None
        self.notes: dict[str, Any] = {}


def test_capture_messages_print_brackets_literally() -> None:
    from rich.progress import Progress

    from tui.commands.capture import RichReporter, summary_notes, summary_table

    reason = "needs [bold]CUDA[/]: pip install 'attn-tui[capture]'"
    results = [_Result("naive", "ok"), _Result("[red]x[/]", "skipped", reason)]
    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    with Progress(console=console, transient=True) as progress:
        reporter = RichReporter(progress, len(results))
        for r in results:
            reporter.finished(r)
    console.file.close()
    lines = console.export_text()
    assert reason in lines and "[red]x[/]" in lines

    class Report:
        manifest = {"shape": {"batch": 1, "heads": 2, "seq": 3, "head_dim": 4},
                    "gpu": "GPU [v2]", "torch": "2.13", "dtype": "fp32", "environment": {},
                    "device": "cuda", "config": {"timed_iters": 7}}

    Report.results = results  # type: ignore[attr-defined]
    text = _render(summary_table(Report), summary_notes(Report))
    assert "GPU [v2]" in text and "[red]x[/]" in text and reason in text


def test_capture_table_names_its_time_base() -> None:
    from tui.commands.capture import time_base

    cuda = time_base({"device": "cuda", "config": {"timed_iters": 20}})
    assert "wall time per forward" in cuda and "CUDA events" in cuda and "20" in cuda
    assert "compare" in cuda  # says why compare's TFLOP/s differ
    assert "perf_counter" in time_base({"device": "cpu", "config": {"timed_iters": 5}})


# ---- 7: torch's native log lines ----


def test_native_profiler_lines_are_dropped_and_other_native_output_kept(capfd) -> None:
    from tui.commands.capture import native_stderr_filtered

    with native_stderr_filtered():
        os.write(2, b"USDT:2026-12-01 06:12:52 7628:7628 SyncActivityProfilerHandler.cpp:52]"
                    b" profiler_start\n")
        os.write(2, b"STAGE:2026-12-01 06:13:07 7898:7898 X.cpp:51] Completed Stage: Warm Up\n")
        os.write(2, b"W1201 a native warning worth seeing\n")
    err = capfd.readouterr().err
    assert "profiler_start" not in err and "Completed Stage" not in err
    assert "a native warning worth seeing" in err


def test_native_output_comes_back_when_the_capture_fails(capfd) -> None:
    from tui.commands.capture import native_stderr_filtered

    with pytest.raises(RuntimeError), native_stderr_filtered():
        os.write(2, b"native detail before the failure\n")
        raise RuntimeError("boom")
    assert "native detail before the failure" in capfd.readouterr().err
