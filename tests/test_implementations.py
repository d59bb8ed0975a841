"""Which attention ran: kernel and op names -> the implementation's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis.implementations import classify_kernel, identify
from tests.conftest import REAL_TRACES, SAMPLE_TRACES, needs_real_traces

# Kernel names as the profiler records them (the first five from an H200 capture).
NAMES = {
    "pytorch_flash": "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, "
                     "4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, "
                     "cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
                     "false>(pytorch_flash::Flash_fwd_params)",
    "cutlass_mem_efficient": "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
                             "AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, "
                             "64, 64, 64, true, true>::Params)",
    "cudnn": "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_"
             "cga1x1x1_kernel0_0",
    "triton_flex": "triton_tem_fused_flex_attention_0",
    "custom_attention": "attn_tui_flash_fwd_kernel",
    "flash_attn_3": "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::"
                    "FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>,"
                    " cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, "
                    "cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90> > > >",
    "flash_attn_2": "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 128, 4, false, "
                    "false, cutlass::half_t> >(Flash_fwd_params)",
    "flash_attn_4": "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForward"
                    "Sm100_object_at__tensor0000",
    "ck": "ck_tile::kentry<ck_tile::gfx942_t, 2, ck_tile::FmhaFwdKernel<ck_tile::"
          "BlockFmhaPipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t> > > >",
    "aiter": "_ZN5aiter32fmha_fwd_hd128_bf16_causal_a32E",
    "aotriton": "attn_fwd",
    "flashinfer": "BatchPrefillWithRaggedKVCacheKernel",
}

NOT_ATTENTION = [
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, "
    "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma",
    "Memcpy DtoD (Device -> Device)",
    "triton_poi_fused_add_0",
    "triton_tem_fused_mm_0",
    "void at::native::triu_tril_kernel<bool, int, false, 8, false>(int)",
    "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0",
]


@pytest.mark.parametrize(("key", "name"), sorted(NAMES.items()))
def test_fused_kernels_are_named(key: str, name: str) -> None:
    hit = classify_kernel(name)
    assert hit is not None and hit[0] == key and hit[1]


@pytest.mark.parametrize("name", NOT_ATTENTION)
def test_other_kernels_are_not_attention(name: str) -> None:
    assert classify_kernel(name) is None


def test_fused_kernel_wins_and_counts_per_instance() -> None:
    impl = identify([NAMES["pytorch_flash"]] * 3 + ["Memset (Device)"], ["aten::mul"], 3)
    assert impl.key == "pytorch_flash" and impl.attention_kernels == 1 and impl.fused
    assert impl.name == "PyTorch flash (FlashAttention-2)"
    assert impl.evidence == NAMES["pytorch_flash"]


def test_math_backend_is_named_from_its_op() -> None:
    kernels = ["sm80_xmma_gemm_f32f32_f32f32_f32_tn", "softmax_warp_forward<float>"]
    impl = identify(kernels, ["aten::scaled_dot_product_attention",
                              "aten::_scaled_dot_product_attention_math"], 1)
    assert impl.key == "math" and not impl.fused and impl.attention_kernels == 0


def test_unfused_from_kernels_or_ops() -> None:
    assert identify(NOT_ATTENTION[:2], [], 1).key == "unfused"
    cpu = identify([], ["aten::matmul", "aten::bmm", "aten::softmax", "aten::_softmax"], 1)
    assert cpu.key == "unfused" and "ops" in cpu.name


def test_cpu_flash_and_op_hints_without_kernels() -> None:
    assert identify([], ["aten::_scaled_dot_product_flash_attention_for_cpu"]).key == "cpu_flash"
    assert identify([], ["aten::_efficient_attention_forward"]).key == "cutlass_mem_efficient"


def test_nothing_known_is_blank() -> None:
    impl = identify(["void at::native::vectorized_elementwise_kernel<4>()"], ["aten::add"])
    assert impl.key == "unknown" and impl.name == ""


SAMPLE_KEYS = {
    "naive": "unfused", "inplace": "unfused", "sdpa_math": "math",
    "sdpa_flash": "pytorch_flash", "sdpa_efficient": "cutlass_mem_efficient",
    "sdpa_cudnn": "cudnn", "kernels": "custom_attention", "flex": "triton_flex",
}


def _sample(variant: str) -> Path:
    for name in (f"{variant}.json.gz", f"{variant}.json"):
        if (SAMPLE_TRACES / name).is_file():
            return SAMPLE_TRACES / name
    pytest.skip(f"sample_traces/{variant} is absent")


@pytest.mark.parametrize(("variant", "key"), sorted(SAMPLE_KEYS.items()))
def test_sample_traces_name_their_implementation(variant: str, key: str) -> None:
    from profiling.analysis.compare import summarize_trace
    from profiling.trace import load_trace

    region = summarize_trace(load_trace(_sample(variant), use_cache=False)).regions["attn_fwd"]
    assert region.implementation.key == key
    fused = key not in ("unfused", "math")
    assert region.implementation.attention_kernels == (1 if fused else 0)


@needs_real_traces
def test_real_h100_inference_trace_ran_pytorch_flash() -> None:
    from profiling.analysis.compare import summarize_trace
    from profiling.trace import load_trace

    path = REAL_TRACES / "inference_attention" / \
        "tracelens_h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    if not path.is_file():
        pytest.skip("Qwen trace absent")
    item = summarize_trace(load_trace(path, use_cache=False))
    region = item.regions["aten::scaled_dot_product_attention"]
    assert region.implementation.key == "pytorch_flash" and region.instances == 24
