"""Which attention ran: name the implementation from the kernels (and ops) of a region.

A trace never says "this was FlashAttention-2"; the kernel names do, once one
knows them: PyTorch's vendored flash kernels live in ``pytorch_flash::``, the
CUTLASS memory-efficient kernels are ``fmha_cutlassF_*``, cuDNN's generated SDPA
kernels are ``cudnn_generated_fort_native_sdpa_*``, FlashAttention-3 is
``flash::FlashAttnFwdSm90``, inductor's flex template is ``triton_tem_*``, AMD's
Composable Kernel is ``ck_tile::FmhaFwdKernel`` and aiter's assembly kernels are
mangled ``_ZN5aiter...fmha...``.  When no fused attention kernel ran (the
naive variants, SDPA's math backend, any CPU trace), the ops tell the story:
``aten::_scaled_dot_product_attention_math`` or a matmul + softmax pair.

Everything here works on names only, so it is cheap and testable without a trace.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Implementation:
    """The attention implementation a region ran, for a column or a panel.

    ``key`` is stable (tests and scripts match on it); ``name`` is for people;
    ``evidence`` is the kernel or op name that decided it (empty when unknown);
    ``attention_kernels`` counts the kernels per instance that are attention
    itself (1 for a fused kernel; 0 for unfused paths and CPU traces).
    """

    key: str
    name: str
    evidence: str = ""
    attention_kernels: int = 0

    @property
    def fused(self) -> bool:
        return self.key in _FUSED_KEYS


UNKNOWN = Implementation("unknown", "")

# (key, human name, kernel-name pattern).  First match wins: FA3 before FA2, specific first.
_KERNEL_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (key, name, re.compile(pattern))
    for key, name, pattern in (
        ("flash_attn_3", "FlashAttention-3 (Hopper)", r"FlashAttnFwdSm90"),
        ("flash_attn_4", "FlashAttention-4 (CuTe DSL)",
         r"FlashAttentionForwardSm100|flash_attncute|FlashAttentionForwardSm90"),
        ("pytorch_flash", "PyTorch flash (FlashAttention-2)", r"pytorch_flash::flash_fwd"),
        ("flash_attn_2", "FlashAttention-2 (flash-attn)",
         r"(?:^|[\s:])flash_fwd_(?:splitkv_)?kernel"),
        ("cutlass_mem_efficient", "CUTLASS memory-efficient (xFormers)",
         r"fmha_cutlassF|PyTorchMemEffAttention::AttentionKernel"),
        ("cudnn", "cuDNN fused SDPA",
         r"cudnn_generated_fort_native_sdpa|cudnn.*(?:sdpa|fmha|fprop)"),
        ("triton_flex", "flex_attention (Triton template)",
         r"^triton_tem_fused_(?!(?:add|b)?mm_)|flex_attention"),
        ("ck", "Composable Kernel FMHA (AMD)", r"ck_tile::Fmha|ck_fmha|FmhaFwdKernel"),
        ("aiter", "aiter FMHA (AMD)", r"aiter.*(?:fmha|mha_|_fwd_hd|paged_attention|pa_)"),
        ("aotriton", "AOTriton (ROCm SDPA)", r"^attn_fwd(?:_\w+)?$"),
        ("flashinfer", "FlashInfer", r"BatchPrefill\w*Kernel|BatchDecode\w*Kernel|flashinfer::"),
        ("custom_attention", "custom attention kernel",
         r"(?i)^(?!triton_(?:poi|red|per)_)\w*attn\w*fwd\w*$"),
    )
)
_FUSED_KEYS = frozenset(rule[0] for rule in _KERNEL_RULES) | {"cpu_flash"}

# Ops that name the SDPA backend even where kernels are absent (CPU traces, math backend).
_OP_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("math", "SDPA math backend (unfused)", ("aten::_scaled_dot_product_attention_math",)),
    ("cpu_flash", "PyTorch flash (CPU)", ("aten::_scaled_dot_product_flash_attention_for_cpu",)),
)
_OP_FUSED_HINTS: dict[str, tuple[str, ...]] = {
    # When kernels are missing (a CPU-only capture of a CUDA program), the op still names it.
    "pytorch_flash": ("aten::_scaled_dot_product_flash_attention",
                      "aten::_flash_attention_forward"),
    "cutlass_mem_efficient": ("aten::_scaled_dot_product_efficient_attention",
                              "aten::_efficient_attention_forward"),
    "cudnn": ("aten::_scaled_dot_product_cudnn_attention", "aten::_cudnn_attention_forward"),
}
_MATMUL_OPS = frozenset({"aten::matmul", "aten::bmm", "aten::mm", "aten::baddbmm", "aten::einsum"})
_SOFTMAX_OPS = frozenset({"aten::softmax", "aten::_softmax", "aten::_safe_softmax"})
_GEMM_KERNEL = re.compile(r"(?i)gemm|nvjet|xmma|cutlass.*tensorop|Cijk_|matmul|wgmma")
_SOFTMAX_KERNEL = re.compile(r"(?i)softmax")


def classify_kernel(name: str) -> tuple[str, str] | None:
    """``(key, human name)`` when ``name`` is a fused attention kernel, else None."""
    for key, human, pattern in _KERNEL_RULES:
        if pattern.search(name):
            return key, human
    return None


def is_gemm_kernel(name: str) -> bool:
    return bool(_GEMM_KERNEL.search(name))


def is_softmax_kernel(name: str) -> bool:
    return bool(_SOFTMAX_KERNEL.search(name))


def _bare(name: str, limit: int = 40) -> str:
    """A kernel name without return type, template and parameter lists, cut to ``limit``."""
    bare = name.removeprefix("void ").split("(")[0].split("<")[0].strip()
    return bare if len(bare) <= limit else bare[: limit - 1] + "…"


def identify(kernel_names: Iterable[str], op_names: Iterable[str] = (),
             instances: int = 1, unfused: bool = True) -> Implementation:
    """Name the attention implementation of a region from its GPU kernel and CPU op names.

    ``kernel_names`` are every kernel of every instance (so counts divide by
    ``instances``); ``op_names`` the CPU ops inside the region.  Fused kernels
    win over ops (a flash kernel is the proof); with no fused kernel, the SDPA
    op names the backend, and a matmul + softmax pair means unfused attention,
    unless ``unfused`` is False (a region that is not known to be attention: a
    ResNet step has GEMMs and a softmax too).
    """
    counts = Counter(kernel_names)  # classify each distinct name once: traces repeat them
    kernels = list(counts)
    ops = set(op_names)
    per = max(instances, 1)
    found: dict[str, tuple[str, str, int]] = {}
    for kernel, n in counts.items():
        hit = classify_kernel(kernel)
        if hit is None:
            continue
        key, human = hit
        first = found.get(key)
        found[key] = (human, first[1] if first else kernel, (first[2] if first else 0) + n)
    if found:
        # The implementation with the most kernels; ties go to the rule order.
        order = [rule[0] for rule in _KERNEL_RULES]
        key = max(found, key=lambda k: (found[k][2], -order.index(k)))
        human, evidence, count = found[key]
        if key == "custom_attention":  # say which kernel: the name is all we know of it
            human = f"{human} ({_bare(evidence)})"
        return Implementation(key, human, evidence, round(count / per))
    for key, human, names in _OP_RULES:
        for op in names:
            if op in ops:
                return Implementation(key, human, op, 0)
    for key, names in _OP_FUSED_HINTS.items():
        for op in names:
            if op in ops:
                human = next(rule[1] for rule in _KERNEL_RULES if rule[0] == key)
                return Implementation(key, human, op, 0)
    if not unfused:
        return UNKNOWN
    gemm = next((k for k in kernels if is_gemm_kernel(k)), None)
    softmax = next((k for k in kernels if is_softmax_kernel(k)), None)
    if gemm and softmax:
        return Implementation("unfused", "unfused (matmul + softmax kernels)", gemm, 0)
    if ops & _MATMUL_OPS and ops & _SOFTMAX_OPS:
        return Implementation("unfused", "unfused (matmul + softmax ops)",
                              sorted(ops & _MATMUL_OPS)[0], 0)
    return UNKNOWN
