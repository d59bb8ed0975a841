"""What a new user meets in the first hour with ``open`` (issue 12, item 5).

``open`` with nothing that loads prints the errors and exits 2 without starting the
app; the preloads report failures only when no file loads, and settling never waits
for a big file's load that is under way.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from profiling.errors import AttnTuiError
from tests.conftest import REPO

# ---- 5: open with nothing that loads ----


def test_open_with_nothing_that_loads_prints_the_error_and_exits_2(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("this is not a trace\n")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    result = subprocess.run(
        [sys.executable, "-m", "tui.cli", "open", str(text), str(empty)],
        cwd=REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and str(text) in lines[0] and "file is empty" in lines[1]
    assert result.stdout == ""  # the app never started


def test_preloads_report_failures_only_when_no_file_loads() -> None:
    from tui.preload import Preloads

    def load(path: str, progress: Any = None, *, no_cache: bool = False) -> Any:
        if path.startswith("bad"):
            raise AttnTuiError("not a trace", path)
        return object()

    both = Preloads(["bad1", "good"], load=load)
    both.settle(30.0)
    assert both.failures() is None  # one file loads: the app opens with it
    bad = Preloads(["bad1", "bad2"], load=load)
    bad.settle(30.0)
    assert bad.failures() == ["bad1: not a trace", "bad2: not a trace"]
    with pytest.raises(AttnTuiError):
        bad.loader("bad1")
    assert bad.failures() is not None


def test_preloads_settle_does_not_wait_for_a_load_under_way() -> None:
    from tui.preload import Preloads

    release = threading.Event()

    def slow(path: str, progress: Any = None, *, no_cache: bool = False) -> Any:
        progress("decode", 0.05)  # past the first checks
        release.wait(30)
        return object()

    loads = Preloads(["big"], load=slow)
    loads.settle(30.0)  # returns once the load is under way, not when it ends
    assert loads.failures() is None
    release.set()
    assert loads.loader("big") is not None


def test_settle_waits_for_a_small_files_first_checks_but_not_a_big_ones(tmp_path: Path) -> None:
    from tui.preload import BIG_BYTES, _Load

    small = tmp_path / "small.json"
    small.write_text("{}")
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(BIG_BYTES)
    release = threading.Event()

    def stuck(path: str, progress: Any = None, *, no_cache: bool = False) -> Any:
        progress("read", 0.0)  # still in its first checks
        release.wait(30)
        return object()

    loads = [_Load(str(small), False, stuck), _Load(str(big), False, stuck)]
    try:
        assert loads[0].decided() is False  # settle waits for it: it may fail at once
        assert loads[1].decided() is True  # a big file's first scan is not waited for
    finally:
        release.set()
    for load in loads:
        assert load.wait(None) is not None
        assert load.decided()
