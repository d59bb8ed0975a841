"""Old Kineto (2021) wrote record_function ranges under the ops' category
``Operator``; they load as user annotations, so an old trace's regions are found
(``profiling.trace.kinds.annotations_by_name``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.key_averages import key_averages
from profiling.trace import Kind, load_trace
from profiling.trace import columns as columns_module
from tests.conftest import REAL_TRACES, needs_real_traces


def op(name: str, ts: int, dur: int, ext: int, cat: str = "Operator") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"External id": ext}}


def launch(ts: int, corr: int, ext: int, cat: str = "Runtime") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts,
            "dur": 2, "args": {"correlation": corr, "external id": ext}}


def kernel(name: str, ts: int, corr: int, cat: str = "Kernel") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": "stream 7", "ts": ts,
            "dur": 5, "args": {"correlation": corr, "stream": 7, "device": 0}}


OLD = [
    op("ProfilerStep#1", 0, 200, 1),
    op("attn_fwd", 10, 80, 2),
    op("aten::bmm", 12, 20, 3), launch(14, 70, 3), kernel("gemm_qk", 30, 70),
    op("aten::softmax", 40, 10, 4), launch(42, 71, 4), kernel("softmax_k", 50, 71),
    op("detach_", 60, 2, 5),
    op("AddBackward0", 100, 10, 6), launch(102, 72, 6), kernel("add_k", 120, 72),
    op("Optimizer.step#SGD.step", 150, 40, 7),
]


def kinds(trace: Any) -> dict[str, int]:
    return {trace.strings[n]: int(k) for n, k in zip(trace.name_id.tolist(),
                                                     trace.kind.tolist(), strict=True)}


def test_old_ranges_are_annotations_and_ops_stay_ops(write_trace: Callable[..., Path]):
    trace = load_trace(write_trace(OLD), use_cache=False)
    got = kinds(trace)
    for name in ("ProfilerStep#1", "attn_fwd", "Optimizer.step#SGD.step"):
        assert got[name] == Kind.USER_ANNOTATION, name
    for name in ("aten::bmm", "aten::softmax", "detach_", "AddBackward0"):
        assert got[name] == Kind.CPU_OP, name
    a = AnalysedTrace(trace)
    assert "attn_fwd" in a.regions.names() and "Optimizer.step#SGD.step" in a.regions.names()
    (inst,) = a.instances("attn_fwd")
    assert [trace.strings[trace.name_id[r]] for r in a.gpu_rows(inst)] == ["gemm_qk", "softmax_k"]


def test_a_trace_with_new_categories_keeps_its_operator_rows(write_trace):
    """The rule reads only a trace whose ops are all ``Operator``: with ``cpu_op`` or
    ``user_annotation`` present, the trace says which is which itself."""
    mixed = [*OLD, op("aten::add", 300, 5, 9, cat="cpu_op")]
    got = kinds(load_trace(write_trace(mixed), use_cache=False))
    assert got["attn_fwd"] == Kind.CPU_OP and got["Optimizer.step#SGD.step"] == Kind.CPU_OP


@needs_real_traces
@pytest.mark.parametrize("name", [
    "single_gpu/kineto_resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
    "odd/kineto_tb_plugin_test__gpu_metrics_input.json"])
def test_real_old_traces_find_their_regions_and_keep_their_op_table(
        name: str, monkeypatch: pytest.MonkeyPatch):
    path = REAL_TRACES / name
    trace = load_trace(path, use_cache=False)
    names = AnalysedTrace(trace).regions.names()
    assert {"Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"} <= set(names)
    table = numbers(key_averages(trace).rows)
    from profiling.trace.kinds import copy_kinds_by_name

    monkeypatch.setattr(columns_module, "kinds_by_name", copy_kinds_by_name)
    before = load_trace(path, use_cache=False)
    assert "Optimizer.step#SGD.step" not in AnalysedTrace(before).regions.names()
    assert numbers(key_averages(before).rows) == table  # only the rows' flag moves


def numbers(rows: Any) -> str:
    """The op table's rows without their ``is_user_annotation`` flag, as text."""
    out = [{k: v for k, v in vars(r).items() if k != "is_user_annotation"} for r in rows]
    return json.dumps(out, default=str, sort_keys=True)
