"""Accelerators other than CUDA: device events with their own device type, as torch has.

torch's ``deviceTypeFromActivity`` makes MTIA's ``mtia_ccp_events``, HPU's
``hpu_op`` and an XPU build's kernels device events of type MTIA, HPU and XPU;
ROCm's are "CUDA" (HIP stands in for CUDA).  The model keeps a device type per
event, and ``table --json`` rows say it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.trace import Kind, LaneKind, load_trace
from profiling.trace.model import DEVICE_TYPE_NAMES, DeviceType
from tests.conftest import REAL_TRACES, cli_json, needs_real_traces


def accelerator_trace(runtime: str, device_category: str, copy_category: str | None = None,
                      labels: str | None = None) -> list[dict[str, Any]]:
    """An op in an attn_fwd region launches a kernel and a copy on device pid 1."""
    copy_cat = copy_category or device_category
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python"}},
        {"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 100, "tid": 100,
         "ts": 1000, "dur": 100, "args": {"External id": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100,
         "ts": 1010, "dur": 50, "args": {"External id": 2}},
        {"ph": "X", "cat": runtime, "name": "launch", "pid": 100, "tid": 100,
         "ts": 1020, "dur": 5, "args": {"External id": 2, "correlation": 31}},
        {"ph": "X", "cat": runtime, "name": "copy", "pid": 100, "tid": 100,
         "ts": 1030, "dur": 5, "args": {"External id": 2, "correlation": 32}},
        {"ph": "X", "cat": device_category, "name": "mm_kernel", "pid": 1, "tid": 7,
         "ts": 1040, "dur": 30, "args": {"External id": 2, "correlation": 31, "stream": 7}},
        {"ph": "X", "cat": copy_cat, "name": "Memcpy HtoD (Host -> Device)", "pid": 1,
         "tid": 7, "ts": 1075, "dur": 4, "args": {"External id": 2, "correlation": 32,
                                                   "stream": 7}},
    ]
    if labels is not None:
        events.append({"ph": "M", "name": "process_labels", "pid": 1, "tid": 0,
                       "args": {"labels": labels}})
    return events


def rows_by_name(trace) -> dict[str, int]:
    return {trace.name(r): r for r in range(len(trace))}


def test_mtia_events_are_device_kernels_and_copies_of_type_mtia(write_trace):
    path = write_trace(accelerator_trace("mtia_runtime", "mtia_ccp_events"))
    trace = load_trace(path)
    rows = rows_by_name(trace)
    assert Kind(int(trace.kind[rows["mm_kernel"]])) is Kind.KERNEL
    assert Kind(int(trace.kind[rows["Memcpy HtoD (Host -> Device)"]])) is Kind.MEMCPY
    assert int(trace.device_type[rows["mm_kernel"]]) == DeviceType.MTIA
    assert int(trace.device_type[rows["aten::mm"]]) == DeviceType.CPU
    device_lane = trace.lanes[int(trace.lane[rows["mm_kernel"]])]
    assert device_lane.kind == LaneKind.GPU
    assert trace.groups[device_lane.group].label == "MTIA 1"  # no process_labels to say so


def test_table_json_gives_mtia_rows_and_device_time(write_trace):
    path = write_trace(accelerator_trace("mtia_runtime", "mtia_ccp_events"))
    table = {(r["key"], r["device_type"]): r for r in cli_json("table", str(path))}
    assert table[("mm_kernel", "MTIA")]["self_device_time_total"] == 30.0
    assert table[("Memcpy HtoD (Host -> Device)", "MTIA")]["count"] == 1
    assert table[("aten::mm", "CPU")]["self_device_time_total"] == 34.0
    assert not any(r["device_type"] == "CUDA" for r in table.values())
    region = cli_json("stats", str(path))["regions"]["attn_fwd"]
    assert region["kernels_per_instance"] == 1 and region["memcpy_per_instance"] == 1
    assert region["device_time_avg_us"] == 34.0


@pytest.mark.parametrize(
    ("runtime", "category", "copy", "expected"),
    [
        ("xpu_runtime", "kernel", "gpu_memcpy", "XPU"),
        ("cuda_runtime", "hpu_op", None, "HPU"),
        ("cuda_runtime", "kernel", "gpu_memcpy", "CUDA"),
        ("hip_runtime", "kernel", "gpu_memcpy", "CUDA"),  # ROCm: torch says CUDA
        ("privateuse1_runtime", "kernel", "gpu_memcpy", "PrivateUse1"),
    ],
)
def test_device_type_follows_torch(write_trace, runtime, category, copy, expected):
    path = write_trace(accelerator_trace(runtime, category, copy))
    trace = load_trace(path)
    rows = rows_by_name(trace)
    for name in ("mm_kernel", "Memcpy HtoD (Host -> Device)"):
        assert DEVICE_TYPE_NAMES[int(trace.device_type[rows[name]])] == expected
    assert Kind(int(trace.kind[rows["Memcpy HtoD (Host -> Device)"]])) is Kind.MEMCPY
    table = cli_json("table", str(path))
    assert {r["device_type"] for r in table if r["key"] == "mm_kernel"} == {expected}


def test_device_labels_from_the_trace_win(write_trace):
    path = write_trace(accelerator_trace("mtia_runtime", "mtia_ccp_events", labels="MTIA 3"))
    trace = load_trace(path)
    lane = trace.lanes[int(trace.lane[rows_by_name(trace)["mm_kernel"]])]
    assert trace.groups[lane.group].label == "MTIA 3"


def test_trace_built_in_memory_gets_device_types_from_kinds():
    from tests.fixtures.flat_trace import flat_trace

    trace = flat_trace(5)
    expected = np.where(np.isin(trace.kind, [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET]),
                        DeviceType.CUDA, DeviceType.CPU)
    assert np.array_equal(trace.device_type, expected)


@needs_real_traces
@pytest.mark.parametrize("name", ["hta_amd_mi250_minitoy_train_ROCm6_2_kineto.json.gz",
                                  "tracelens_mi300__resnet_act_checkpoint.json.gz"])
def test_rocm_real_traces_have_device_rows_called_cuda(name: str, tmp_path: Path):
    path = REAL_TRACES / "non_nvidia" / name
    if not path.is_file():
        pytest.skip(f"{name} is not in ../shared/real_traces")
    trace = load_trace(path, use_cache=False)
    kernels = np.flatnonzero(trace.kind == Kind.KERNEL)
    assert kernels.shape[0] and (trace.device_type[kernels] == DeviceType.CUDA).all()
    table = cli_json("table", str(path))
    device_rows = [r for r in table if r["device_type"] != "CPU"]
    assert device_rows and {r["device_type"] for r in device_rows} == {"CUDA"}
    assert sum(r["self_device_time_total"] for r in device_rows) > 0
