"""Kineto of 2021 wrote the GPU-side span of a ``record_function`` as category ``User``
on the device's pid, tid ``"stream 7 user"`` (its ``handleGenericActivity``; later
Kineto calls the same activity ``gpu_user_annotation``).

Found by QA on a synthetic trace in that spelling: the span loaded as an ``other``
event on a lane of its own, labelled ``thread stream 7 user``, instead of a GPU
annotation on a GPU lane, and the op table had no device row for it (torch has one,
as for ``gpu_user_annotation``).
"""

from __future__ import annotations

from profiling.trace import load_trace
from profiling.trace.model import DeviceType, Kind, LaneKind
from tests.conftest import cli_json


def _old_trace() -> list[dict]:
    """One 2021-style step: Operator ops, a Runtime launch, a Kernel on "stream 7", the
    step's User span on "stream 7 user", async flows."""
    return [
        {
            "ph": "X",
            "cat": "Operator",
            "name": "ProfilerStep#1",
            "pid": 10,
            "tid": "10",
            "ts": 100,
            "dur": 100,
            "args": {"External id": 1},
        },
        {
            "ph": "X",
            "cat": "Operator",
            "name": "aten::mm",
            "pid": 10,
            "tid": "10",
            "ts": 110,
            "dur": 30,
            "args": {"External id": 2},
        },
        {
            "ph": "X",
            "cat": "Runtime",
            "name": "cudaLaunchKernel",
            "pid": 10,
            "tid": "10",
            "ts": 115,
            "dur": 5,
            "args": {"cbid": 211, "correlation": 7, "external id": 2},
        },
        {"ph": "s", "id": 7, "pid": 10, "tid": 10, "ts": 115, "cat": "async", "name": "launch"},
        {
            "ph": "X",
            "cat": "Kernel",
            "name": "gemm",
            "pid": 0,
            "tid": "stream 7",
            "ts": 150,
            "dur": 20,
            "args": {"device": 0, "stream": 7, "correlation": 7, "external id": 2},
        },
        {
            "ph": "f",
            "id": 7,
            "pid": 0,
            "tid": "stream 7",
            "ts": 150,
            "cat": "async",
            "name": "launch",
            "bp": "e",
        },
        {
            "ph": "X",
            "cat": "User",
            "name": "ProfilerStep#1",
            "pid": 0,
            "tid": "stream 7 user",
            "ts": 150,
            "dur": 20,
            "args": {"External id": 1},
        },
    ]


def test_a_user_span_is_a_gpu_annotation_on_a_gpu_lane(write_trace):
    trace = load_trace(write_trace(_old_trace()))
    row = next(r for r in range(len(trace)) if trace.strings[trace.cat_id[r]] == "User")
    assert Kind(int(trace.kind[row])) is Kind.GPU_ANNOTATION
    assert DeviceType(int(trace.device_type[row])) is DeviceType.CUDA
    assert trace.lanes[int(trace.lane[row])].kind is LaneKind.GPU


def test_stats_and_the_table_count_it_as_torch_does(write_trace):
    path = str(write_trace(_old_trace()))
    lanes = {(lane["tid"], lane["kind"]) for lane in cli_json("stats", path)["lanes"]}
    assert ("stream 7 user", "gpu") in lanes
    rows = {(r["key"], r["device_type"]): r for r in cli_json("table", path)}
    span = rows[("ProfilerStep*", "CUDA")]  # a device row of its own, as torch makes it
    assert (span["count"], span["self_device_time_total"]) == (1, 20.0)
    assert rows[("aten::mm", "CPU")]["self_device_time_total"] == 20.0  # the kernel only
    compared = cli_json("compare", path)[0]
    assert compared["self_device_time_total_us"] == 20.0  # the footer leaves spans out
    listing = cli_json("kernels", path, "--region", "ProfilerStep*")
    assert [k["name"] for k in listing[0]["kernels"]] == ["gemm"]
