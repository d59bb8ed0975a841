"""Columns from a decoding worker through a memory file (``shared_columns``): the
parent sees the same arrays, the file is gone once mapped (or discarded), and
without /dev/shm the chunk is left to travel pickled."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from profiling.trace import shared_columns
from profiling.trace.decode import decode_chunk
from tests.fixtures.bad_inputs import EVENTS, doc

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")


def _chunk():
    text = doc(EVENTS)
    lo = text.index(b"[", text.index(b"traceEvents")) + 1
    return decode_chunk(text, lo, text.rindex(b"]"), True, "t.json")


def test_round_trip_gives_the_same_columns():
    want = _chunk()
    sent = pickle.loads(pickle.dumps(shared_columns.export(_chunk())))
    assert sent.shared is not None
    paths = [path for path, _dtype, _count in sent.shared]
    assert len(paths) == len(shared_columns.COLUMNS) and all(map(os.path.exists, paths))
    assert all(getattr(sent, name).size == 0 for name in shared_columns.COLUMNS)
    got = shared_columns.attach(sent)
    assert not any(map(os.path.exists, paths)) and got.shared is None
    for name in shared_columns.COLUMNS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert got.strings == want.strings and got.lane_keys == want.lane_keys


def test_discard_removes_the_file():
    sent = shared_columns.export(_chunk())
    assert sent.shared is not None
    paths = [path for path, _dtype, _count in sent.shared]
    shared_columns.discard(sent)
    assert not any(map(os.path.exists, paths)) and sent.shared is None


def test_without_shm_the_chunk_is_pickled(monkeypatch, tmp_path):
    monkeypatch.setattr(shared_columns, "SHM", str(tmp_path / "none"))
    chunk = shared_columns.export(_chunk())
    assert chunk.shared is None and chunk.ts_ns.size > 0
    assert shared_columns.attach(chunk) is chunk


def test_sweep_removes_files_of_processes_that_are_gone(monkeypatch, tmp_path):
    monkeypatch.setattr(shared_columns, "SHM", str(tmp_path))
    mine = shared_columns.export(_chunk(), os.getpid())
    gone = shared_columns.export(_chunk(), 2**22 + 12345)  # above Linux's pid limit
    assert mine.shared and gone.shared
    (tmp_path / "unrelated").write_text("x")
    shared_columns.sweep()
    assert all(os.path.exists(path) for path, _d, _c in mine.shared)
    assert not any(os.path.exists(path) for path, _d, _c in gone.shared)
    assert (tmp_path / "unrelated").exists()
    shared_columns.discard(mine)


def test_a_load_stopped_by_a_bad_chunk_leaves_no_column_files(tmp_path, monkeypatch):
    """Chunks decoded after another chunk's error are discarded as they finish."""
    from profiling.errors import TraceError
    from profiling.trace import load_trace, loader, parse, pool, split
    from tests.test_trace_parallel import write_synthetic

    monkeypatch.setattr(loader, "PARALLEL_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 256 << 10)
    monkeypatch.setattr(split, "QUICK_MIN_BYTES", 0)  # the workers meet the bad JSON
    path = write_synthetic(tmp_path / "t.json", 3, 20_000)
    data = bytearray(path.read_bytes())
    at = data.index(b'"ph":"X"', len(data) // 10)
    data[at : at + 8] = b'"ph" "X"'  # a missing colon early in the list
    path.write_bytes(bytes(data))
    with pytest.raises(TraceError, match="not valid JSON"):
        load_trace(path, use_cache=False, workers=2)
    pool.shutdown_pools()  # every chunk still in a worker finishes; its result is handled
    mine = f"attn-tui-columns-{os.getpid()}-"
    assert not any(n.startswith(mine) for n in os.listdir(shared_columns.SHM))
