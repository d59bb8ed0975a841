"""``tui.parallel_write``: a listing's parts made by forked workers reach stdout in
order, exactly the serial text; a worker that fails or is killed, and a reader that
goes away, end the command instead of hanging it; with another thread alive
nothing is forked.  The forking cases run in a fresh interpreter, where no thread
of this test process (Textual's, a pool's) could make the writer stay serial."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE_TRACES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="workers are forked on Linux only")

PID_PARTS = """
import functools, os, sys
from tui.parallel_write import write_parts

def part(i):
    {body}
    text = f"{{i}} {{os.getpid()}}\\n" * (i % 3 + 1)
    return text.encode() if {as_bytes} and i % 2 else text

parts = [functools.partial(part, i) for i in range({n})]
try:
    write_parts(parts, {jobs})
except BrokenPipeError:
    print("broken pipe", file=sys.stderr)
except RuntimeError as exc:
    print(f"error: {{exc}}", file=sys.stderr)
    sys.exit(70)
else:
    sys.stdout.write(f"end {{os.getpid()}}\\n")
"""


def script_env() -> dict[str, str]:
    """This environment, with the repository first on the path (and the rest kept:
    a machine may bring its packages through PYTHONPATH)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def run_script(code: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                          text=True, timeout=120, env=script_env(), cwd=REPO, check=False)


def pid_script(n: int, jobs: int, body: str = "pass", as_bytes: bool = False) -> str:
    """Parts ``i`` saying their number and maker; with ``as_bytes`` the odd ones come
    as UTF-8 bytes, as ``kernels_text_tasks`` makes them for a UTF-8 stdout."""
    return PID_PARTS.format(n=n, jobs=jobs, body=body, as_bytes=as_bytes)


@pytest.mark.parametrize(("jobs", "as_bytes"), [(2, False), (3, False), (8, False),
                                                (1, True), (3, True)])
def test_parts_come_in_order_from_every_worker(jobs: int, as_bytes: bool) -> None:
    done = run_script(pid_script(23, jobs, as_bytes=as_bytes))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    end, parent = lines[-1].split()
    assert end == "end"
    pairs = [line.split() for line in lines[:-1]]
    assert [int(i) for i, _ in pairs] == [i for i in range(23) for _ in range(i % 3 + 1)]
    owner = {int(i): pid for i, pid in pairs}
    assert len(set(owner.values())) == jobs  # each worker made its share ...
    assert all(owner[i] == owner[i % jobs] for i in owner)  # ... round robin
    # the parent is the last worker: the first parts are made while it still forks
    assert [i for i in range(jobs) if owner[i] == parent] == [jobs - 1]


def test_bytes_parts_follow_the_text_written_before_them(tmp_path: Path) -> None:
    """In this process (one job): a bytes part goes to the stream's buffer after
    what the stream still holds, so the order stays the parts' order."""
    from tui.parallel_write import write_parts

    with open(tmp_path / "out.txt", "w", encoding="utf-8") as out:
        out.write("head › ")
        write_parts([lambda: "a µ ", lambda: "b › ".encode(), lambda: "c\n"], 1, out)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "head › a µ b › c\n"


def test_parts_are_bytes_only_for_a_utf8_stream_with_a_buffer(tmp_path: Path) -> None:
    from tui.parallel_write import utf8_errors

    assert utf8_errors(io.StringIO()) is None
    for encoding, errors, want in (("utf-8", "strict", "strict"), ("UTF8", None, "strict"),
                                   ("utf_8", "surrogateescape", "surrogateescape"),
                                   ("utf-16", "strict", None), ("latin-1", "strict", None),
                                   ("utf-8-sig", "strict", None)):
        with open(tmp_path / "o.txt", "w", encoding=encoding, errors=errors) as out:
            assert utf8_errors(out) == want, (encoding, errors)


def test_the_kernels_command_in_another_encoding_writes_the_same_text() -> None:
    """A stdout of another encoding gets text parts, encoded by the stream."""
    argv = ["kernels", str(SAMPLE_TRACES / "naive.json.gz"), "--no-cache", "--jobs", "2"]
    outs = {}
    for encoding in ("utf-8", "utf-16"):
        done = subprocess.run([sys.executable, "-m", "tui.cli", *argv], capture_output=True,
                              timeout=120, cwd=REPO,
                              env={**script_env(), "PYTHONIOENCODING": encoding})
        assert done.returncode == 0, done.stderr
        outs[encoding] = done.stdout.decode(encoding)
    assert "›" in outs["utf-8"] and outs["utf-16"] == outs["utf-8"]


