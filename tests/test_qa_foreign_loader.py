"""Loader bugs a QA pass met on foreign traces (rewritten, reordered or merged files), one
test each.  Each test failed before its fix; see the commit that added it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from profiling.trace import load_trace
from tests.test_analysis_links import op

REAL_ALEXNET = (
    Path(__file__).resolve().parents[2]
    / "shared/real_traces/single_gpu/hta_alexnet__benchmark_result_2869224_1695835535_trace.json.gz"
)


def _table(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    from tui.cli import main

    assert main(["table", str(path), "--json", "--no-cache", "--limit", "100000"]) == 0
    return json.loads(capsys.readouterr().out)


def _detach_tie() -> list[dict]:
    # aten::detach and its detach start and end together (as in the real AlexNet trace);
    # Kineto numbers the parent first (External id 5, then 6).
    return [
        op("aten::detach", 100, 10, ext=5),
        op("detach", 100, 10, ext=6),
        op("aten::empty", 102, 3, ext=7),
    ]


@pytest.mark.parametrize("reverse", [False, True], ids=["file-order", "reversed"])
def test_exact_ties_nest_by_external_id_not_file_order(write_trace, reverse):
    """Ops with exactly the same start, duration and thread nested by file order: in a
    reversed file ``detach`` became the parent of ``aten::detach``, and the self time
    moved between them (28/89 -> 32/85 us on the reversed HTA AlexNet trace)."""
    events = _detach_tie()
    trace = load_trace(write_trace(events[::-1] if reverse else events))
    names = [trace.name(i) for i in range(len(trace))]
    assert names == ["aten::detach", "detach", "aten::empty"]
    assert [int(d) for d in trace.depth] == [0, 1, 2]


def test_exact_ties_without_external_id_keep_file_order(write_trace):
    """Rows with no External id keep their file order in a tie; only id'd rows move."""
    events = [op("b", 100, 10), op("a", 100, 10), op("c", 100, 10, ext=9), op("d", 100, 10, ext=3)]
    trace = load_trace(write_trace(events))
    assert [trace.name(i) for i in range(len(trace))] == ["b", "a", "d", "c"]


@pytest.mark.skipif(not REAL_ALEXNET.is_file(), reason="real traces not present")
def test_reversed_real_alexnet_gives_the_same_op_table(tmp_path, capsys):
    data = json.loads(gzip.decompress(REAL_ALEXNET.read_bytes()))
    forward = tmp_path / "alexnet.json"
    forward.write_text(json.dumps(data))
    data["traceEvents"].reverse()
    backward = tmp_path / "reversed.json"
    backward.write_text(json.dumps(data))
    want = _table(forward, capsys)
    self_us = {r["key"]: r["self_cpu_time_total"] for r in want}
    assert (self_us["aten::detach"], self_us["detach"]) == (28.0, 89.0)
    assert _table(backward, capsys) == want


def _ties_by_id_reference(order, lane, ts, dur, ext):
    """Full (lane, ts, dur) ties of ``order`` with their id'd rows in id order, in Python."""
    out = list(order)
    start = 0
    for i in range(1, len(out) + 1):
        if i < len(out) and all(a[out[i]] == a[out[start]] for a in (lane, ts, dur)):
            continue
        places = [j for j in range(start, i) if ext[out[j]] >= 0]
        ranked = sorted((out[j] for j in places), key=lambda r: ext[r])  # stable
        for j, r in zip(places, ranked, strict=True):
            out[j] = r
        start = i
    return np.asarray(out, dtype=order.dtype)


@pytest.mark.parametrize("far_apart", [False, True], ids=["combined-key", "lexsort"])
def test_row_order_puts_id_rows_of_full_ties_in_id_order(far_apart):
    from profiling.trace.columns import row_order

    rng = np.random.default_rng(3)
    n = 4000
    lane = rng.integers(0, 3, n).astype(np.int32)
    ts = rng.integers(0, 40, n).astype(np.int64)
    dur = rng.choice([0, 3, 7], n).astype(np.int64)
    ext = np.where(rng.random(n) < 0.3, -1, rng.integers(0, 50, n)).astype(np.int64)
    if far_apart:
        ts[::9] = -(4 * 10**18)  # no combined key fits int64
    rows = np.flatnonzero(rng.random(n) > 0.1)
    plain = row_order(rows, lane, ts, dur)
    assert np.array_equal(plain, rows[np.lexsort((-dur[rows], ts[rows], lane[rows]))])
    got = row_order(rows, lane, ts, dur, ext)
    want = _ties_by_id_reference(plain, lane, ts, dur, ext)
    assert np.array_equal(got, want)
    assert not np.array_equal(got, plain)  # the ties were there to order
