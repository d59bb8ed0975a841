"""``kernels`` without ``--region`` (issue 10, item 6): attention regions, else the
top-level annotations, else ``ProfilerStep*``; stderr says which; exit 0."""

from __future__ import annotations

import json

from tests.test_analysis_links import call, gpu, op
from tui.cli import main


def _kernels(capsys, path) -> tuple[int, list[dict], str]:
    code = main(["kernels", str(path), "--json", "--no-cache"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else [], err


def _launch(name: str, ts: int, corr: int, kernel: str = "gemm_kernel") -> list[dict]:
    return [op(name, ts, 50, ext=corr, cat="user_annotation"),
            call("cudaLaunchKernel", ts + 10, 5, corr=corr),
            gpu(kernel, ts + 100, 10, corr=corr)]


def test_attention_op_is_chosen_before_annotations(write_trace, capsys):
    path = write_trace([
        *_launch("encoder", 0, 1),
        op("aten::scaled_dot_product_attention", 300, 60),
        call("cudaLaunchKernel", 310, 5, corr=2),
        gpu("flash_fwd_kernel", 400, 10, corr=2),
    ])
    code, listing, err = _kernels(capsys, path)
    assert code == 0
    assert [i["region"] for i in listing] == ["aten::scaled_dot_product_attention"]
    assert [k["name"] for k in listing[0]["kernels"]] == ["flash_fwd_kernel"]
    assert err.count("\n") == 1 and "attention regions" in err


def test_top_level_annotations_not_nested_ones(write_trace, capsys):
    path = write_trace([
        op("ProfilerStep#4", 0, 2000, cat="user_annotation"),
        op("encoder", 10, 500, cat="user_annotation"),
        *_launch("encoder.block", 20, 1),  # nested in encoder: not chosen by itself
        *_launch("decoder", 600, 2),
        op("decoder", 1000, 50, cat="user_annotation"),  # a second instance, no GPU work
    ])
    code, listing, err = _kernels(capsys, path)
    assert code == 0
    assert [(i["region"], i["instance"]) for i in listing] == [
        ("encoder", 0), ("decoder", 0), ("decoder", 1)]
    assert [len(i["kernels"]) for i in listing] == [1, 1, 0]
    assert err.count("\n") == 1 and "top-level annotations: encoder, decoder" in err


def test_profiler_steps_when_nothing_else(write_trace, capsys):
    path = write_trace([
        op("ProfilerStep#7", 0, 300),  # an old-style step: a cpu_op
        op("aten::mm", 10, 50, ext=3),
        call("cudaLaunchKernel", 20, 5, corr=3),
        gpu("gemm_kernel", 100, 10, corr=3),
        op("ProfilerStep#8", 400, 300, cat="user_annotation"),
    ])
    code, listing, err = _kernels(capsys, path)
    assert code == 0
    assert [i["region"] for i in listing] == ["ProfilerStep#7", "ProfilerStep#8"]
    assert [len(i["kernels"]) for i in listing] == [1, 0]
    assert err.count("\n") == 1 and "profiler steps: ProfilerStep*" in err


def test_no_region_at_all_lists_nothing_and_says_so(write_trace, capsys):
    path = write_trace([op("aten::mm", 10, 50)])
    code, listing, err = _kernels(capsys, path)
    assert code == 0 and listing == []
    assert err.count("\n") == 1 and "no record_function regions" in err
    assert main(["kernels", str(path), "--no-cache"]) == 0


def test_named_region_still_fails_when_absent(write_trace, capsys):
    path = write_trace(_launch("encoder", 0, 1))
    assert main(["kernels", str(path), "--region", "attn_fwd", "--no-cache"]) == 2
    assert "no region named 'attn_fwd'" in capsys.readouterr().err