def test_the_analysis_pool_is_closed_for_the_fork() -> None:
    """The reopen's range checks leave ``column_threads``' idle pool behind: it is
    closed, then the workers are forked."""
    pool = ("from profiling.trace import column_threads as ct\n"
            "assert ct.in_threads(lambda: 1, lambda: 2, rows=1 << 20) == [1, 2]\n"
            "import threading; assert threading.active_count() > 1 or ct.threads() == 1\n")
    done = run_script(pool + pid_script(9, 3))
    assert done.returncode == 0, done.stderr
    assert len({line.split()[1] for line in done.stdout.splitlines()[:-1]}) == 3


def test_one_job_or_one_part_stays_in_this_process() -> None:
    for n, jobs in ((23, 1), (1, 8)):
        done = run_script(pid_script(n, jobs))
        assert done.returncode == 0, done.stderr
        assert len({line.split()[1] for line in done.stdout.splitlines()[:-1]}) == 1


def test_a_failing_worker_ends_the_command() -> None:
    body = "if i == 4: raise ValueError('boom')"  # worker 4 % 3 = 1 of 3 (the parent is 2)
    done = run_script(pid_script(23, 3, body))
    assert done.returncode == 70
    assert "error: worker 1 making the listing failed (exit status 1)" in done.stderr
    assert [int(line.split()[0]) for line in done.stdout.splitlines()][-1] < 4


def test_a_killed_worker_ends_the_command() -> None:
    body = "if i == 5: os.kill(os.getpid(), 9)"  # worker 1 of 4
    done = run_script(pid_script(23, 4, body))
    assert done.returncode == 70
    assert "worker 1 making the listing failed (exit status -9)" in done.stderr


def test_a_reader_that_goes_away_ends_every_worker() -> None:
    code = pid_script(4000, 4, "import time; time.sleep(0.001)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=script_env(), cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(64)
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    assert "broken pipe" in proc.stderr.read().decode()


def test_another_thread_keeps_the_parts_in_this_process(tmp_path: Path) -> None:
    from tui.parallel_write import write_parts

    stop = threading.Event()
    waiter = threading.Thread(target=stop.wait)
    waiter.start()
    try:
        with open(tmp_path / "out.txt", "w") as out:
            write_parts([lambda: f"{os.getpid()}\n"] * 5, 4, out)
    finally:
        stop.set()
        waiter.join()
    assert set((tmp_path / "out.txt").read_text().split()) == {str(os.getpid())}


LISTING = """
import sys
from profiling.trace import load_trace
from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.kernels_json import kernels_json_tasks
from tui.kernels_text import kernels_text_tasks
from tui.parallel_write import write_parts

a = AnalysedTrace(load_trace(sys.argv[1], use_cache=False))
instances = a.regions.instances
if sys.argv[2] == "json":
    write_parts(kernels_json_tasks(a, instances, per=8), 3)
else:
    errors = "strict" if sys.argv[2] == "text bytes" else None
    write_parts(kernels_text_tasks(a, instances, width=100, per=8, utf8_errors=errors), 3)
"""


@pytest.mark.parametrize("kind", ["json", "text", "text bytes"])
def test_a_kernels_listing_from_workers_is_the_serial_text(kind: str) -> None:
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.analysis.kernels_json import kernels_json, kernels_json_tasks
    from profiling.trace import load_trace
    from tui.kernels_text import kernels_text_parts, kernels_text_tasks

    path = SAMPLE_TRACES / "naive.json.gz"
    a = AnalysedTrace(load_trace(str(path), use_cache=False))
    instances = a.regions.instances
    want = (kernels_json(a, instances) if kind == "json"
            else "".join(kernels_text_parts(a, instances, width=100)))
    tasks = kernels_json_tasks if kind == "json" else kernels_text_tasks
    assert len(tasks(a, instances, per=8)) > 3  # a share for each worker
    done = run_script(LISTING, str(path), kind)
    assert done.returncode == 0, done.stderr
    assert done.stdout == want
    if kind == "json":
        assert len(json.loads(done.stdout)) == len(instances)


def test_the_kernels_command_lists_the_same_with_any_jobs(write_trace) -> None:
    """A listing of 27,000 heads and events: four parts (``PART_UNITS`` each), so
    ``--jobs 3`` forks two workers."""
    from tests.test_analysis_regions import synthetic_steps

    path = write_trace(synthetic_steps(300))
    outputs = {}
    for jobs in ("1", "3"):
        for form in ("--json", "text"):
            done = run_script("from tui.cli import main; raise SystemExit(main())",
                              "kernels", str(path), "--region", "attn_fwd", "--no-cache",
                              "--jobs", jobs, *([form] if form == "--json" else []))
            assert done.returncode == 0, done.stderr
            outputs[jobs, form] = done.stdout
    assert outputs["1", "--json"] == outputs["3", "--json"]
    assert outputs["1", "text"] == outputs["3", "text"]
    listing = json.loads(outputs["3", "--json"])
    assert len(listing) == 3000 and outputs["3", "--json"].endswith("]\n")
    assert [i["instance"] for i in listing] == list(range(3000))
    assert all(len(i["kernels"]) == 8 for i in listing)
