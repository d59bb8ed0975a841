"""Device time reaches an op only through the call that launched it (issue 10, item 1).

Numbers collide in real traces: older Kineto writes an unlinked GPU event's own
correlation into its ``External id``, runtime calls outside any op have
correlations that equal some op's External id, and merged files repeat ids
across processes.  Each case below is built so that matching on the number
alone credits the wrong op; the last test checks every real trace against a
brute-force reading of the rule.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from profiling.analysis.key_averages import key_averages, rewrite_name
from profiling.analysis.links import link_gpu_events
from profiling.trace import GPU_KINDS, Kind, load_trace
from tests.conftest import needs_real_traces, real_trace_files
from tests.test_analysis_links import call, gpu, op, row
from tui.cli import main


def table(write_trace, events):
    trace = load_trace(write_trace(events))
    return trace, {(r.key, r.device_type): r for r in key_averages(trace).rows}


def test_unlinked_gpu_event_whose_own_id_equals_an_unrelated_ops_is_credited_to_nobody(
        write_trace):
    # Old Kineto: the memcpy and its call carry their own correlation (14) as
    # External id; aten::detach (ended long before) happens to have External id 14.
    events = [
        op("aten::detach", 0, 10, ext=14),
        op("aten::copy_", 1000, 100, ext=69),
        call("cudaMemcpyAsync", 1010, 20, corr=14, ext=14),
        gpu("Memcpy HtoD (Pageable -> Device)", 2000, 50, corr=14, ext=14, cat="gpu_memcpy"),
    ]
    _, rows = table(write_trace, events)
    assert rows["aten::detach", "CPU"].device_time_total == 0.0
    # torch saw no link either: no CPU row has device time, the memcpy row has it all
    assert all(r.device_time_total == 0.0 for (k, d), r in rows.items() if d == "CPU")
    assert rows["Memcpy HtoD (Pageable -> Device)", "CUDA"].self_device_time_total == 50.0


def test_runtime_call_outside_ops_whose_correlation_equals_an_ops_id_gets_nothing(
        write_trace):
    events = [
        op("aten::mm", 0, 100, ext=5),
        call("cudaLaunchKernel", 10, 5, corr=900, ext=5),
        call("cudaEventRecord", 200, 5, corr=5),  # outside any op; 5 is aten::mm's id
        call("hipEventDestroy", 300, 5, corr=5),
        gpu("gemm", 400, 30, corr=900, ext=5),
    ]
    _, rows = table(write_trace, events)
    assert rows["aten::mm", "CPU"].device_time_total == 30.0
    assert rows["cudaEventRecord", "CPU"].device_time_total == 0.0
    assert rows["hipEventDestroy", "CPU"].device_time_total == 0.0


def _process_events(pid: int, device: int, own_corr: int, kernels: list[tuple[str, int, int]]):
    """One host process that drives one device: an op (External id 1 in every
    process) launching kernels with correlation 5 (shared) and ``own_corr``."""
    events = [op(f"op_of_{pid}", 0, 100, ext=1, pid=pid, tid=1)]
    for (name, ts, dur), (corr, at) in zip(kernels, [(5, 10 + pid // 100), (own_corr, 40)],
                                           strict=True):
        events.append(call("cudaLaunchKernel", at, 2, corr=corr, ext=1, pid=pid, tid=1))
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": device, "tid": 7,
                       "ts": ts, "dur": dur,
                       "args": {"correlation": corr, "External id": 1, "device": device}})
    return events


def test_same_correlation_in_two_processes_stays_in_its_process(write_trace):
    # Process 100 drives device 0, process 200 device 1; both number their
    # correlations and External ids alike.  Process 200's call with id 5 is the
    # nearer one in time to both id-5 kernels, so only the process rule decides.
    events = (_process_events(100, 0, 6, [("a_kernel", 500, 10), ("a_other", 520, 1)])
              + _process_events(200, 1, 7, [("b_kernel", 505, 20), ("b_other", 530, 2)]))
    trace, rows = table(write_trace, events)
    assert rows["op_of_100", "CPU"].device_time_total == 11.0
    assert rows["op_of_200", "CPU"].device_time_total == 22.0
    links = link_gpu_events(trace)
    launcher = links.launched_by(row(trace, "a_kernel"))
    assert launcher is not None and trace.lanes[int(trace.lane[launcher])].pid == 100
    launcher = links.launched_by(row(trace, "b_kernel"))
    assert launcher is not None and trace.lanes[int(trace.lane[launcher])].pid == 200


def test_device_time_climbs_to_the_op_the_call_names(write_trace):
    # NCCL on ROCm: the call carries record_param_comms' id, not the innermost
    # annotation's; the op it names is found around the call on its thread.
    events = [
        op("c10d::allreduce_", 0, 100, ext=10),
        op("record_param_comms", 5, 90, ext=11),
        op("nccl:all_reduce", 10, 80, ext=12, cat="user_annotation"),
        call("hipExtLaunchKernel", 20, 5, corr=300, ext=11),
        gpu("ncclDevKernel_Generic", 200, 40, corr=300, ext=11),
    ]
    _, rows = table(write_trace, events)
    assert rows["record_param_comms", "CPU"].self_device_time_total == 40.0
    assert rows["nccl:all_reduce", "CPU"].device_time_total == 0.0
    assert rows["c10d::allreduce_", "CPU"].device_time_total == 40.0


def _launching_host_names(trace) -> set[str]:
    """Brute force: names (as table keys) of host events that are, or enclose on their
    thread, a runtime call whose correlation some device event carries."""
    device = np.isin(trace.kind, [int(k) for k in GPU_KINDS])
    device |= np.array([trace.category(i).lower() == "cuda_sync" for i in range(len(trace))])
    launched = set(trace.correlation[device].tolist()) - {-1}
    host_kinds = [int(Kind.CPU_OP), int(Kind.USER_ANNOTATION), int(Kind.RUNTIME),
                  int(Kind.PYTHON_FUNCTION)]
    host = np.flatnonzero(np.isin(trace.kind, host_kinds))
    calls = [r for r in np.flatnonzero(trace.kind == int(Kind.RUNTIME)).tolist()
             if int(trace.correlation[r]) in launched]
    start, end = trace.ts_ns[host], trace.ts_ns[host] + trace.dur_ns[host]
    names: set[str] = set()
    for r in calls:
        r_start, r_end = int(trace.ts_ns[r]), int(trace.ts_ns[r] + trace.dur_ns[r])
        around = (trace.lane[host] == trace.lane[r]) & (start <= r_start) & (end >= r_end)
        names.update(rewrite_name(trace.name(int(h))) for h in host[around])
    return names


def _overhead_names(trace) -> set[str]:
    """CUPTI overhead slices: torch gives them their op's id and kernels (see
    key_averages), so they are not ops that launched anything."""
    return {trace.name(i) for i in range(len(trace))
            if trace.category(i).lower() == "overhead"}


@needs_real_traces
@pytest.mark.parametrize("path", real_trace_files(), ids=lambda p: p.name[:40])
def test_real_traces_credit_device_time_only_to_launching_ops(path, capsys):
    assert main(["table", str(path), "--json", "--no-cache"]) == 0
    rows = json.loads(capsys.readouterr().out)
    trace = load_trace(path)
    allowed = _launching_host_names(trace) | _overhead_names(trace)
    wrong = [(r["key"], r["device_time_total"]) for r in rows
             if r["device_type"] == "CPU" and r["device_time_total"] > 0
             and r["key"] not in allowed]
    assert not wrong, wrong[:10]
