"""Where attention is when nothing is annotated: server ops and attention-kernel sites."""

from __future__ import annotations

import pytest

from profiling.analysis.attention_sites import (
    attention_kernel_rows,
    attention_kernel_sites,
    attention_op_names,
)
from profiling.analysis.links import link_gpu_events
from profiling.trace import load_trace
from tests.conftest import REAL_TRACES, needs_real_traces
from tests.test_analysis_links import call, gpu, op

FA3 = ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<"
       "flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
       "cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, "
       "float, cutlass::arch::Sm90> > > >")
DECODE = ("void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, "
          "2u, 2u, 8u, 16u, 1u, 8u, flashinfer::BatchDecodeParams<__nv_bfloat16, "
          "__nv_bfloat16, __nv_bfloat16, int> >")


def py(name, ts, dur, tid=11):
    return {"ph": "X", "cat": "python_function", "name": name, "pid": 10, "tid": tid, "ts": ts,
            "dur": dur, "args": {}}


def analysed(write_trace, events):
    trace = load_trace(write_trace(events))
    return trace, link_gpu_events(trace)


def vllm_events() -> list[dict]:
    """Two decoder layers of vLLM (FA3 backend, no with_stack): the attention op around
    the FA3 op and the KV-cache write, GEMMs outside."""
    events = [op("execute_model", 0, 1000, ext=1, cat="user_annotation")]
    for layer in range(2):
        t, e, c = 100 + 400 * layer, 10 + 10 * layer, 500 + 10 * layer
        events += [
            op("aten::mm", t - 50, 20, ext=e),
            call("cudaLaunchKernel", t - 45, 5, corr=c, ext=e),
            gpu("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", 2000 + t, 30, corr=c),
            op("vllm::unified_attention_with_output", t, 200, ext=e + 1),
            op("_C_cache_ops::reshape_and_cache_flash", t + 5, 20, ext=e + 2),
            call("cudaLaunchKernel", t + 10, 5, corr=c + 1, ext=e + 2),
            gpu("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>", 2040 + t, 3,
                corr=c + 1),
            op("_vllm_fa3_C::fwd", t + 40, 150, ext=e + 3),
            call("cudaLaunchKernel", t + 50, 5, corr=c + 2, ext=e + 3),
            gpu(FA3, 2050 + t, 40, corr=c + 2),
        ]
    return events


def test_vllm_attention_ops_are_found_outermost_first(write_trace):
    trace, links = analysed(write_trace, vllm_events())
    assert attention_op_names(trace) == ["vllm::unified_attention_with_output",
                                         "_vllm_fa3_C::fwd"]
    sites = attention_kernel_sites(trace, links)
    assert [trace.name(r) for r in sites] == ["_vllm_fa3_C::fwd"] * 2
    assert [trace.name(r) for r in attention_kernel_rows(trace)] == [FA3] * 2


def test_sglang_triton_decode_site_is_the_attention_frame(write_trace):
    # with_stack: the two Triton stages are launched from one attention frame
    frame = "sglang/srt/layers/attention/triton_ops/decode_attention.py(700): decode_attention_fwd"
    events = [
        py("sglang/srt/model_executor/model_runner.py(1200): forward_decode", 0, 500),
        py("sglang/srt/layers/radix_attention.py(100): forward", 10, 300),
        py(frame, 20, 200),
        call("cuLaunchKernel", 30, 5, corr=70, cat="cuda_driver"),
        gpu("_fwd_grouped_kernel_stage1", 1000, 20, corr=70),
        call("cuLaunchKernel", 60, 5, corr=71, cat="cuda_driver"),
        gpu("_fwd_kernel_stage2", 1030, 5, corr=71),
        py("sglang/srt/layers/linear.py(50): forward", 350, 100),
        call("cuLaunchKernel", 360, 5, corr=72, cat="cuda_driver"),
        gpu("_fwd_kernel", 1040, 5, corr=72),  # a weak name outside attention: not a site
    ]
    trace, links = analysed(write_trace, events)
    assert attention_op_names(trace) == []
    sites = attention_kernel_sites(trace, links)
    assert [trace.name(r) for r in sites] == [frame]  # the innermost attention-named frame
    assert [trace.name(r) for r in links.launched_in(trace, int(sites[0]))] == [
        "_fwd_grouped_kernel_stage1", "_fwd_kernel_stage2"]


def test_a_launch_with_nothing_around_it_is_its_own_site(write_trace):
    events = [
        op("aten::mm", 0, 20, ext=1),  # an op elsewhere is not taken
        call("cudaLaunchKernel", 100, 5, corr=80),
        gpu(DECODE, 500, 12, corr=80),
    ]
    trace, links = analysed(write_trace, events)
    assert [trace.name(r) for r in attention_kernel_sites(trace, links)] == ["cudaLaunchKernel"]


@pytest.mark.parametrize(("launch", "sites"), [("cudaLaunchKernel", 0),
                                               ("hipModuleLaunchKernel", 1)])
def test_attn_fwd_kernel_is_a_site_only_with_rocm_evidence(write_trace, launch, sites):
    events = [op("aten::_scaled_dot_product_flash_attention", 0, 50, ext=1),
              call(launch, 10, 5, corr=90, ext=1), gpu("attn_fwd", 100, 30, corr=90)]
    trace, links = analysed(write_trace, events)
    assert len(attention_kernel_sites(trace, links)) == sites


def test_no_attention_no_sites(write_trace):
    events = [op("aten::convolution", 0, 50, ext=1),
              call("cudaLaunchKernel", 10, 5, corr=91, ext=1),
              gpu("triton_tem_fused_convolution_0", 100, 30, corr=91),
              op("aten::softmax", 60, 10, ext=2),
              call("cudaLaunchKernel", 62, 5, corr=92, ext=2),
              gpu("void (anonymous namespace)::softmax_warp_forward<float>", 140, 3, corr=92)]
    trace, links = analysed(write_trace, events)
    assert attention_op_names(trace) == []
    assert attention_kernel_sites(trace, links).size == 0


@needs_real_traces
def test_real_nanovllm_decode_has_one_flash_attention_site() -> None:
    path = REAL_TRACES / "more" / "nanovllm-zhang-yuhui__decode_gpu_0.json"
    if not path.is_file():
        pytest.skip("nano-vllm decode trace absent")
    trace = load_trace(path, use_cache=False)
    links = link_gpu_events(trace)
    sites = attention_kernel_sites(trace, links)
    assert [trace.name(r) for r in sites] == [
        "flash_attn/flash_attn_interface.py(1464): flash_attn_with_kvcache"]
    launched = [trace.name(r) for r in links.launched_in(trace, int(sites[0]))]
    assert len(launched) == 2 and all("flash::flash_fwd_splitkv" in k for k in launched)
