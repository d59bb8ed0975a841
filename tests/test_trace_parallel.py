"""Concurrent loads on the parallel path give exactly what serial loads give.

Two traces loading at once (``attn-tui open a.json b.json`` loads one per
thread) once shared a module global with the decoding workers: a load could
fail with a bare AssertionError, or decode one file's offsets against the
other's text.  Here four different traces load at once, in threads, each on the
parallel path (asserted, not assumed), and every column must equal a serial load.

The real threshold (``PARALLEL_MIN_BYTES``, 48 MiB of event text) and chunk size
(16 MiB) are lowered for the test so that four traces of a few MB take the path
the big ones take: same code, smaller files.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import profiling.trace.loader as loader
import profiling.trace.parse as parse
import profiling.trace.pool as pool
from profiling.trace import Trace

COLUMNS = (
    "ts_ns", "dur_ns", "name_id", "cat_id", "kind", "ph", "lane", "depth",
    "correlation", "external_id", "stream", "source_index", "lane_start",
)


def write_synthetic(path: Path, seed: int, events: int, gzipped: bool = False) -> Path:
    """A Kineto-like trace whose names, times and ids depend on ``seed`` (1..9), laid
    out in fixed widths: every such file has its events at the same byte offsets, so
    a chunk decoded against another file's text decodes cleanly, to wrong columns,
    instead of failing (which the loader would survive by decoding as one chunk)."""
    rng = np.random.default_rng(seed)
    durs = rng.integers(10, 99, size=events)
    meta = {"ph": "M", "name": "process_name", "pid": seed, "tid": 0,
            "args": {"name": f"proc{seed}"}}
    parts = [json.dumps(meta, separators=(",", ":"))]
    for i in range(events):
        ts = 1_000_000_000 + 100 * i + seed + 0.5
        dur = int(durs[i]) + 0.25
        tid = 1 + (i + seed) % 4
        event: dict[str, Any]
        if i % 3 == 0:
            event = {"ph": "X", "cat": "cpu_op", "name": f"op_{seed}_{i % 97:02d}", "pid": seed,
                     "tid": tid, "ts": ts, "dur": dur,
                     "args": {"External id": 1_000_000 + i + seed}}
        elif i % 3 == 1:
            event = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": seed,
                     "tid": tid, "ts": ts, "dur": dur,
                     "args": {"correlation": 1_000_000 + i * seed,
                              "External id": 999_999 + i + seed}}
        else:
            event = {"ph": "X", "cat": "kernel", "name": f"kernel_{seed}_{i % 13:02d}", "pid": 0,
                     "tid": 7, "ts": ts + 3, "dur": dur,
                     "args": {"correlation": 1_000_000 + (i - 1) * seed, "stream": 7,
                              "device": 0}}
        parts.append(json.dumps(event, separators=(",", ":")))
    text = ('{"schemaVersion":1,"traceEvents":[' + ",".join(parts) + "]}").encode()
    if gzipped:
        path.write_bytes(gzip.compress(text, compresslevel=1))
    else:
        path.write_bytes(text)
    return path


@pytest.fixture
def small_parallel_path(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Lower the parallel threshold and chunk size; count the loads that went parallel."""
    monkeypatch.setattr(loader, "PARALLEL_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 256 << 10)
    went_parallel: list[int] = []
    real = parse._decode_parallel

    def spy(*args: Any, **kwargs: Any) -> Any:
        went_parallel.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(parse, "_decode_parallel", spy)
    return went_parallel


def assert_same(a: Trace, b: Trace) -> None:
    assert a.strings == b.strings
    for name in COLUMNS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert [(lane.pid, lane.tid) for lane in a.lanes] == [(lane.pid, lane.tid) for lane in b.lanes]
    assert a.metadata == b.metadata
    assert a.warnings == b.warnings


def load_in_threads(
    paths: list[Path], load: Callable[[Path], Trace]
) -> list[Trace | BaseException]:
    results: list[Trace | BaseException] = [RuntimeError("not run")] * len(paths)
    barrier = threading.Barrier(len(paths))

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = load(paths[i])
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(paths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a load hung"
    return results


@pytest.mark.parametrize("gzipped", [False, True], ids=["json", "gzip"])
def test_four_traces_loading_at_once_match_serial_loads(
    tmp_path: Path, small_parallel_path: list[int], gzipped: bool
) -> None:
    suffix = ".json.gz" if gzipped else ".json"
    paths = [
        write_synthetic(tmp_path / f"t{i}{suffix}", seed=i + 1, events=12_000 + 1_500 * i,
                        gzipped=gzipped)
        for i in range(4)
    ]

    def load(p: Path) -> Trace:
        return loader.load_trace(p, use_cache=False, workers=2)

    serial = [loader.load_trace(p, use_cache=False, workers=1) for p in paths]
    assert not small_parallel_path, "workers=1 must decode in this process"
    for _ in range(3):  # a race need not show on every run
        small_parallel_path.clear()
        results = load_in_threads(paths, load)
        assert len(small_parallel_path) == len(paths), "every load took the parallel path"
        for path, expected, got in zip(paths, serial, results, strict=True):
            assert isinstance(got, Trace), f"{path.name}: {got!r}"
            assert_same(got, expected)


def test_parallel_load_matches_serial_load_with_the_real_threshold_shape(
    tmp_path: Path, small_parallel_path: list[int]
) -> None:
    """One load, many chunks, more workers than cores: still the serial columns."""
    path = write_synthetic(tmp_path / "one.json", seed=9, events=20_000)
    serial = loader.load_trace(path, use_cache=False, workers=1)
    parallel = loader.load_trace(path, use_cache=False, workers=3)
    assert small_parallel_path == [1]
    assert_same(parallel, serial)


def test_workers_are_never_forked_from_the_loading_process() -> None:
    """fork copies a threaded process's locks in whatever state they are (Textual
    runs threads): the pool's workers come from a forkserver, or are spawned."""
    assert pool.start_method() in ("forkserver", "spawn")
    executor = pool.get_pool(2)
    assert executor is pool.get_pool(2), "one pool per size, created once"
    context = executor._mp_context  # type: ignore[attr-defined]
    assert context is not None and context.get_start_method() != "fork"


def test_a_worker_refuses_a_file_that_is_not_the_one_the_parent_read(tmp_path: Path) -> None:
    path = write_synthetic(tmp_path / "t.json", seed=3, events=30)
    st = path.stat()
    job = pool.Job(0, 10, True, False, False)
    with pytest.raises(pool.SourceMoved):
        pool.decode_job(pool.TextRef(str(path), st.st_size + 1, st.st_mtime_ns, "t"), job)
    with pytest.raises(pool.SourceMoved):
        pool.decode_job(pool.TextRef(str(tmp_path / "gone"), 1, 1, "gone"), job)


def test_a_load_whose_workers_refuse_decodes_in_its_own_process(
    tmp_path: Path, small_parallel_path: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_synthetic(tmp_path / "t.json", seed=4, events=12_000)
    serial = loader.load_trace(path, use_cache=False, workers=1)

    def refuse(ref: pool.TextRef, jobs: list[pool.Job]) -> Any:
        raise pool.SourceMoved(ref.path)

    monkeypatch.setattr(parse, "get_pool", lambda workers: None)
    monkeypatch.setattr(parse, "submit_all", lambda _pool, ref, jobs: refuse(ref, jobs))
    assert_same(loader.load_trace(path, use_cache=False, workers=2), serial)
    assert small_parallel_path == [1]


def test_default_jobs_are_the_usable_cores_unless_set() -> None:
    try:
        loader.set_default_jobs(None)
        assert 1 <= loader.default_jobs() <= (os.cpu_count() or 1)
        loader.set_default_jobs(3)
        assert loader.default_jobs() == 3
    finally:
        loader.set_default_jobs(None)


def test_a_load_after_a_worker_died_is_still_right(
    tmp_path: Path, small_parallel_path: list[int]
) -> None:
    """A killed worker breaks its pool: that load decodes here, the next one gets a new pool."""
    path = write_synthetic(tmp_path / "t.json", seed=6, events=12_000)
    serial = loader.load_trace(path, use_cache=False, workers=1)
    executor = pool.get_pool(2)
    executor.submit(int).result()  # a worker is running
    for process in list(executor._processes.values()):  # type: ignore[attr-defined]
        process.kill()
        process.join()
    assert_same(loader.load_trace(path, use_cache=False, workers=2), serial)
    assert pool.get_pool(2) is not executor
    assert_same(loader.load_trace(path, use_cache=False, workers=2), serial)
