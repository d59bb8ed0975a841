"""``forked_parts.write_parts``: parts made in forked children come out whole and in
order, on every kind of output; a failing child costs nothing but time; no child
outlives the call; no fork where it is not safe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from profiling.analysis import forked_parts

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux only")


def part(i: int) -> str:
    return f"<{i}:" + "x" * (i * 37 % 5000) + ">"


WANT = b"".join(part(i).encode() for i in range(41))


@pytest.fixture
def forking(monkeypatch):
    """Four processes, whatever the cores and threads here; every fork recorded."""
    monkeypatch.setattr(forked_parts, "processes", lambda parts: min(4, parts))
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(forked_parts.os, "fork", fork)
    yield pids
    for pid in pids:  # every child reaped: none left running or a zombie
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_in_order_to_a_file_a_pipe_and_a_buffer(forking, tmp_path: Path):
    with open(tmp_path / "out", "wb") as f:  # os.sendfile to a file
        f.write(b"before:")
        forked_parts.write_parts(part, 41, f)
    assert (tmp_path / "out").read_bytes() == b"before:" + WANT
    assert len(forking) == 3

    buffer = io.BytesIO()  # no file descriptor: read back and written
    forked_parts.write_parts(part, 41, buffer)
    assert buffer.getvalue() == WANT

    r, w = os.pipe()  # a pipe, read on a thread while it is written
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(os.fdopen(r, "rb").read()))
    reader.start()
    with os.fdopen(w, "wb") as f:
        forked_parts.write_parts(part, 41, f)
    reader.join()
    assert got == [WANT]


def test_a_failing_child_leaves_the_parent_to_make_its_share(forking):
    parent = os.getpid()

    def flaky(i: int) -> str:
        if os.getpid() != parent and i % 2:
            raise MemoryError("only in a child")
        return part(i)

    out = io.BytesIO()
    forked_parts.write_parts(flaky, 41, out)
    assert out.getvalue() == WANT
    assert len(forking) == 3


def test_an_error_everywhere_is_raised_here(forking):
    def broken(i: int) -> str:
        if i == 30:
            raise ValueError("part 30")
        return part(i)

    out = io.BytesIO()
    with pytest.raises(ValueError, match="part 30"):
        forked_parts.write_parts(broken, 41, out)
    assert out.getvalue() == WANT[: len(out.getvalue())]  # what came out is in order


def test_no_fork_beside_another_thread_or_on_few_cores(monkeypatch):
    monkeypatch.setattr(forked_parts, "pieces", lambda: 8)
    assert forked_parts.processes(41) == 8
    assert forked_parts.processes(5) == 2  # at least two parts each
    assert forked_parts.processes(3) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert forked_parts.processes(41) == 1
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(forked_parts, "pieces", lambda: 1)  # fewer than 4 cores
    assert forked_parts.processes(41) == 1


def test_serial_when_one_process(monkeypatch):
    monkeypatch.setattr(forked_parts, "processes", lambda parts: 1)
    monkeypatch.setattr(forked_parts.os, "fork", lambda: pytest.fail("forked"))
    out = io.BytesIO()
    forked_parts.write_parts(part, 41, out)
    assert out.getvalue() == WANT
    forked_parts.write_parts(part, 0, out)  # nothing to write
    assert out.getvalue() == WANT


SCRIPT = """
import sys
from profiling.analysis import forked_parts, kernels_json
forked_parts.pieces = lambda: 4  # as on a machine of 4 cores or more
kernels_json.write_kernels_json.__defaults__ = (1,)  # one instance a chunk
count = forked_parts.processes
def processes(parts):
    n = count(parts)
    with open(sys.argv[2], "a") as f:
        f.write(f"{n}\\n")
    return n
forked_parts.processes = processes
from tui.cli import main
sys.exit(main(["kernels", sys.argv[1], "--region", "attn_fwd", "--json"]))
"""


def test_kernels_json_from_forked_chunks_equals_json_dumps(tmp_path: Path):
    """The whole command in a fresh process, chunks of one instance so that a sample
    has parts for four processes: the text is ``json.dumps``'s.  The first open
    warms the analysis on threads, so it must not fork; the reopen does."""
    import json

    from profiling.analysis import kernels_json
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.analysis.instance_kernels import kernels_of
    from profiling.trace.loader import load_trace

    root = Path(__file__).resolve().parent.parent
    trace = tmp_path / "naive_x4.json"  # the sample repeated: 12 instances or more
    subprocess.run([sys.executable, str(root / "bench" / "make_big_trace.py"),
                    str(root / "sample_traces" / "naive.json.gz"), str(trace),
                    "--size-mb", "0.25"], check=True, capture_output=True)
    a = AnalysedTrace(load_trace(trace, use_cache=False))
    instances = a.instances("attn_fwd")
    assert len(instances) >= 8
    want = json.dumps([k.as_json() for k in kernels_of(a, instances)], indent=1) + "\n"
    assert kernels_json.kernels_json(a, instances) + "\n" == want
    env = {**os.environ, "ATTN_TUI_CACHE_DIR": str(tmp_path / "cache")}
    counts = tmp_path / "processes"
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(trace), str(counts)],
                              env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout == want
        assert done.stderr == ""
    first, reopened = counts.read_text().split()
    assert int(reopened) == 4
