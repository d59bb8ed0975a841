"""Which attention ran: kernel and op names -> the implementation's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis.attention_names import (
    attention_op,
    is_attention_annotation,
    is_attention_name,
    is_attention_op,
    rocm_evidence,
)
from profiling.analysis.implementations import classify_kernel, identify
from tests.conftest import REAL_TRACES, SAMPLE_TRACES, needs_real_traces

FA2_TRAITS = ("Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, "
              "Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >")

# Kernel names as the profiler records them: the first five from an H200 capture,
# the FA2 split-KV pair from the nano-vllm trace in ../shared/real_traces/more, the
# others as the libraries name them (templates shortened where they repeat).
NAMES: list[tuple[str, str]] = [
    ("pytorch_flash", "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, "
                      "4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, "
                      "cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
                      "false>(pytorch_flash::Flash_fwd_params)"),
    ("cutlass_mem_efficient", "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
                              "AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, "
                              "64, 64, 64, true, true>::Params)"),
    ("cutlass_mem_efficient",  # xFormers' own build of the same kernels
     "fmha_cutlassF_f16_aligned_64x128_rf_sm80(AttentionKernel<cutlass::half_t, "
     "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)"),
    ("cudnn", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_"
              "cga1x1x1_kernel0_0"),
    ("triton_flex", "triton_tem_fused_flex_attention_0"),
    ("triton_flex", "triton_tem_fused_flex_decoding_1"),
    ("flash_attn_3", "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::"
                     "FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>,"
                     " cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, "
                     "cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90> > > >"),
    ("flash_attn_2", "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 128, 4, false, "
                     "false, cutlass::half_t> >(Flash_fwd_params)"),
    ("flash_attn_2", f"void flash::flash_fwd_splitkv_kernel<{FA2_TRAITS}, false, false, false, "
                     "false, true, false, true, false>(flash::Flash_fwd_params)"),
    ("flash_attn_2", f"void flash::flash_fwd_splitkv_combine_kernel<{FA2_TRAITS}, 4, 1, true>"
                     "(flash::Flash_fwd_params)"),
    ("flash_attn_4", "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForward"
                     "Sm100_object_at__tensor0000"),
    ("flashmla", "void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, "
                 "64, 8, cutlass::bfloat16_t, 512>, true, flash::SharedStorageMLA<"
                 "Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512> > >"
                 "(Flash_fwd_mla_params)"),
    ("flashmla", "void flash::flash_fwd_mla_combine_kernel<cutlass::bfloat16_t, 512, 64>"
                 "(Flash_fwd_mla_params)"),
    ("trtllm_fmha", "fmhaSm100fKernel_QkvE4m3OBfloat16H128PagedKvCausalP64VarSeqQ128Kv128"
                    "PersistentContext"),
    ("trtllm_fmha", "fmhaSm100aKernel_QBfloat16KvE4m3OBfloat16H128PagedKvDenseP64MultiCtasKv"
                    "VarSeqQ8Kv128StaticSwapsAbForGen"),
    ("cutlass_fmha", "void cutlass::device_kernel<cutlass::fmha::kernel::"
                     "Sm100FmhaFwdKernelTmaWarpspecialized<cute::tuple<int, int, cute::tuple<"
                     "cute::tuple<int, int>, int> >, cutlass::fmha::collective::"
                     "Sm100FmhaFwdMainloopTmaWarpspecialized<cutlass::bfloat16_t, float> > >"),
    ("cutlass_fmha", "void cutlass::device_kernel<cutlass::fmha::kernel::"
                     "Sm100FmhaMlaKernelTmaWarpspecialized<cute::tuple<cute::C<128>, "
                     "cute::C<128> >, cutlass::bfloat16_t, float> >"),
    ("ck", "ck_tile::kentry<ck_tile::gfx942_t, 2, ck_tile::FmhaFwdKernel<ck_tile::"
           "BlockFmhaPipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t> > > >"),
    ("ck", "ck_tile::kentry<ck_tile::gfx942_t, 1, ck_tile::FmhaFwdSplitKVKernel<ck_tile::"
           "BlockFmhaFwdSplitKVPipelineNWarpSShuffleQRKSVS<ck_tile::bf16_t> > >"),
    ("aiter", "_ZN5aiter32fmha_fwd_hd128_bf16_causal_a32E"),
    ("aiter", "_ZN5aiter39pa_bf16_pertokenFp8_gqa10_2tg_4wE"),
    ("flashinfer", "BatchPrefillWithRaggedKVCacheKernel"),
    ("flashinfer", "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<"
                   "(flashinfer::MaskMode)1, 128u, 1u, 8u, 8u, 8u, 1u, 4u, "
                   "(flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, "
                   "__nv_bfloat16, float, int> >(flashinfer::BatchPrefillPagedParams<"
                   "__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)"),
    ("flashinfer", "void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::"
                   "PosEncodingMode)0, 2u, 2u, 8u, 16u, 1u, 8u, flashinfer::"
                   "BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >"
                   "(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, "
                   "__nv_bfloat16, int>)"),
    ("flashinfer", "void flashinfer::MergeStatesKernel<8u, 16u, 8u, 4u, __nv_bfloat16, "
                   "__nv_bfloat16>(__nv_bfloat16*, float*, unsigned int, unsigned int, "
                   "__nv_bfloat16*, float*)"),
    ("flashinfer", "void flashinfer::mla::BatchMLAPagedAttentionKernel<flashinfer::mla::"
                   "KernelTraits<2u, 1u, 512u, 64u, 64u, __nv_bfloat16>, "
                   "flashinfer::MLAParams<__nv_bfloat16, __nv_bfloat16, int> >"),
    ("paged_attention", "void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, "
                        "128, 16, 128, (vllm::Fp8KVCacheDataType)0, false>(__nv_bfloat16*, "
                        "__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16 const*, "
                        "int, float, int const*, int const*, int, float const*, int, int, int, "
                        "int, float const*, float const*, int, int, int)"),
    ("paged_attention", "void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, "
                        "128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*, "
                        "float*, __nv_bfloat16*)"),
    ("paged_attention", "void vllm::paged_attention_v2_reduce_kernel<__nv_bfloat16, 128, 128, "
                        "512>(__nv_bfloat16*, float const*, float const*, __nv_bfloat16 "
                        "const*, int const*, int)"),
    ("triton_attention", "kernel_unified_attention_2d"),
    ("triton_attention", "kernel_unified_attention_3d"),
    ("triton_attention", "_fwd_grouped_kernel_stage1"),
]
FIRST: dict[str, str] = {}
for _key, _name in NAMES:
    FIRST.setdefault(_key, _name)

# Names that mean attention only inside an attention region (weak rules).
WEAK: list[tuple[str, str]] = [
    ("triton_attention", "_fwd_kernel"),  # vLLM prefix prefill, SGLang extend
    ("triton_attention", "_fwd_kernel_stage2"),  # SGLang decode, second stage
    ("triton_flex", "triton_tem_fused_0"),  # an inductor template with no fused op names
    ("custom_attention", "attn_fwd_kernel"),
    ("custom_attention", "attn_tui_flash_fwd_kernel"),
    ("custom_attention", "attn_fwd"),  # no ROCm evidence: not AOTriton
]

NOT_ATTENTION = [
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, "
    "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma",
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16",
    "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1",
    "Memcpy DtoD (Device -> Device)",
    "triton_poi_fused_add_0",
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0",
    "triton_tem_fused_mm_0",
    "triton_tem_fused_addmm_relu_0",
    "triton_tem_fused_convolution_0",  # an inductor convolution template is not flex
    "void at::native::triu_tril_kernel<bool, int, false, 8, false>(int)",
    "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0",
    "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, "
    "__nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, float)",
    "void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::"
    "BlockScanAlgorithm)2, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>",
    "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, "
    "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, "
    "__nv_bfloat16*, __nv_bfloat16*, long const*, int, int, int, int, int, int, "
    "float const*, float const*)",
    "store_kvcache_kernel",
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8>"
    "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8::Params)",
    "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x64x8_wt64x16x4_ws1x1_wr2x2_ta1x1x8x1_1x8x1x32",
]


@pytest.mark.parametrize(("key", "name"), NAMES, ids=[f"{k}-{n[:30]}" for k, n in NAMES])
def test_attention_kernels_are_named(key: str, name: str) -> None:
    for in_attention in (True, False):  # strong names count in any region
        hit = classify_kernel(name, in_attention=in_attention)
        assert hit is not None and hit[0] == key and hit[1]
    assert is_attention_name(name)


@pytest.mark.parametrize(("key", "name"), WEAK, ids=[n for _, n in WEAK])
def test_weak_names_count_only_inside_attention_regions(key: str, name: str) -> None:
    hit = classify_kernel(name, in_attention=True)
    assert hit is not None and hit[0] == key
    assert classify_kernel(name, in_attention=False) is None


@pytest.mark.parametrize("name", NOT_ATTENTION)
def test_other_kernels_are_not_attention(name: str) -> None:
    assert classify_kernel(name, rocm=True, in_attention=True) is None
    assert not is_attention_name(name)


def test_aotriton_needs_rocm_evidence() -> None:
    assert classify_kernel("attn_fwd", rocm=True) == ("aotriton", "AOTriton (ROCm SDPA)")
    assert identify(["attn_fwd"], call_names=["hipModuleLaunchKernel"]).key == "aotriton"
    rocblas = "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0"
    assert identify(["attn_fwd", rocblas]).key == "aotriton"
    # An NVIDIA kernel that happens to be called so is someone's own kernel.
    nvidia = identify(["attn_fwd_kernel"], call_names=["cudaLaunchKernel"])
    assert nvidia.key == "custom_attention" and "attn_fwd_kernel" in nvidia.name
    assert not rocm_evidence(["attn_fwd", "void at::native::elementwise_kernel<128, 4>()"],
                             ["cudaLaunchKernel", "cuLaunchKernelEx"])


def test_weak_names_outside_attention_regions_name_nothing() -> None:
    assert identify(["triton_tem_fused_0", "_fwd_kernel"], unfused=False).key == "unknown"
    assert identify(["triton_tem_fused_convolution_0"], ["aten::convolution"]).key == "unknown"
    # a strong name is attention wherever it ran (a ProfilerStep region, say)
    step = identify([f"void flash::flash_fwd_splitkv_kernel<{FA2_TRAITS}>()"], unfused=False)
    assert step.key == "flash_attn_2"


OPS: list[tuple[str, str]] = [
    ("", "vllm::unified_attention"),
    ("", "vllm::unified_attention_with_output"),
    ("", "vllm::unified_mla_attention_with_output"),
    ("", "aten::scaled_dot_product_attention"),
    ("", "aten::_native_multi_head_attention"),
    ("math", "aten::_scaled_dot_product_attention_math"),
    ("pytorch_flash", "aten::_scaled_dot_product_flash_attention"),
    ("cutlass_mem_efficient", "aten::_efficient_attention_forward"),
    ("cutlass_mem_efficient", "xformers::efficient_attention_forward_cutlass"),
    ("cudnn", "aten::_scaled_dot_product_cudnn_attention"),
    ("flash_attn_2", "_vllm_fa2_C::varlen_fwd"),
    ("flash_attn_2", "flash_attn::_flash_attn_varlen_forward"),
    ("flash_attn_2", "xformers_flash::flash_fwd"),
    ("flash_attn_3", "_vllm_fa3_C::fwd"),
    ("flash_attn_3", "flash_attn_3::fwd"),
    ("flashmla", "_flashmla_C::fwd_kvcache_mla"),
    ("paged_attention", "_C::paged_attention_v2"),
    ("paged_attention", "_rocm_C::paged_attention"),
    ("aiter", "aiter::mha_fwd"),
    ("flashinfer", "flashinfer::batch_decode_with_paged_kv_cache_run"),
]


@pytest.mark.parametrize(("key", "name"), OPS, ids=[n for _, n in OPS])
def test_attention_ops_and_the_implementation_they_name(key: str, name: str) -> None:
    assert attention_op(name) == key
    assert is_attention_op(name) and is_attention_name(name)


@pytest.mark.parametrize("name", ["aten::matmul", "aten::softmax", "_C::rms_norm",
                                  "_C_cache_ops::reshape_and_cache_flash", "vllm::all_reduce",
                                  "aten::convolution", "flashinfer::rmsnorm",
                                  "ProfilerStep#3", "nccl:all_reduce"])
def test_other_ops_and_annotations_are_not_attention(name: str) -> None:
    assert attention_op(name) is None
    assert not is_attention_name(name)


def test_annotations_named_like_attention() -> None:
    for name in ("attn_fwd", "SelfAttention", "nn.Module: Qwen3Attention_1", "sdpa", "MHA block"):
        assert is_attention_annotation(name) and is_attention_name(name)


def test_server_regions_name_their_implementation() -> None:
    fa3 = FIRST["flash_attn_3"]
    vllm = identify([fa3] * 4, ["vllm::unified_attention_with_output", "_vllm_fa3_C::fwd"], 4)
    assert vllm.key == "flash_attn_3" and vllm.attention_kernels == 1
    sglang = identify(["_fwd_grouped_kernel_stage1", "_fwd_kernel_stage2"] * 2, [], 2)
    assert sglang.key == "triton_attention" and sglang.attention_kernels == 2
    paged = identify([], ["vllm::unified_attention", "_C::paged_attention_v1"], 1)
    assert paged.key == "paged_attention" and paged.attention_kernels == 0


@needs_real_traces
def test_real_nanovllm_decode_ran_flash_attention_2_split_kv() -> None:
    from profiling.trace import Kind, load_trace

    path = REAL_TRACES / "more" / "nanovllm-zhang-yuhui__decode_gpu_0.json"
    if not path.is_file():
        pytest.skip("nano-vllm decode trace absent")
    trace = load_trace(path, use_cache=False)
    kernels = [trace.name(r) for r in range(len(trace)) if trace.kind[r] == int(Kind.KERNEL)]
    attention = [k for k in kernels if is_attention_name(k)]
    assert attention and all("flash_fwd_splitkv" in k for k in attention)
    impl = identify(kernels, unfused=False)  # the whole window, not known to be attention
    assert impl.key == "flash_attn_2" and impl.attention_kernels == len(attention)


def test_fused_kernel_wins_and_counts_per_instance() -> None:
    impl = identify([FIRST["pytorch_flash"]] * 3 + ["Memset (Device)"], ["aten::mul"], 3)
    assert impl.key == "pytorch_flash" and impl.attention_kernels == 1 and impl.fused
    assert impl.name == "PyTorch flash (FlashAttention-2)"
    assert impl.evidence == FIRST["pytorch_flash"]


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
