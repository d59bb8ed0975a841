"""A folder that is not one job says which files keep it from being one.

Found on a synthetic 4-rank job with one rank's ``distributedInfo`` missing (a
launcher that profiles without ``torch.distributed`` on one node) and one with two
files claiming rank 1: ``ranks DIR`` said "1 of them has no rank" and "rank 1 more
than once" and left the user to open every file to find which.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.job_fixtures import Gpu, Step, rank_doc, write
from tui.cli import main

STEP = [Step(0, 100, [Gpu("k", 10, 5)])]


def test_the_file_without_a_rank_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for r in range(3):
        write(tmp_path / f"w{r}.json", rank_doc(r if r != 1 else None, 3, STEP))
    assert main(["ranks", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "1 of them has no rank in distributedInfo: w1.json)" in err


def test_the_files_claiming_one_rank_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, r in (("a.json", 0), ("b.json", 1), ("c.json", 1)):
        write(tmp_path / name, rank_doc(r, 3, STEP))
    assert main(["ranks", str(tmp_path), "--json"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "rank 1 more than once: b.json, c.json)" in err


def test_ranks_of_the_world_not_given_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found on a job of world size 8 given as 4 files (a node's traces alone): the
    header said "4 ranks of 8" and nothing else; with a rank lost to a cut gzip the
    "3 ranks of 4" went unnoticed.  Said once per command, first open and reopen."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    for r in (0, 2, 3):
        write(tmp_path / f"w{r}.json", rank_doc(r, 8, STEP))
    for _ in range(2):
        assert main(["ranks", str(tmp_path), "--json"]) == 0
        err = capsys.readouterr().err
        assert err.count("ranks 1, 4, 5, 6, 7 of 8 not among the traces given") == 1, err
    assert main(["ranks", str(tmp_path / "w0.json"), str(tmp_path / "w2.json")]) == 0
    assert "ranks 1, 3, 4, 5, 6, 7 of 8" in capsys.readouterr().err
