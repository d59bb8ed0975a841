"""A merged job kept as an index of its own (``profiling.analysis.job_store``): a
reopen maps it and equals the merge; a changed rank, another alignment, a damaged
entry or ``--no-cache`` never read it; big ranks parsed on threads go one at a time."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import job_store
from profiling.analysis.job_index import one_parse_at_a_time
from profiling.analysis.job_store import job_folder, read_job, wait_for_writes
from profiling.trace.cache import index_of
from tests.job_fixtures import straggler_job
from tui.job_session import load_job_session

_COLUMNS = [c for c in job_store.COLUMNS if c != "lane_start"]


@pytest.fixture(autouse=True)
def _small_jobs_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_store, "MIN_JOB_BYTES", 0)


def _same(a, b) -> None:  # noqa: ANN001 - two Jobs
    ta, tb = a.trace, b.trace
    for c in [*_COLUMNS, "lane_start"]:
        assert np.array_equal(getattr(ta, c), getattr(tb, c)), c
    assert ta.strings == tb.strings and ta.lanes == tb.lanes and ta.groups == tb.groups
    assert ta.metadata == tb.metadata and ta.warnings == tb.warnings
    assert ta.n_entries == tb.n_entries and ta.path == tb.path
    assert a.ranks == b.ranks and a.header() == b.header()
    rows = [0, len(ta) // 2, len(ta) - 1]
    assert ta.args_of(rows) == tb.args_of(rows)  # read through each rank's own file


def test_reopen_maps_the_stored_job_and_equals_the_merge(tmp_path: Path) -> None:
    paths = straggler_job(tmp_path, ranks=3, slow=1)
    first = load_job_session(paths, str(tmp_path))
    assert "merge" in first.timings
    wait_for_writes()
    assert job_folder(paths, "clock").is_dir()
    assert index_of(first.trace) == index_of(read_job(paths, "clock", "k").trace)  # analyses
    again = load_job_session(paths, str(tmp_path))
    assert list(again.timings) == ["job index"]  # no rank loaded, nothing merged
    assert isinstance(again.trace.ts_ns, np.memmap)
    _same(first.job, again.job)
    step = load_job_session(paths, str(tmp_path), alignment="step")  # its own entry
    assert "merge" in step.timings and step.job.alignment == "step"


def test_a_changed_rank_is_merged_again(tmp_path: Path) -> None:
    paths = straggler_job(tmp_path, ranks=2, slow=0)
    load_job_session(paths, str(tmp_path))
    wait_for_writes()
    old = job_folder(paths, "clock")
    stamp = os.stat(paths[1]).st_mtime_ns + 5_000_000_000
    os.utime(paths[1], ns=(stamp, stamp))
    assert read_job(paths, "clock", str(tmp_path)) is None
    changed = load_job_session(paths, str(tmp_path))
    assert "merge" in changed.timings
    wait_for_writes()
    assert job_folder(paths, "clock").is_dir() and not old.exists()  # the stale one dropped


def test_a_damaged_entry_is_removed_and_merged_again(tmp_path: Path) -> None:
    paths = straggler_job(tmp_path, ranks=2, slow=0)
    first = load_job_session(paths, str(tmp_path))
    wait_for_writes()
    folder = job_folder(paths, "clock")
    names = np.load(folder / "name_id.npy")
    names[3] = 1 << 30  # a string that does not exist
    np.save(folder / "name_id.npy", names)
    assert read_job(paths, "clock", str(tmp_path)) is None and not folder.exists()
    again = load_job_session(paths, str(tmp_path))
    assert "merge" in again.timings
    _same(first.job, again.job)


def test_no_cache_neither_reads_nor_writes_it(tmp_path: Path) -> None:
    paths = straggler_job(tmp_path, ranks=2, slow=0)
    session = load_job_session(paths, str(tmp_path), no_cache=True)
    wait_for_writes()
    assert "merge" in session.timings and not job_folder(paths, "clock").exists()


def test_big_parses_on_threads_go_one_at_a_time(tmp_path: Path) -> None:
    files = []
    for k in range(4):
        files.append(tmp_path / f"r{k}.json")
        files[-1].write_bytes(b" " * (2000 if k < 3 else 10))
    running: list[str] = []
    most = [0]
    lock = threading.Lock()

    def load(path: str) -> str:
        with lock:
            running.append(path)
            most[0] = max(most[0], sum(1 for p in running if not p.endswith("r3.json")))
        time.sleep(0.05)
        with lock:
            running.remove(path)
        return path

    guarded = one_parse_at_a_time(load, use_cache=False, min_bytes=1000)
    threads = [threading.Thread(target=guarded, args=(str(f),)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


def test_ranks_and_findings_reopen_the_job_the_tui_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from profiling.analysis import job_open
    from tui.cli import main

    paths = straggler_job(tmp_path, ranks=3, slow=1)
    outputs = []
    for command in ("ranks", "findings"):
        assert main([command, *paths, "--json"]) == 0
        outputs.append(capsys.readouterr().out)
    load_job_session(paths, str(tmp_path))  # as `attn-tui open DIR` does: stores the job
    wait_for_writes()

    def merged_again(*args: object, **kwargs: object) -> None:
        raise AssertionError("merged again instead of mapping the stored job")

    merge = job_open.load_job
    monkeypatch.setattr(job_open, "load_job", merged_again)
    for command, before in zip(("ranks", "findings"), outputs, strict=True):
        assert main([command, *reversed(paths), "--json"]) == 0  # any order: rank order
        assert capsys.readouterr().out == before
    monkeypatch.setattr(job_open, "load_job", merge)
    monkeypatch.setattr(job_open, "read_job", merged_again)  # --no-cache: never read
    assert main(["ranks", *paths, "--json", "--no-cache"]) == 0
    assert capsys.readouterr().out == outputs[0]


def test_rank_workers_share_the_cores_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    from profiling.analysis.job_index import WORKERS_ENV, rank_workers

    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert (rank_workers(16, 8), rank_workers(16, 3), rank_workers(2, 4)) == (2, 5, 1)
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert rank_workers(16, 8) == 3
    monkeypatch.setenv(WORKERS_ENV, "lots")  # not a number: the share
    assert rank_workers(16, 8) == 2


def test_a_process_that_ends_at_once_still_stores_its_job(tmp_path: Path) -> None:
    """The writer outlives the main thread (``attn-tui ranks`` prints and returns):
    it must not need a thread pool then, and the process waits for it."""
    import subprocess
    import sys

    paths = straggler_job(tmp_path, ranks=2, slow=0)
    code = ("import sys; from profiling.analysis import job_store; job_store.MIN_JOB_BYTES = 0; "
            "from tui.job_session import load_job_session; "
            "load_job_session(sys.argv[1:], sys.argv[1] + '.job')")
    done = subprocess.run([sys.executable, "-c", code, *paths], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert read_job(paths, "clock", "x") is not None
