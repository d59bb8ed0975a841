"""Links: GPU event -> launching call -> enclosing op, and back; flows; orphans."""

from __future__ import annotations

import numpy as np

from profiling.analysis.links import LinkSource, link_gpu_events
from profiling.trace import load_trace

PID, TID = 10, 11


def op(name, ts, dur, ext=None, cat="cpu_op", tid=TID, pid=PID):
    args = {} if ext is None else {"External id": ext}
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def call(name, ts, dur, corr, ext=None, tid=TID, pid=PID, cat="cuda_runtime"):
    args = {"correlation": corr}
    if ext is not None:
        args["External id"] = ext
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def gpu(name, ts, dur, corr=None, ext=None, cat="kernel", stream=7):
    args = {"stream": stream, "device": 0}
    if corr is not None:
        args["correlation"] = corr
    if ext is not None:
        args["External id"] = ext
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": args}


def flow(ph, fid, ts, pid, tid, cat="ac2g"):
    e = {"ph": ph, "cat": cat, "name": cat, "id": fid, "pid": pid, "tid": tid, "ts": ts}
    if ph == "f":
        e["bp"] = "e"
    return e


def row(trace, name):
    rows = [i for i in range(len(trace)) if trace.name(i) == name]
    assert len(rows) == 1, (name, rows)
    return rows[0]


def test_correlation_links_kernel_memcpy_memset_to_any_launch_api(write_trace):
    events = [
        op("attn_fwd", 100, 100, ext=1, cat="user_annotation"),
        op("aten::mm", 110, 20, ext=2),
        call("cuLaunchKernelEx", 112, 5, corr=50, ext=2, cat="cuda_driver"),
        op("aten::copy_", 140, 20, ext=3),
        call("hipMemcpyAsync", 142, 5, corr=51, ext=3),
        call("cudaMemsetAsync", 170, 5, corr=52),  # directly in the annotation, no op
        gpu("gemm", 300, 10, corr=50, ext=2),
        gpu("Memcpy HtoD (Pageable -> Device)", 320, 2, corr=51, cat="gpu_memcpy"),
        gpu("Memset (Device)", 330, 1, corr=52, cat="gpu_memset"),
    ]
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    assert links.launched_by(row(t, "gemm")) == row(t, "cuLaunchKernelEx")
    assert links.enclosing_op(row(t, "gemm")) == row(t, "aten::mm")
    memcpy = row(t, "Memcpy HtoD (Pageable -> Device)")
    assert links.launched_by(memcpy) == row(t, "hipMemcpyAsync")
    assert links.enclosing_op(memcpy) == row(t, "aten::copy_")
    memset = row(t, "Memset (Device)")
    assert links.enclosing_op(memset) == row(t, "attn_fwd")  # innermost open annotation
    assert links.orphans.size == 0
    assert set(links.source[links.gpu_rows].tolist()) == {LinkSource.CORRELATION}


def test_reverse_direction_runtime_call_and_op_to_gpu_rows(write_trace):
    events = [
        op("outer", 100, 100, ext=1),
        op("inner", 110, 30, ext=2),
        call("cudaLaunchKernel", 112, 5, corr=60, ext=2),
        call("cudaLaunchKernel", 120, 5, corr=61, ext=2),
        call("cudaLaunchKernel", 150, 5, corr=62, ext=1),
        gpu("k_late_launch_early_run", 160, 5, corr=62, stream=8),
        gpu("k1", 300, 5, corr=60),
        gpu("k2", 310, 5, corr=61),
    ]
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    calls = [i for i in range(len(t)) if t.name(i) == "cudaLaunchKernel"]
    first = min(calls, key=lambda r: t.ts_ns[r])
    assert [t.name(r) for r in links.launched_by_row(first)] == ["k1"]
    # an op: everything launched from inside it on its thread, in GPU start order
    assert [t.name(r) for r in links.launched_in(t, row(t, "inner"))] == ["k1", "k2"]
    assert [t.name(r) for r in links.launched_in(t, row(t, "outer"))] == [
        "k_late_launch_early_run", "k1", "k2"]


