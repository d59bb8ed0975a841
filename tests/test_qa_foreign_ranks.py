"""A job whose rank file was cut short (a profiler killed on one node) is still read,
but ``ranks`` and ``findings`` must say so: that rank's figures are partial, and
stragglers or collective skew blamed on it may come from the missing tail.

Found by QA on a job folder made of the real DLRM ranks with worker2 cut at 60%:
``attn-tui ranks`` named rank 2 the slowest in a step and the last to arrive in a
collective, and printed nothing about the cut (the loader's warning was dropped:
only "left out of the job" lines were shown).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.job_fixtures import straggler_job
from tui.cli import main


def _job_with_a_cut_rank(tmp_path: Path) -> list[str]:
    tmp_path.mkdir()
    paths = straggler_job(tmp_path, ranks=2, slow=0, steps=3)
    doc = json.loads(Path(paths[1]).read_text())
    events = doc.pop("traceEvents")  # Kineto writes its metadata first, then the events
    data = json.dumps({**doc, "traceEvents": events}).encode()
    Path(paths[1]).write_bytes(data[: len(data) * 7 // 10])
    return paths


@pytest.mark.parametrize("command", ["ranks", "findings"])
def test_a_cut_rank_is_said(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    paths = _job_with_a_cut_rank(tmp_path / "job")
    for _ in range(2):  # first open, then the stored job
        assert main([command, *paths, "--json"]) == 0
        out, err = capsys.readouterr()
        json.loads(out)  # stdout stays JSON
        lines = [line for line in err.splitlines() if "cut short" in line]
        assert len(lines) == 1, err
        assert lines[0].startswith(f"attn-tui {command}: warning: rank 1: file cut short")


def test_a_whole_job_prints_no_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "job").mkdir()
    paths = straggler_job(tmp_path / "job", ranks=2, slow=0, steps=3)
    assert main(["ranks", *paths, "--json"]) == 0
    assert capsys.readouterr().err == ""
