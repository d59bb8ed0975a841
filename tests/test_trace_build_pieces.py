"""``build_trace``'s piecewise passes and threads (``column_threads``, ``PIECE``) give
what the whole-array passes gave: with pieces of a few rows, so that every cut
(a run of tied rows at a piece's end, a lane across pieces) is met on small inputs,
row order, depths, per-lane counts and whole traces equal the same work done at once."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import numpy as np
import pytest

from profiling.trace import column_threads, columns, depths, lanes, sort_rows
from profiling.trace.column_threads import in_threads
from profiling.trace.loader import load_trace
from profiling.trace.model import Kind

SAMPLES = sorted((Path(__file__).parent.parent / "sample_traces").glob("*.json.gz"))


@pytest.fixture
def tiny_pieces(monkeypatch: pytest.MonkeyPatch):
    def use(rows: int) -> None:
        for module in (columns, depths, lanes, sort_rows):
            monkeypatch.setattr(module, "PIECE", rows)
        monkeypatch.setattr(column_threads, "MIN_ROWS", 0)  # small inputs on threads too

    return use


def test_in_threads_gives_results_in_order_and_runs_side_by_side():
    if column_threads._pool() is None:
        pytest.skip("one core: steps run inline")
    both = threading.Barrier(2, timeout=10)  # each step waits for the other: side by side

    def step(value: int) -> int:
        both.wait()
        return value

    assert in_threads(lambda: step(1), lambda: step(2), rows=column_threads.MIN_ROWS) == [1, 2]


def test_in_threads_raises_once_every_step_has_finished():
    done = []

    def fails() -> None:
        raise ValueError("first")

    def slow() -> None:
        threading.Event().wait(0.2)
        done.append(True)

    with pytest.raises(ValueError, match="first"):
        in_threads(fails, slow, rows=column_threads.MIN_ROWS)
    assert done == [True]
    assert in_threads(rows=0) == [] and in_threads(lambda: 3, rows=0) == [3]


def test_in_threads_runs_steps_over_few_rows_inline():
    where = in_threads(threading.get_ident, threading.get_ident, rows=column_threads.MIN_ROWS - 1)
    assert where == [threading.get_ident()] * 2


def _rows(seed: int, n: int):
    rng = np.random.default_rng(seed)
    lane = rng.integers(0, 3, n).astype(np.int32)
    ts = np.sort(rng.integers(0, n // 4, n)).astype(np.int64)  # file order: nearly sorted
    ts[rng.random(n) < 0.05] += 3
    dur = rng.choice([0, 1, 5, 40], n).astype(np.int64)
    ext = np.where(rng.random(n) < 0.3, -1, rng.integers(0, 20, n)).astype(np.int64)
    nests = rng.choice([0, 1, 2], n).astype(np.int8)
    kind = rng.choice([Kind.CPU_OP, Kind.KERNEL, Kind.INSTANT], n).astype(np.uint8)
    return lane, ts, dur, ext, nests, kind


@pytest.mark.parametrize("piece", [1, 2, 7, 64])
@pytest.mark.parametrize("all_rows", [True, False])
def test_row_order_and_depths_in_pieces_equal_them_at_once(piece, all_rows, tiny_pieces):
    lane, ts, dur, ext, nests, kind = _rows(piece, 3000)
    rows = None if all_rows else np.flatnonzero(np.random.default_rng(1).random(3000) > 0.2)
    whole = sort_rows.row_order(rows, lane, ts, dur, ext, nests)
    lane_start = np.searchsorted(lane[whole], np.arange(4)).astype(np.int64)
    depth = depths.depths(ts[whole], dur[whole], kind[whole], lane_start)
    tiny_pieces(piece)
    got = sort_rows.row_order(rows, lane, ts, dur, ext, nests)
    assert np.array_equal(got, whole)
    assert np.array_equal(depths.depths(ts[got], dur[got], kind[got], lane_start), depth)
    plain = sort_rows.row_order(rows, lane, ts, dur)
    chosen = np.arange(3000) if rows is None else rows
    want = chosen[np.lexsort((-dur[chosen], ts[chosen], lane[chosen]))]
    assert np.array_equal(plain, want)
    assert depth.max() > 0 and not np.array_equal(whole, plain)  # nesting and ties to order


def test_one_run_of_ties_over_every_piece(tiny_pieces):
    tiny_pieces(5)
    n = 50
    lane, ts = np.zeros(n, dtype=np.int32), np.full(n, 7, dtype=np.int64)
    dur = (np.arange(n) % 4).astype(np.int64)
    order = sort_rows.row_order(None, lane, ts, dur)
    assert np.array_equal(order, np.lexsort((-dur, ts, lane)))


def test_lane_code_counts_in_pieces(tiny_pieces):
    tiny_pieces(3)
    rng = np.random.default_rng(0)
    lane = rng.integers(0, 5, 100).astype(np.int32)
    code = rng.integers(0, 4, 100).astype(np.uint8)
    want = np.zeros((5, 4), dtype=np.int64)
    np.add.at(want, (lane, code), 1)
    assert np.array_equal(lanes.lane_code_counts(lane, code, 5, 4), want)


def _columns(path: Path) -> dict[str, object]:
    trace = load_trace(path, use_cache=False, workers=1)
    out: dict[str, object] = {}
    for f in dataclasses.fields(trace):
        value = getattr(trace, f.name)
        if isinstance(value, np.ndarray):
            out[f.name] = (value.dtype.str, value.tobytes())
        elif f.name in ("lanes", "groups", "strings", "warnings"):
            out[f.name] = value
    return out


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_traces_built_in_pieces_are_the_same(path, tiny_pieces):
    whole = _columns(path)
    tiny_pieces(3)
    assert _columns(path) == whole


def test_ids_too_wide_for_the_narrow_dtypes_stay_wide(tmp_path):
    n = 40_000  # more names than int16 holds
    events = [
        {"ph": "X", "name": f"op{i}", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": i, "dur": 1,
         "args": {"External id": 2**33 + i if i % 2 else i, "correlation": i}}
        for i in range(n)
    ]
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path, use_cache=False, workers=1)
    assert trace.name_id.dtype == np.int32 and trace.external_id.dtype == np.int64
    assert trace.correlation.dtype == np.int32
    assert [trace.strings[i] for i in trace.name_id[:3].tolist()] == ["op0", "op1", "op2"]
    assert trace.external_id[:3].tolist() == [0, 2**33 + 1, 2]