def test_orphans_are_gpu_events_whose_launch_is_not_in_the_trace(write_trace):
    events = [
        gpu("before_window", 50, 5, corr=1),
        gpu("no_correlation_at_all", 60, 5),
        op("aten::add", 100, 10, ext=3),
        call("cudaLaunchKernel", 101, 2, corr=2, ext=3),
        gpu("linked", 120, 5, corr=2),
    ]
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    assert sorted(t.name(r) for r in links.orphans) == ["before_window", "no_correlation_at_all"]
    assert links.launched_by(row(t, "before_window")) is None
    assert links.enclosing_op(row(t, "before_window")) is None


def test_flows_link_when_correlation_args_are_missing(write_trace):
    events = [
        op("aten::relu", 100, 20, ext=1),
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": TID,
         "ts": 105, "dur": 5, "args": {}},
        {"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 200,
         "dur": 4, "args": {"stream": 7}},
        flow("s", 900, 105, PID, TID),
        flow("f", 900, 200, 0, 7),
        # an unrelated forward-backward flow must not be taken for a launch
        flow("s", 901, 101, PID, TID, cat="fwdbwd"),
        flow("f", 901, 202, 0, 7, cat="fwdbwd"),
    ]
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    k = row(t, "relu_kernel")
    assert links.launched_by(k) == row(t, "cudaLaunchKernel")
    assert links.source[k] == LinkSource.FLOW
    assert links.enclosing_op(k) == row(t, "aten::relu")


def test_old_async_flows_and_old_categories(write_trace):
    events = [
        {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": PID, "tid": str(TID),
         "ts": 100, "dur": 50, "args": {"External id": 4}},
        {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": str(TID),
         "ts": 110, "dur": 5, "args": {"cbid": 211}},
        {"ph": "X", "cat": "Kernel", "name": "conv_kernel", "pid": 0, "tid": "stream 7",
         "ts": 300, "dur": 9, "args": {"stream": 7}},
        flow("s", 77, 110, PID, TID, cat="async"),
        flow("f", 77, 300, 0, "stream 7", cat="async"),
    ]
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    assert links.launched_by(row(t, "conv_kernel")) == row(t, "cudaLaunchKernel")
    assert links.enclosing_op(row(t, "conv_kernel")) == row(t, "aten::conv2d")


def test_colliding_correlation_ids_prefer_cpu_lane_and_matching_external_id(write_trace):
    events = [
        op("aten::mm", 100, 20, ext=7, pid=1, tid=1),
        call("cudaLaunchKernel", 105, 5, corr=5, ext=7, pid=1, tid=1),
        op("aten::add", 100, 20, ext=8, pid=2, tid=2),
        call("cudaLaunchKernel", 104, 5, corr=5, ext=8, pid=2, tid=2),
        gpu("mm_kernel", 200, 5, corr=5, ext=7),
        gpu("add_kernel", 210, 5, corr=5, ext=8, stream=9),
    ]
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    assert t.name(links.enclosing_op(row(t, "mm_kernel"))) == "aten::mm"
    assert t.name(links.enclosing_op(row(t, "add_kernel"))) == "aten::add"


def test_launch_range_is_vectorised_over_many_queries(write_trace):
    events = [op("step", 0, 1000, ext=1, cat="user_annotation")]
    for i in range(20):
        events.append(call("cudaLaunchKernel", 10 + i * 40, 5, corr=100 + i, ext=1))
        events.append(gpu(f"k{i}", 2000 + i * 10, 5, corr=100 + i))
    t = load_trace(write_trace(events))
    links = link_gpu_events(t)
    lane = int(t.lane[row(t, "step")])
    us = 1000  # the model counts nanoseconds
    lo, hi = links.launch_range(np.array([lane, lane, lane]),
                                np.array([0, 10, 410]) * us, np.array([1000, 50, 420]) * us)
    assert (hi - lo).tolist() == [20, 1, 1]
