"""c10d Work ranges (``gloo:*``, ``nccl:*``) are async in torch: never a parent, never a
child (``async_events``).  The op table already sets them apart; the regions and the
launch links and chains must too, or a collective's range shows up as a region and
wraps the kernels launched while it was open."""

from __future__ import annotations

import json

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace.loader import load_trace
from tests.fixtures.cli_run import cli_in_process
from tests.test_analysis_links import call, gpu, op, row


def _events() -> list[dict]:
    return [
        op("attn_fwd", 100, 200, ext=1, cat="user_annotation"),
        op("gloo:all_reduce", 110, 150, ext=2, cat="user_annotation"),
        op("aten::mm", 120, 20, ext=3),
        call("cudaLaunchKernel", 122, 5, corr=50, ext=3),
        call("cudaLaunchKernel", 200, 5, corr=51, ext=1),  # in attn_fwd, in the gloo range
        op("nccl:broadcast", 310, 40, ext=4, cat="user_annotation"),
        call("cudaLaunchKernel", 320, 5, corr=52, ext=4),  # in the nccl range only
        gpu("gemm", 400, 10, corr=50),
        gpu("k2", 420, 10, corr=51),
        gpu("k3", 440, 10, corr=52),
    ]


def test_c10d_ranges_are_not_regions_and_wrap_no_launch(write_trace):
    a = AnalysedTrace(load_trace(write_trace(_events()), use_cache=False))
    t = a.trace
    assert a.regions.names() == ["attn_fwd"]
    [inst] = a.instances("attn_fwd")
    assert inst.kernels == 2
    name = t.name
    assert name(a.links.op[row(t, "k2")]) == "attn_fwd"
    assert a.links.enclosing_op(row(t, "k3")) is None
    assert [name(r) for r in a.launch_chain(row(t, "gemm"))] == [
        "attn_fwd", "aten::mm", "cudaLaunchKernel"]
    assert [name(r) for r in a.launch_chain(row(t, "k2"))] == ["attn_fwd", "cudaLaunchKernel"]


def test_stats_lists_no_c10d_region(write_trace):
    path = write_trace(_events())
    result = cli_in_process("stats", str(path), "--json", "--no-cache")
    assert result.returncode == 0, result.stderr
    regions = json.loads(result.stdout)["regions"]
    names = regions if isinstance(regions, dict) else [r["name"] for r in regions]
    assert "gloo:all_reduce" not in names and "nccl:broadcast" not in names
    assert "attn_fwd" in names
