"""compare and findings find attention in server traces (issue 10, item 5): no annotation,
only a server's attention op, or only attention kernels."""

from __future__ import annotations

import json

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu
from tests.test_attention_sites import DECODE, vllm_events
from tui.cli import main


def test_vllm_trace_regions_are_its_attention_op(write_trace, capsys):
    path = write_trace(vllm_events())
    a = AnalysedTrace(load_trace(path))
    assert a.attention_regions == ("vllm::unified_attention_with_output",)
    assert main(["compare", str(path), "--json", "--no-cache"]) == 0
    regions = json.loads(capsys.readouterr().out)[0]["regions"]
    attention = regions["vllm::unified_attention_with_output"]
    assert attention["instances"] == 2 and attention["kernels_per_instance"] == 2
    assert main(["findings", str(path), "--no-cache"]) == 0
    assert "no attention region" not in capsys.readouterr().out


def test_kernels_alone_make_regions(write_trace, capsys):
    path = write_trace([call("cudaLaunchKernel", 100, 5, corr=80),
                        gpu(DECODE, 500, 12, corr=80)])
    a = AnalysedTrace(load_trace(path))
    assert a.attention_regions == ("cudaLaunchKernel",)
    assert [i.kernels for i in a.instances("cudaLaunchKernel")] == [1]
    assert main(["findings", str(path), "--no-cache"]) == 0
    assert "no attention region" not in capsys.readouterr().out
