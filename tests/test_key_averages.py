"""key_averages from a trace: torch's rules on tiny handmade traces.

Each case pins one rule of torch's ``_parse_kineto_results`` / ``EventList``
(see profiling/analysis/key_averages.py); the oracle tests check the whole
against torch itself.
"""

from __future__ import annotations

import pytest

from profiling.analysis.key_averages import key_averages, normalise_sort_key, sort_rows
from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op


def table(write_trace, events, **kw):
    ka = key_averages(load_trace(write_trace(events)), **kw)
    return ka, {(r.key, r.device_type): r for r in ka.rows}


def test_self_and_total_cpu_time_from_nesting_per_thread(write_trace):
    events = [
        op("outer", 0, 100, ext=1),
        op("a", 10, 20, ext=2),
        op("b", 40, 30, ext=3),
        op("leaf", 45, 5, ext=4),
        op("other_thread", 5, 500, ext=5, tid=99),  # not a parent of anything above
    ]
    ka, rows = table(write_trace, events)
    assert rows["outer", "CPU"].self_cpu_time_total == pytest.approx(50.0)
    assert rows["outer", "CPU"].cpu_time_total == pytest.approx(100.0)
    assert rows["b", "CPU"].self_cpu_time_total == pytest.approx(25.0)
    assert rows["other_thread", "CPU"].self_cpu_time_total == pytest.approx(500.0)
    assert ka.self_cpu_time_total == pytest.approx(50 + 20 + 25 + 5 + 500)
    assert not ka.has_device_time


def test_partial_overlap_is_not_a_child_as_in_torch(write_trace):
    events = [op("p", 0, 100, ext=1), op("a", 10, 50, ext=2), op("b", 50, 60, ext=3)]
    _, rows = table(write_trace, events)
    # b ends after a: it pops a and would end after p, so it is top level
    assert rows["p", "CPU"].self_cpu_time_total == pytest.approx(50.0)
    assert rows["b", "CPU"].self_cpu_time_total == pytest.approx(60.0)


def test_profiler_steps_group_and_filtered_names_vanish(write_trace):
    events = [
        op("ProfilerStep#3", 0, 100, ext=1, cat="user_annotation"),
        op("profiler::_record_function_enter_new", 1, 2, ext=2),
        op("aten::is_leaf", 3, 1, ext=3),
        op("ProfilerStep#4", 200, 100, ext=4, cat="user_annotation"),
    ]
    _, rows = table(write_trace, events)
    assert set(rows) == {("ProfilerStep*", "CPU")}
    step = rows["ProfilerStep*", "CPU"]
    assert step.count == 2 and step.self_cpu_time_total == pytest.approx(200.0)


def test_device_time_follows_external_id_and_sums_over_the_subtree(write_trace):
    events = [
        op("attn_fwd", 0, 100, ext=1, cat="user_annotation"),
        op("aten::matmul", 10, 40, ext=2),
        op("aten::mm", 15, 20, ext=3),
        call("cudaLaunchKernel", 16, 3, corr=70, ext=3),
        op("aten::softmax", 60, 20, ext=4),
        call("cudaLaunchKernel", 61, 3, corr=71, ext=4),
        call("cudaDeviceSynchronize", 85, 10, corr=72),  # no op: keyed by its correlation
        gpu("gemm", 200, 30, corr=70, ext=3),
        gpu("softmax_k", 240, 5, corr=71, ext=4),
        {"ph": "X", "cat": "gpu_user_annotation", "name": "attn_fwd", "pid": 0, "tid": 7,
         "ts": 200, "dur": 45, "args": {"External id": 1}},
    ]
    ka, rows = table(write_trace, events)
    mm, matmul = rows["aten::mm", "CPU"], rows["aten::matmul", "CPU"]
    assert (mm.self_device_time_total, mm.device_time_total) == (30.0, 30.0)
    assert (matmul.self_device_time_total, matmul.device_time_total) == (0.0, 30.0)
    ann = [r for r in ka.rows if r.key == "attn_fwd"]
    cpu_ann = next(r for r in ann if r.device_type == "CPU")
    gpu_ann = next(r for r in ann if r.device_type == "CUDA")
    assert cpu_ann.device_time_total == 35.0 and cpu_ann.self_device_time_total == 0.0
    assert gpu_ann.is_user_annotation and gpu_ann.self_device_time_total == 45.0
    assert rows["gemm", "CUDA"].device_time_total == 30.0
    assert rows["gemm", "CUDA"].cpu_time_total == 0.0
    launch = rows["cudaLaunchKernel", "CPU"]
    assert launch.count == 2 and launch.device_time_total == 0.0
    # the footer leaves the GPU-side annotation out, as torch's table() does
    assert ka.self_device_time_total == pytest.approx(35.0)
    assert ka.has_device_time


