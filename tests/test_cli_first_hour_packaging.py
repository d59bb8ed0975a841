"""What a new user meets in the first hour installing and testing (issue 12, items 18-20).

Textual is a range at run time and pinned for the tests only, the README says how to
test without the CUDA torch, and error logs go to the platform's log folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# ---- 18-20: packaging ----


def _readme_test_command() -> list[str]:
    """The lines .ci/run runs: between the test-command markers, inside the fence."""
    text = (REPO / "README.md").read_text()
    block = text.split("<!-- test-command -->", 1)[1].split("<!-- /test-command -->", 1)[0]
    return [ln for ln in block.strip().splitlines() if not ln.startswith("```")]


def test_textual_is_a_range_at_run_time_and_pinned_for_the_tests_only() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    textual = [d for d in project["dependencies"] if d.startswith("textual")]
    assert len(textual) == 1 and "==" not in textual[0] and "<" in textual[0]
    test_extra = project["optional-dependencies"]["test"]
    assert not any("==" in d.split(";")[0] for d in project["dependencies"] + test_extra)
    pins = dict(
        ln.split("==") for ln in (REPO / "tests" / "constraints.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    )
    assert "textual" in pins and "pytest-textual-snapshot" in pins
    (command,) = _readme_test_command()  # one line: .ci/run runs it with bash -c
    assert "-c tests/constraints.txt" in command
    assert "pip install torch==2.13.0" in command  # CI installs torch as before


def test_readme_says_how_to_test_without_the_cuda_torch() -> None:
    text = " ".join((REPO / "README.md").read_text().split())
    assert "CPU-only wheel" in text
    assert "with a torch already in the environment, skip the torch step" in text


def test_error_logs_go_to_the_platform_log_folder(tmp_path: Path, monkeypatch) -> None:
    import platformdirs

    from tui.error_log import LOG_DIR_ENV, log_dirs

    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "mine"))
    assert log_dirs() == [tmp_path / "mine"]
    monkeypatch.delenv(LOG_DIR_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    first = log_dirs()[0]
    assert first == Path(platformdirs.user_log_dir("attn-tui", appauthor=False))
    if sys.platform.startswith("linux"):
        assert first.is_relative_to(tmp_path / "state")
