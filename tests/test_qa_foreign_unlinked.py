"""GPU work that no op launched (found by QA on handmade foreign traces).

A trace can hold ops and GPU events and still have no GPU event whose launching call
sits inside an op: the kernels carry no correlation (a capture without CUPTI's
runtime callbacks, a trace cut from a server), or every launch is a bare runtime
call outside any ``cpu_op`` (a CUDA graph replayed from Python with no op around
it).  ``chains.launch_chains`` then had no level to concatenate, and ``kernels``
and ``findings`` ended in an internal error (exit 70) instead of listing the
regions with no kernels.
"""

from __future__ import annotations

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from tests.conftest import cli_json
from tests.test_analysis_links import call, gpu, op


def _no_correlation() -> list[dict]:
    return [
        op("ProfilerStep#1", 0, 200, cat="user_annotation"),
        op("attn_fwd", 10, 150, cat="user_annotation"),
        op("aten::mm", 20, 30),
        gpu("mm_kernel", 40, 50),
        gpu("Memcpy HtoD (Pageable -> Device)", 95, 5, cat="gpu_memcpy"),
    ]


def _launch_outside_any_op() -> list[dict]:
    return [
        op("attn_fwd", 10, 20, cat="user_annotation"),
        op("aten::mm", 12, 5),
        call("cudaGraphLaunch", 50, 5, corr=7),
        gpu("graph_kernel_a", 60, 10, corr=7),
        gpu("graph_kernel_b", 71, 10, corr=7),
    ]


@pytest.mark.parametrize("events", [_no_correlation, _launch_outside_any_op])
def test_kernels_and_findings_list_regions_without_kernels(write_trace, events):
    path = str(write_trace(events()))
    listing = cli_json("kernels", path)
    assert [(i["region"], i["kernels"]) for i in listing] == [("attn_fwd", [])]
    assert cli_json("findings", path)["path"] == path
    stats = cli_json("stats", path)
    assert stats["regions"]["attn_fwd"]["kernels_per_instance"] == 0.0


def test_launch_chains_are_empty_when_no_call_is_inside_an_op(write_trace):
    analysed = AnalysedTrace(load_trace(write_trace(_launch_outside_any_op())))
    chains = analysed.chains
    assert chains.gpu.shape[0] == 2
    assert chains.ptr.tolist() == [0, 0, 0]
    assert chains.ops.shape[0] == 0