def test_same_name_single_child_merges_and_lifts_the_childs_kernels(write_trace):
    events = [
        op("block", 0, 100, ext=1),
        # the parent's own kernel (launched from elsewhere, so it is not a child): dropped
        call("cudaLaunchKernel", 2, 2, corr=80, ext=1, tid=99),
        op("block", 10, 50, ext=2),
        op("aten::mul", 20, 10, ext=3),
        call("cudaLaunchKernel", 21, 2, corr=81, ext=2),
        gpu("parent_kernel", 200, 7, corr=80, ext=1),
        gpu("child_kernel", 210, 3, corr=81, ext=2),
        op("twice", 300, 100, ext=4),  # two children: no merge
        op("twice", 310, 10, ext=5),
        op("aten::neg", 330, 10, ext=6),
    ]
    _, rows = table(write_trace, events)
    block = rows["block", "CPU"]
    assert block.count == 1
    assert block.cpu_time_total == 100.0
    assert block.self_cpu_time_total == pytest.approx(100.0 - 10.0)  # its new child: aten::mul
    assert block.self_device_time_total == 3.0 and block.device_time_total == 3.0
    assert rows["twice", "CPU"].count == 2


def test_python_functions_are_left_out_unless_asked_for(write_trace):
    events = [
        {"ph": "X", "cat": "python_function", "name": "model.py(3): forward", "pid": 10,
         "tid": 11, "ts": 0, "dur": 100, "args": {"Python id": 1}},
        op("aten::add", 10, 10, ext=1),
    ]
    _, rows = table(write_trace, events)
    assert set(rows) == {("aten::add", "CPU")}
    _, rows = table(write_trace, events, python_functions=True)
    assert rows["model.py(3): forward", "CPU"].self_cpu_time_total == 90.0


def test_memory_records_outside_every_host_event_become_a_row(write_trace):
    mem = {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 10, "tid": 11,
           "s": "t", "args": {"Bytes": 64}}
    events = [op("aten::empty", 10, 10, ext=1), {**mem, "ts": 15}, {**mem, "ts": 20},
              {**mem, "ts": 50}, {**mem, "ts": 60}]
    _, rows = table(write_trace, events)
    assert rows["[memory]", "CPU"].count == 2  # 15 and 20 (end inclusive) are inside
    assert rows["[memory]", "CPU"].cpu_time_total == 0.0


def test_cupti_overhead_joins_the_op_it_interrupted(write_trace):
    events = [
        op("aten::bmm", 0, 3000, ext=9),
        call("cudaLaunchKernelExC", 2500, 400, corr=90, ext=9),
        {"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0,
         "ts": 100, "dur": 2000},
        gpu("gemm", 3100, 2, corr=90, ext=9),
    ]
    _, rows = table(write_trace, events)
    bmm = rows["aten::bmm", "CPU"]
    assert bmm.self_cpu_time_total == pytest.approx(3000 - 400 - 2000)
    # torch gives the overhead slice the op's id, so it receives the op's kernels too
    assert rows["Activity Buffer Request", "CPU"].device_time_total == 2.0
    assert bmm.device_time_total == 4.0


def test_sync_events_attach_unless_they_point_at_themselves(write_trace):
    events = [
        op("aten::copy_", 0, 50, ext=5),
        call("cudaStreamSynchronize", 10, 20, corr=40, ext=5),
        {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 12,
         "dur": 15, "args": {"External id": 5, "correlation": 40}},
        call("cudaDeviceSynchronize", 100, 20, corr=41),
        {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": 1, "ts": 101,
         "dur": 15, "args": {"External id": 41, "correlation": 41}},
    ]
    ka, rows = table(write_trace, events)
    assert rows["aten::copy_", "CPU"].device_time_total == 15.0
    assert rows["cudaDeviceSynchronize", "CPU"].device_time_total == 0.0
    assert rows["Context Sync", "CUDA"].self_device_time_total == 15.0
    assert ka.self_device_time_total == 30.0


def test_sort_keys_accept_torch_spellings_and_reject_others(write_trace):
    events = [op("a", 0, 10, ext=1), op("b", 20, 30, ext=2), op("b", 60, 30, ext=3)]
    ka, _ = table(write_trace, events)
    assert [r.key for r in sort_rows(ka.rows, "cpu_time_total")] == ["b", "a"]
    assert [r.key for r in sort_rows(ka.rows, "count")] == ["b", "a"]
    assert normalise_sort_key("self_cuda_time_total") == "self_device_time_total"
    assert normalise_sort_key("xpu_time") == "device_time"
    with pytest.raises(KeyError):
        sort_rows(ka.rows, "flops")


def test_empty_and_cpu_less_traces(write_trace):
    ka, rows = table(write_trace, [])
    assert ka.rows == [] and ka.self_cpu_time_total == 0
    ka, rows = table(write_trace, [gpu("lonely", 0, 5, corr=1)])
    assert rows["lonely", "CUDA"].self_device_time_total == 5.0
