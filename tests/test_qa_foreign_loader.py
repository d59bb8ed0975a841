"""Loader bugs a QA pass met on foreign traces (rewritten, reordered or merged files), one
test each.  Each test failed before its fix; see the commit that added it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.links import LinkSource, link_gpu_events
from profiling.trace import load_trace
from tests.test_analysis_links import call, op, row

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
    from profiling.trace.sort_rows import row_order

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


def _thread_is_stream(correlation: bool = True) -> list[dict]:
    """Python is PID 1 on GPU 1 and its thread's tid equals stream 7: one (pid, tid).
    Kineto names the (pid, tid) twice (thread, then stream)."""
    pid, tid = 1, 7

    def at(e: dict) -> dict:
        return dict(e, pid=pid, tid=tid)

    def dev(name: str, cat: str, ts: int, dur: int, corr: int, ext: int) -> dict:
        args = {"External id": ext, "stream": tid, "device": 1}
        if correlation:
            args["correlation"] = corr
        return at({"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": args})

    def flow(ph: str, corr: int, ts: int) -> dict:
        e = {"ph": ph, "cat": "ac2g", "name": "ac2g", "id": corr, "ts": ts}
        return at(dict(e, bp="e") if ph == "f" else e)

    def meta(name: str, value: str) -> dict:
        return at({"ph": "M", "name": name, "args": {"name": value}})

    return [
        meta("process_name", "python"),
        meta("thread_name", "thread 7 (python)"),
        meta("thread_name", "stream 7 "),
        at(op("aten::mm", 100, 50, ext=1)),
        at(call("cudaLaunchKernel", 110, 20, corr=11, ext=1)),
        flow("s", 11, 110),
        dev("gemm_kernel", "kernel", 120, 40, 11, 1),
        flow("f", 11, 120),
        at(op("aten::copy_", 200, 50, ext=2)),
        at(call("cudaMemcpyAsync", 205, 20, corr=12, ext=2)),
        flow("s", 12, 205),
        dev("Memcpy DtoH (Device -> Pageable)", "gpu_memcpy", 210, 30, 12, 2),
        flow("f", 12, 210),
    ]


def _cli_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    from tui.cli import main

    assert main([*argv, "--json", "--no-cache"]) == 0
    return json.loads(capsys.readouterr().out)


def test_thread_and_stream_with_one_pid_tid_are_two_lanes(write_trace):
    """A CPU thread and a GPU stream with the same (pid, tid) were one lane, a CPU one:
    its kernels and copies counted as CPU work."""
    trace = load_trace(write_trace(_thread_is_stream()))
    assert [(lane.kind, lane.pid, lane.tid, lane.label) for lane in trace.lanes] == [
        ("cpu", 1, 7, "thread 7"),
        ("gpu", 1, 7, "stream 7"),
    ]
    kind_of = {trace.name(i): trace.lanes[int(trace.lane[i])].kind for i in range(len(trace))}
    assert kind_of["gemm_kernel"] == kind_of["Memcpy DtoH (Device -> Pageable)"] == "gpu"
    assert kind_of["aten::mm"] == kind_of["cudaLaunchKernel"] == "cpu"
    flows = [(chr(int(trace.ph[i])), trace.lanes[int(trace.lane[i])].kind)
             for i in range(len(trace)) if trace.name(i) == "ac2g"]
    assert sorted(flows) == [("f", "gpu"), ("f", "gpu"), ("s", "cpu"), ("s", "cpu")]


def test_thread_and_stream_lanes_in_stats_and_slices(write_trace, capsys):
    path = str(write_trace(_thread_is_stream()))
    lanes = _cli_json(["stats", path], capsys)["lanes"]
    assert [(x["kind"], x["events"]) for x in lanes] == [("cpu", 6), ("gpu", 4)]
    gpu = _cli_json(["slices", path, "--lanes", "gpu"], capsys)["rows"]
    assert {(r["name"], r["lane_kind"]) for r in gpu} == {
        ("gemm_kernel", "gpu"),
        ("Memcpy DtoH (Device -> Pageable)", "gpu"),
    }
    every = _cli_json(["slices", path], capsys)["rows"]
    assert {r["lane_kind"] for r in every if r["kind"] in ("kernel", "memcpy")} == {"gpu"}
    table = {r["key"]: r for r in _cli_json(["table", path], capsys)}
    assert table["aten::mm"]["self_device_time_total"] == 40.0
    assert table["aten::copy_"]["self_device_time_total"] == 30.0
    assert table["aten::mm"]["self_cpu_time_total"] == 30.0


def test_thread_and_stream_link_by_flow_alone(write_trace):
    """With no correlation on the device events, the flows' GPU ends (moved with the
    device rows) still link each kernel and copy to its launch."""
    trace = load_trace(write_trace(_thread_is_stream(correlation=False)))
    links = link_gpu_events(trace)
    for name, launch in (("gemm_kernel", "cudaLaunchKernel"),
                         ("Memcpy DtoH (Device -> Pageable)", "cudaMemcpyAsync")):
        assert trace.name(int(links.launch[row(trace, name)])) == launch, name
        assert links.source[row(trace, name)] == LinkSource.FLOW
