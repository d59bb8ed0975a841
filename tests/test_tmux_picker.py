"""``attn-tui open`` with no PATH in a real terminal (tmux, 80x24): the picker lists
the folder's traces, two are marked and opened, and the Diff view (7) sets them
against each other.  Skipped when tmux is not installed."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.test_tmux_open import TMUX, Terminal

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_traces"

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
    pytest.mark.skipif(not (SAMPLES / "inplace.json.gz").exists(), reason="samples absent"),
]


def test_pick_two_traces_and_diff_them(tmp_path):
    for name in ("naive.json.gz", "inplace.json.gz", "naive.key_averages.json"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    os.utime(tmp_path / "inplace.json.gz", (1_800_000_000, 1_800_000_000))
    os.utime(tmp_path / "naive.json.gz", (1_800_000_100, 1_800_000_100))  # newest: listed first
    env = f"env -u COLUMNS -u LINES -u NO_COLOR TERM=xterm-256color PYTHONPATH={REPO}"
    run = f"{env} {sys.executable} -m tui.cli open"
    term = Terminal("picker", 80, 24)
    term.start(f"cd {tmp_path} && {run}; echo ATTN_TUI_EXIT=$?; sleep 60")
    try:
        term.wait_for("2 traces in", "naive.json.gz", "inplace.json.gz", "NVIDIA H200")
        screen = term.screen()
        assert "key_averages" not in screen
        assert screen.index("naive.json.gz") < screen.index("inplace.json.gz")  # newest first
        term.send("Space", "Down", "Space")
        term.wait_for("marked 2:")
        term.send("Enter")
        term.wait_for("4 Compare", "7 Diff", timeout=30)
        term.send("7")
        term.wait_for("A naive", "B inplace", "only A 1", "Memcpy DtoD", timeout=30)
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()
