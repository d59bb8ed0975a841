"""A profiler step's GPU work is its process's, on every thread (found by QA on the real
training traces: MI300 ResNet, Kineto's ResNet50 sample, the MI250 toy).

A training step's backward runs on an autograd thread (``pt_autograd_0``) while
the thread that holds ``ProfilerStep#N`` waits in ``loss.backward()``.  Regions
counted only the GPU events launched on the region's own thread, so a step lost
its backward kernels: on the MI300 trace 286 of 895 GPU events and 2.2 of
22.9 ms per step, and ``findings`` said "launch-bound" and "GPU idle 88 %".
Other annotations stay per thread.
"""

from __future__ import annotations

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.chains import instance_launches
from profiling.analysis.launch_chain import launch_chain
from profiling.trace import load_trace
from tests.conftest import REAL_TRACES, cli_json
from tests.test_analysis_links import call, gpu, op

MAIN, AUTOGRAD, OTHER_PID = 11, 12, 20


def _training_step() -> list[dict]:
    return [
        op("ProfilerStep#1", 0, 1000, ext=1, cat="user_annotation", tid=MAIN),
        op("attn_fwd", 10, 100, ext=2, cat="user_annotation", tid=MAIN),
        op("aten::mm", 20, 30, ext=3, tid=MAIN),
        call("cudaLaunchKernel", 25, 5, corr=50, ext=3, tid=MAIN),
        op("aten::sum", 200, 700, ext=4, tid=MAIN),  # loss.backward() waits here
        # the backward, on the autograd thread of the same process, during the step
        op("autograd::engine::evaluate_function: MmBackward0", 300, 100, ext=5, tid=AUTOGRAD),
        op("aten::mm", 310, 50, ext=6, tid=AUTOGRAD),
        call("cudaLaunchKernel", 320, 5, corr=51, ext=6, tid=AUTOGRAD),
        call("cudaMemsetAsync", 450, 5, corr=52, tid=AUTOGRAD),  # in no op
        # another thread's launch while attn_fwd is open: not attn_fwd's, but the step's
        call("cudaLaunchKernel", 60, 5, corr=53, tid=AUTOGRAD),
        # another process launching during the step: never this step's
        op("aten::add", 500, 20, ext=7, tid=1, pid=OTHER_PID),
        call("cudaLaunchKernel", 505, 5, corr=54, ext=7, tid=1, pid=OTHER_PID),
        gpu("fwd_kernel", 100, 40, corr=50),
        gpu("bwd_kernel", 400, 200, corr=51),
        gpu("Memset (Device)", 610, 2, corr=52, cat="gpu_memset"),
        gpu("side_kernel", 150, 10, corr=53, stream=8),
        {"ph": "X", "cat": "kernel", "name": "other_process_kernel", "pid": 1, "tid": 7,
         "ts": 700, "dur": 30, "args": {"correlation": 54, "stream": 7, "device": 1}},
    ]


def test_a_step_counts_the_gpu_work_of_every_thread_of_its_process(write_trace):
    path = str(write_trace(_training_step()))
    regions = cli_json("stats", path)["regions"]
    step, attn = regions["ProfilerStep*"], regions["attn_fwd"]
    assert (step["kernels_per_instance"], step["memset_per_instance"]) == (3.0, 1.0)
    assert step["device_time_avg_us"] == 40 + 200 + 2 + 10
    assert (attn["kernels_per_instance"], attn["device_time_avg_us"]) == (1.0, 40.0)
    listing = cli_json("kernels", path, "--region", "ProfilerStep*")
    got = [(k["name"], k["launched_by"], k["launch_chain"]) for k in listing[0]["kernels"]]
    assert got == [
        ("fwd_kernel", "aten::mm", ["attn_fwd", "aten::mm", "cudaLaunchKernel"]),
        ("side_kernel", None, ["cudaLaunchKernel"]),
        ("bwd_kernel", "aten::mm",
         ["autograd::engine::evaluate_function: MmBackward0", "aten::mm", "cudaLaunchKernel"]),
        ("Memset (Device)", None, ["cudaMemsetAsync"]),
    ]


def test_the_batched_chains_are_the_reference_chains_for_steps(write_trace):
    trace = load_trace(write_trace(_training_step()))
    a = AnalysedTrace(trace)
    instances = a.instances("ProfilerStep*") + a.instances("attn_fwd")
    batch = instance_launches(trace, a.links, a.chains, instances)
    for k, inst in enumerate(instances):
        for j in range(int(batch.inst_ptr[k]), int(batch.inst_ptr[k + 1])):
            row = int(batch.rows[j])
            assert batch.chain_of(j) == launch_chain(trace, a.links, a.ops, row, inst.row)


def test_a_process_launching_from_one_thread_is_unchanged(write_trace):
    events = [e for e in _training_step() if e.get("tid") != AUTOGRAD
              and e.get("args", {}).get("correlation") not in (51, 52, 53)]
    regions = cli_json("stats", str(write_trace(events)))["regions"]
    assert regions["ProfilerStep*"]["kernels_per_instance"] == 1.0
    assert regions["ProfilerStep*"]["device_time_avg_us"] == 40.0


MI300 = REAL_TRACES / "non_nvidia/tracelens_mi300__resnet_act_checkpoint.json.gz"


@pytest.mark.skipif(not MI300.is_file(), reason="../shared/real_traces is absent")
def test_real_training_steps_hold_their_backward():
    trace = load_trace(MI300)
    a = AnalysedTrace(trace)
    links = a.links
    linked = links.gpu_rows[links.launch[links.gpu_rows] >= 0]
    call_ts = trace.ts_ns[links.launch[linked]]
    for inst in a.instances("ProfilerStep*"):
        inside = linked[(call_ts >= inst.start_ns) & (call_ts < inst.end_ns)]  # any thread
        assert inst.gpu_events == inside.shape[0] == 895
        assert inst.device_ns == int(trace.dur_ns[inside].sum())
    ids = [f["id"] for f in cli_json("findings", str(MI300))["findings"]]
    assert "launch-bound" not in ids and "gpu-idle-gaps" not in ids


def test_what_a_step_launched_is_its_instance_s_gpu_work(write_trace):
    """The timeline's links (an annotation marks the GPU work it launched, ``f`` fits
    it) ask ``Links.launched_in``: a step answers with its whole process's work."""
    trace = load_trace(write_trace(_training_step()))
    a = AnalysedTrace(trace)
    step = a.instances("ProfilerStep*")[0]
    names = [trace.name(int(r)) for r in a.links.launched_in(trace, step.row)]
    assert names == [trace.name(int(r)) for r in step.gpu_rows(trace, a.links)]
    assert "bwd_kernel" in names
    attn = a.instances("attn_fwd")[0]
    assert [trace.name(int(r)) for r in a.links.launched_in(trace, attn.row)] == ["fwd_kernel"]
