"""What names are attention: annotations, ops and kernels (the one place that says so).

A trace never says "attention"; its names do, once one knows them.  Training
scripts annotate (``record_function("attn_fwd")``), eager PyTorch calls the SDPA
ops, inference servers call their own ops (``vllm::unified_attention_with_output``,
``_C::paged_attention_v2``, ``_vllm_fa3_C::fwd``, ``_flashmla_C::fwd_kvcache_mla``)
or none at all (nano-vllm calls flash-attn's C++ binding directly), and every
fused implementation has kernels of its own spelling.  This module holds those
spellings; ``implementations`` turns them into a name for people and
``attention_regions`` into regions.

Kernel rules are *strong* when the name alone proves attention (a namespace or a
name no other kernel has: ``pytorch_flash::flash_fwd_kernel``,
``BatchDecodeWithPagedKVCacheKernel``) and *weak* when it only means attention
inside a region already known to be attention: Triton kernels named ``_fwd_kernel``
(vLLM's prefix prefill, SGLang's extend), a bare inductor template
``triton_tem_fused_0``, a home-made ``*attn*fwd*`` kernel.  AOTriton's ``attn_fwd``
is AOTriton only with ROCm evidence (a ``hip*`` launch call or a ROCm library
kernel beside it); an NVIDIA kernel of that name is someone's own kernel.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelRule:
    """Kernel names of one implementation: ``key`` is the implementation's key."""

    key: str
    source: str  # the regular expression of its names, compiled on first use (``pattern``)
    strong: bool = True  # the name alone proves attention (else: only in attention regions)
    rocm_only: bool = False  # needs ROCm evidence beside it

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled ``source`` (``_compiled``: on first use, once)."""
        return _compiled(self.source)


def _rule(key: str, pattern: str, strong: bool = True, rocm_only: bool = False) -> KernelRule:
    return KernelRule(key, pattern, strong, rocm_only)


# First match wins: specific before general (FlashMLA before FA2, FA3 before FA2).
KERNEL_RULES: tuple[KernelRule, ...] = (
    _rule("flash_attn_3", r"FlashAttn(?:Fwd|Bwd)(?:Sm\d+|Combine)"),
    _rule("flash_attn_4", r"FlashAttention(?:Forward|Backward)Sm\d+|flash_attncute"),
    _rule("pytorch_flash", r"pytorch_flash::flash_(?:fwd|bwd)"),
    _rule("flashmla", r"(?i)flash_fwd_(?:splitkv_)?mla|flash_?mla"),
    _rule("flash_attn_2", r"(?:^|[\s:<])flash_(?:fwd|bwd)\w*_kernel"),
    _rule("trtllm_fmha", r"fmhaSm\d+\w*Kernel|fmha_v2_\w+"),
    _rule("cutlass_fmha", r"cutlass::fmha::|Sm\d+Fmha(?:Fwd|Bwd|Mla|Gen)\w*Kernel"),
    _rule("cutlass_mem_efficient",
          r"fmha_cutlass[FB]|cutlass[FB]_\w*(?:aligned|notaligned)|"
          r"PyTorchMemEffAttention::Attention(?:Backward)?Kernel"),
    _rule("cudnn", r"cudnn\w*_(?:sdpa|fmha|mha)|cudnn\w*flash_[fb]prop"),
    _rule("triton_flex", r"flex_(?:attention|decoding)"),
    _rule("triton_flex", r"^triton_tem_fused_\d+$", strong=False),
    _rule("ck", r"ck_tile::Fmha|ck_fmha|Fmha(?:Fwd|Bwd)\w*Kernel|"
                r"DeviceBatchedGemmSoftmaxGemm|DeviceGroupedMultiheadAttention"),
    _rule("aiter", r"aiter\w*(?:fmha|mha_|_fwd_hd|paged_attention|pa_|mla_)"),
    _rule("aotriton", r"^(?:attn_fwd|attn_bwd|bwd_kernel_dk_dv|bwd_kernel_dq)(?:_\w+)?$",
          rocm_only=True),
    _rule("flashinfer",
          r"(?:Batch|Single)(?:Prefill|Decode)With\w*Kernel|BatchMLAPagedAttention\w*Kernel|"
          r"flashinfer::(?:\w+::)*\w*(?:MergeState|Attention)\w*"),
    _rule("paged_attention",
          r"paged_attention_(?:v[12]_kernel|v2_reduce_kernel|ll4mi\w*)|_paged_attn_decode\w*"),
    _rule("triton_attention",
          r"kernel_unified_attention_[23]d|_fwd_grouped_kernel_stage1|_decode_att_m_fwd"),
    _rule("triton_attention",
          r"^(?:_fwd_kernel(?:_stage[12]|_alibi|_flash_decode_stage[12])?|_attn_fwd\w*|"
          r"reduce_segments)$", strong=False),
    _rule("custom_attention", r"(?i)^(?!triton_(?:poi|red|per)_)\w*attn\w*fwd\w*$",
          strong=False),
)
"""Attention kernels of every implementation recognised (see the module's text)."""

# Ops that are attention, with the implementation they name ("" when the op is
# generic and the kernels say which implementation ran); compiled on first use.
OP_RULES: tuple[tuple[str, str], ...] = (
    ("math", r"^aten::_scaled_dot_product_attention_math"),
    ("cpu_flash", r"^aten::_scaled_dot_product_flash_attention_for_cpu"),
    ("pytorch_flash",
     r"^aten::(?:_scaled_dot_product_flash_attention|_flash_attention_forward)$"),
    ("cutlass_mem_efficient", r"^aten::(?:_scaled_dot_product_efficient_attention|"
                              r"_efficient_attention_forward)$|"
                              r"^xformers::efficient_attention_forward_cutlass"),
    ("cudnn", r"^aten::(?:_scaled_dot_product_cudnn_attention|_cudnn_attention_forward)$"),
    ("flash_attn_3", r"^(?:_vllm_fa3_C|flash_attn_3|_flash_attn_3)::"),
    ("flash_attn_2", r"^(?:_vllm_fa2_C|flash_attn|xformers_flash|flash_attn_2_cuda)::"),
    ("flashmla", r"^_flashmla_C::"),
    ("paged_attention", r"^_(?:C|rocm_C)::paged_attention"),
    ("aiter", r"^aiter::(?:mha|fmha|paged_attention|mla)"),
    ("flashinfer", r"^flashinfer::\w*(?:prefill|decode|attention|mla)"),
    ("", r"(?i)attn|attention|\bsdpa\b|fmha|^aten::_native_multi_head"),
)

ANNOTATION = r"(?i)attn|attention|\bsdpa\b|fmha|\bmha\b"
"""A ``record_function`` or region name that says attention."""

_ROCM_KERNEL = r"^Cijk_|ck_tile::|^ck::|_ZN5aiter|__amd_rocclr|gfx9\d\d"
_ROCM_CALL = r"^hip[A-Z]"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``re.compile`` once per pattern, when first matched, not at import: the commands
    that never look for attention (``stats``, ``table``, ``slices`` on a reopen)
    would pay milliseconds for these patterns on every run."""
    return re.compile(pattern)


def attention_kernel(name: str, rocm: bool = False,
                     in_attention: bool = True) -> KernelRule | None:
    """The rule that makes kernel ``name`` attention, or None.

    ``rocm``: there is ROCm evidence beside the kernel (see ``rocm_evidence``);
    ``in_attention``: the kernel ran in a region known to be attention (weak rules
    apply only there).
    """
    for rule in KERNEL_RULES:
        if (rule.strong or in_attention) and (rocm or not rule.rocm_only) \
                and rule.pattern.search(name):
            return rule
    return None


def attention_op(name: str) -> str | None:
    """The implementation key an attention op names ("" for a generic one), or None
    when ``name`` is not an attention op."""
    for key, pattern in OP_RULES:
        if _compiled(pattern).search(name):
            return key
    return None


def is_attention_op(name: str) -> bool:
    return attention_op(name) is not None


def is_attention_annotation(name: str) -> bool:
    return bool(_compiled(ANNOTATION).search(name))


def is_attention_name(name: str) -> bool:
    """A region, op or kernel named like attention (weak kernel names count only
    inside attention regions, so they do not count here)."""
    return (is_attention_annotation(name) or is_attention_op(name)
            or attention_kernel(name, in_attention=False) is not None)


def rocm_evidence(kernel_names: Iterable[str], call_names: Iterable[str] = ()) -> bool:
    """Whether names show a ROCm run: a ``hip*`` launch call, or a ROCm library
    kernel (rocBLAS/hipBLASLt ``Cijk_``, Composable Kernel, aiter, ROCclr)."""
    call, kernel = _compiled(_ROCM_CALL), _compiled(_ROCM_KERNEL)
    return (any(call.search(c) for c in call_names)
            or any(kernel.search(k) for k in kernel_names))
