"""Bad inputs that are not file contents: a missing file, a directory, a symlink loop,
a FIFO, a file without read permission, a file still being written.  ``load_trace``
raises one ``TraceError`` line and the CLI exits 2 with one line naming the path
(or, for the growing file, loads what is there), never hanging.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from profiling.errors import TraceError
from profiling.trace import load_trace
from tests.conftest import REPO
from tests.fixtures.bad_inputs import BODY, EVENTS, _rows, doc
from tests.fixtures.cli_run import assert_cli_ok_or_one_line, cli

# ---- cases that are not file contents ----


def test_missing_file(tmp_path: Path):
    path = tmp_path / "missing.json"
    with pytest.raises(TraceError, match="no such file"):
        load_trace(path)
    assert_cli_ok_or_one_line(cli("stats", str(path), "--json"), path, True)
    assert not path.exists()


def test_directory(tmp_path: Path):
    with pytest.raises(TraceError, match="is a directory"):
        load_trace(tmp_path)
    result = cli("stats", str(tmp_path), "--json")
    assert result.returncode == 2 and b"is a directory" in result.stderr
    assert_cli_ok_or_one_line(result, tmp_path, True)


def test_symlink_loop(tmp_path: Path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(TraceError, match="cannot open"):
        load_trace(loop)
    result = cli("table", str(loop), "--json")
    assert result.returncode == 2
    assert_cli_ok_or_one_line(result, loop, True)


def test_fifo_is_refused_without_hanging(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    outcome: list[Any] = []

    def load() -> None:
        try:
            load_trace(fifo)
        except TraceError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # it blocked opening the pipe: free it, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("load_trace blocked on a FIFO")
    assert outcome and "not a regular file" in outcome[0].line()
    result = cli("stats", str(fifo), "--json", timeout=30)
    assert result.returncode == 2 and b"not a regular file" in result.stderr
    assert_cli_ok_or_one_line(result, fifo, True)


def _without_root_powers() -> tuple[str, ...] | None:
    """A command prefix under which file permissions apply (root ignores them)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    # Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH obeys the mode bits.
    probe = subprocess.run([setpriv, "--bounding-set=-all", "--inh-caps=-all", "true"],
                           capture_output=True)
    return (setpriv, "--bounding-set=-all", "--inh-caps=-all") if probe.returncode == 0 else None


def test_no_read_permission(tmp_path: Path):
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: root reads any file, so there is "
                    "no permission error to provoke")
    path = tmp_path / "secret.json"
    path.write_bytes(doc())
    path.chmod(0o000)
    before = path.stat().st_mtime_ns
    try:
        code = ("from profiling.trace import load_trace\n"
                "from profiling.errors import TraceError\n"
                f"try:\n    load_trace({str(path)!r})\n"
                "except TraceError as e:\n    print(e.line())\n")
        probe = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True,
                               cwd=REPO, timeout=60)
        assert probe.returncode == 0 and b"permission denied" in probe.stdout, probe
        result = cli("stats", str(path), "--json", prefix=prefix)
        assert result.returncode == 2 and b"permission denied" in result.stderr
        assert_cli_ok_or_one_line(result, path, True)
    finally:
        path.chmod(0o644)
    assert path.read_bytes() == doc() and path.stat().st_mtime_ns == before


def test_file_still_being_written(tmp_path: Path):
    """A profiler still writing: what is there loads, cut short, and nothing hangs."""
    path = tmp_path / "growing.json"
    head = b'{"schemaVersion": 1, "traceEvents": [' + b", ".join(
        json.dumps(e).encode() for e in EVENTS)
    path.write_bytes(head)
    written = [head]
    stop = threading.Event()

    def writer() -> None:
        k = 0
        with path.open("ab") as f:
            while not stop.is_set():
                event = dict(BODY[1], name=f"late {k}", ts=200.0 + k)
                piece = b", " + json.dumps(event).encode()
                for part in (piece[:25], piece[25:]):  # often stops mid-event
                    f.write(part)
                    f.flush()
                    written.append(part)
                    time.sleep(0.002)
                k += 1

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        time.sleep(0.05)
        trace = load_trace(path, use_cache=False)
        result = cli("stats", str(path), "--json")
    finally:
        stop.set()
        thread.join(5)
    text = " | ".join(trace.warnings)
    assert "cut short" in text, text
    assert len(_rows(trace, "attn_fwd")) == 1
    stats = assert_cli_ok_or_one_line(result, path, True)
    assert stats is not None and any("cut short" in w for w in stats["warnings"])
    assert path.read_bytes() == b"".join(written)  # only the writer wrote
