"""Which attention ran: name the implementation from the kernels (and ops) of a region.

A trace never says "this was FlashAttention-2"; the kernel names do, once one
knows them (``attention_names`` holds every spelling: PyTorch's vendored
``pytorch_flash::``, flash-attn's ``flash::flash_fwd_splitkv_kernel``, FA3's
``FlashAttnFwdSm90``, cuDNN's ``cudnn_generated_fort_native_sdpa_*``, FlashInfer's
``BatchDecodeWithPagedKVCacheKernel``, vLLM's ``paged_attention_v2_kernel``, AMD's
``ck_tile::FmhaFwdKernel``, ...).  When no fused attention kernel ran (the naive
variants, SDPA's math backend, any CPU trace), the ops tell the story:
``aten::_scaled_dot_product_attention_math``, a server's backend op, or a
matmul + softmax pair.  Only names are evidence: nothing is guessed from the
device or the shapes.

Everything here works on names only, so it is cheap and testable without a trace.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from profiling.analysis.attention_names import (
    KERNEL_RULES,
    attention_kernel,
    attention_op,
    rocm_evidence,
)


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

HUMAN_NAMES: dict[str, str] = {
    "flash_attn_3": "FlashAttention-3 (Hopper)",
    "flash_attn_4": "FlashAttention-4 (CuTe DSL)",
    "pytorch_flash": "PyTorch flash (FlashAttention-2)",
    "flashmla": "FlashMLA",
    "flash_attn_2": "FlashAttention-2 (flash-attn)",
    "trtllm_fmha": "TensorRT-LLM FMHA (trtllm-gen)",
    "cutlass_fmha": "CUTLASS FMHA",
    "cutlass_mem_efficient": "CUTLASS memory-efficient (xFormers)",
    "cudnn": "cuDNN fused SDPA",
    "triton_flex": "flex_attention (Triton template)",
    "ck": "Composable Kernel FMHA (AMD)",
    "aiter": "aiter FMHA (AMD)",
    "aotriton": "AOTriton (ROCm SDPA)",
    "flashinfer": "FlashInfer",
    "paged_attention": "vLLM paged attention",
    "triton_attention": "Triton attention kernel (vLLM/SGLang)",
    "custom_attention": "custom attention kernel",
    "math": "SDPA math backend (unfused)",
    "cpu_flash": "PyTorch flash (CPU)",
}
"""The implementations recognised (``attention_names`` says by which names), for people."""

_FUSED_KEYS = frozenset(rule.key for rule in KERNEL_RULES) | {"cpu_flash"}
_RULE_ORDER = list(dict.fromkeys(rule.key for rule in KERNEL_RULES))
_MATMUL_OPS = frozenset({"aten::matmul", "aten::bmm", "aten::mm", "aten::baddbmm", "aten::einsum"})
_SOFTMAX_OPS = frozenset({"aten::softmax", "aten::_softmax", "aten::_safe_softmax"})
_GEMM_KERNEL = re.compile(r"(?i)gemm|nvjet|xmma|cutlass.*tensorop|Cijk_|matmul|wgmma")
_SOFTMAX_KERNEL = re.compile(r"(?i)softmax")


def classify_kernel(name: str, rocm: bool = False,
                    in_attention: bool = True) -> tuple[str, str] | None:
    """``(key, human name)`` when ``name`` is an attention kernel, else None.

    ``rocm``: ROCm evidence beside it; ``in_attention``: it ran in an attention
    region (weak names such as ``_fwd_kernel`` count only there).
    """
    rule = attention_kernel(name, rocm=rocm, in_attention=in_attention)
    return (rule.key, HUMAN_NAMES[rule.key]) if rule is not None else None


def is_gemm_kernel(name: str) -> bool:
    return bool(_GEMM_KERNEL.search(name))


def is_softmax_kernel(name: str) -> bool:
    return bool(_SOFTMAX_KERNEL.search(name))


def _bare(name: str, limit: int = 40) -> str:
    """A kernel name without return type, template and parameter lists, cut to ``limit``."""
    bare = name.removeprefix("void ").split("(")[0].split("<")[0].strip()
    return bare if len(bare) <= limit else bare[: limit - 1] + "…"


def identify(kernel_names: Iterable[str], op_names: Iterable[str] = (),
             instances: int = 1, unfused: bool = True, call_names: Iterable[str] = (),
             in_attention: bool | None = None) -> Implementation:
    """Name the attention implementation of a region from its GPU kernel and CPU op names.

    ``kernel_names`` are every kernel of every instance (so counts divide by
    ``instances``); ``op_names`` the CPU ops inside the region; ``call_names``
    the runtime calls that launched the kernels (``hip*`` is ROCm evidence).
    Fused kernels win over ops (a flash kernel is the proof); with no fused
    kernel, the attention op names the backend, and a matmul + softmax pair
    means unfused attention.  ``unfused`` False (a region that is not known to
    be attention: a ResNet step has GEMMs and a softmax too) turns that pair
    off, and so does it the weak kernel names unless ``in_attention`` says
    otherwise.
    """
    counts = Counter(kernel_names)  # classify each distinct name once: traces repeat them
    ops = set(op_names)
    attention = unfused if in_attention is None else in_attention
    found = _kernel_evidence(counts, rocm_evidence(counts, call_names), attention)
    if found:
        # The implementation with the most kernels; ties go to the rule order.
        key = max(found, key=lambda k: (found[k][1], -_RULE_ORDER.index(k)))
        evidence, count = found[key]
        human = HUMAN_NAMES[key]
        if key == "custom_attention":  # say which kernel: the name is all we know of it
            human = f"{human} ({_bare(evidence)})"
        return Implementation(key, human, evidence, round(count / max(instances, 1)))
    by_op = _op_evidence(ops)
    if by_op is not None:
        return by_op
    if not unfused:
        return UNKNOWN
    return _unfused(list(counts), ops)


def _kernel_evidence(counts: Counter[str], rocm: bool,
                     attention: bool) -> dict[str, tuple[str, int]]:
    """Per implementation key: its first kernel name and how many of its kernels ran."""
    found: dict[str, tuple[str, int]] = {}
    for kernel, n in counts.items():
        hit = classify_kernel(kernel, rocm=rocm, in_attention=attention)
        if hit is None:
            continue
        first = found.get(hit[0])
        found[hit[0]] = (first[0] if first else kernel, (first[1] if first else 0) + n)
    return found


def _op_evidence(ops: set[str]) -> Implementation | None:
    """The implementation an attention op names (math, CPU flash, backend ops), if any."""
    named = sorted((key, op) for op in ops if (key := attention_op(op)))
    if not named:
        return None
    order = {k: i for i, k in enumerate(("math", "cpu_flash"))}
    key, op = min(named, key=lambda ko: (order.get(ko[0], len(order)), ko))
    return Implementation(key, HUMAN_NAMES[key], op, 0)


def _unfused(kernels: list[str], ops: set[str]) -> Implementation:
    """Unfused attention: a matmul and a softmax, as kernels or as ops."""
    gemm = next((k for k in kernels if is_gemm_kernel(k)), None)
    softmax = next((k for k in kernels if is_softmax_kernel(k)), None)
    if gemm and softmax:
        return Implementation("unfused", "unfused (matmul + softmax kernels)", gemm, 0)
    if ops & _MATMUL_OPS and ops & _SOFTMAX_OPS:
        return Implementation("unfused", "unfused (matmul + softmax ops)",
                              sorted(ops & _MATMUL_OPS)[0], 0)
    return UNKNOWN
