"""``--jobs N`` on the commands that load traces: parsed, checked, handed to the loader."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import profiling.trace.loader as loader
import profiling.trace.parse as parse
from tui.cli import build_parser, main

from .test_trace_parallel import write_synthetic


@pytest.mark.parametrize("command", ["open", "stats", "table", "kernels", "findings", "slices"])
def test_every_loading_command_takes_jobs(command: str) -> None:
    args = build_parser().parse_args([command, "t.json", "--jobs", "3"])
    assert args.jobs == 3


def test_jobs_must_be_above_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["stats", "t.json", "--jobs", "0"])
    assert exit_.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def test_jobs_reaches_the_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_synthetic(tmp_path / "t.json", seed=2, events=200)
    seen: list[int] = []
    real = parse._decode_all

    def spy(source, span, bounds, workers, report, parallel_min_bytes):  # type: ignore[no-untyped-def]
        seen.append(workers)
        return real(source, span, bounds, workers, report, parallel_min_bytes)

    monkeypatch.setattr(parse, "_decode_all", spy)
    monkeypatch.setattr(loader, "_DEFAULT_JOBS", None)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["stats", str(path), "--json", "--no-cache", "--jobs", "5"]) == 0
    assert seen == [5]
