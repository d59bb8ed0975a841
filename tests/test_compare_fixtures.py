"""Synthetic GPU-like Kineto traces of the attention variants, for compare and findings tests.

A trace is built from a tree: ``Op`` (a cpu_op with optional args), ``Launch``
(a runtime call and the kernel/memcpy/memset it enqueues, joined by
``correlation``), ``Sync`` (a runtime call with no GPU work).  Every launch
takes 6 µs of CPU; the GPU runs events back to back on stream 7, each starting
no earlier than 5 µs after its launch, so GPU times are exactly the given
durations.  The variants mirror what the real H200 samples hold (kernel names
copied from them) at a small shape.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from profiling.trace import Kind, load_trace

SHAPE = {"batch": 2, "heads": 4, "seq": 128, "head_dim": 64}
HAND_FLOPS = 4 * 2 * 4 * 128 * 128 * 64 / 2  # causal forward, by hand
H100 = "NVIDIA H100 80GB HBM3"
BF16 = "c10::BFloat16"
QKV_DIMS = [[2, 4, 128, 64]] * 3


@dataclass
class Launch:
    name: str
    dur: float
    cat: str = "kernel"  # kernel | gpu_memcpy | gpu_memset
    api: str = "cudaLaunchKernel"


@dataclass
class Sync:
    api: str = "cudaDeviceSynchronize"
    dur: float = 30.0


@dataclass
class Op:
    name: str
    children: list[Any] = field(default_factory=list)
    args: dict[str, Any] = field(default_factory=dict)


class Builder:
    """Lays out regions of op trees on one CPU thread and their GPU events on one stream."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.cpu = 100.0
        self.gpu = 100.0
        self.corr = 0
        self.ext = 0

    def _x(self, cat: str, name: str, ts: float, dur: float, pid: int, tid: int,
           args: dict[str, Any]) -> None:
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                            "ts": ts, "dur": dur, "args": args})

    def _node(self, node: Any) -> None:
        if isinstance(node, Launch):
            self.corr += 1
            ts = self.cpu + 1
            self._x("cuda_runtime", node.api, ts, 4, 1, 1, {"correlation": self.corr})
            start = max(self.gpu, ts + 5)
            self._x(node.cat, node.name, start, node.dur, 0, 7,
                    {"correlation": self.corr, "device": 0, "stream": 7})
            self.gpu = start + node.dur
            self.cpu += 6
        elif isinstance(node, Sync):
            self._x("cuda_runtime", node.api, self.cpu + 1, node.dur, 1, 1, {})
            self.cpu += node.dur + 2
            self.gpu = max(self.gpu, self.cpu)
        else:
            start = self.cpu
            self.cpu += 1
            for child in node.children:
                self._node(child)
            self.cpu += 1
            self.ext += 1
            self._x("cpu_op", node.name, start, self.cpu - start, 1, 1,
                    {"External id": self.ext, **node.args})

    def region(self, children: list[Any], name: str = "attn_fwd", cpu_pad: float = 0.0) -> None:
        start = self.cpu
        self.cpu += 1
        for child in children:
            self._node(child)
        self.cpu += 1 + cpu_pad
        self._x("user_annotation", name, start, self.cpu - start, 1, 1, {})
        self.cpu = max(self.cpu, self.gpu) + 20  # the step's synchronize, outside the region

    def document(self, variant: str | None, device: str | None = H100,
                 dtype: str = "bf16") -> dict[str, Any]:
        doc: dict[str, Any] = {"schemaVersion": 1, "traceEvents": self.events}
        if device:
            doc["deviceProperties"] = [{"id": 0, "name": device}]
        if variant:
            doc["attn_tui"] = {"tool": "attn-tui capture", "variant": variant,
                               "config": {**SHAPE, "dtype": dtype, "causal": True,
                                          "region": "attn_fwd", "device": "cuda"}}
        return doc


def _gemm(name: str = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", dur: float = 80.0,
          dims: list[list[int]] | None = None, dtype: str = BF16) -> Op:
    dims = dims or [[2, 4, 128, 64], [2, 4, 64, 128]]
    return Op("aten::matmul", [Op("aten::bmm", [Launch(name, dur, api="cuLaunchKernelEx")],
                                  {"Input type": [dtype, dtype]})],
              {"Input Dims": dims, "Input type": [dtype, dtype]})


def naive_tree() -> list[Any]:
    fill = "void at::native::elementwise_kernel<128, 4, masked_fill_kernel>(int)"
    return [
        _gemm(),
        Op("aten::mul", [Launch("void at::native::vectorized_elementwise_kernel<8, "
                                "MulFunctor<float> >(int)", 120.0)]),
        Op("aten::masked_fill", [
            Op("aten::clone", [Op("aten::copy_", [
                Launch("Memcpy DtoD (Device -> Device)", 120.0, "gpu_memcpy",
                       "cudaMemcpyAsync")])]),
            Op("aten::masked_fill_", [Launch(fill, 350.0)]),
        ]),
        Op("aten::softmax", [Op("aten::_softmax", [Launch(
            "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, "
            "float, 10, false, false>(int)", 280.0)])]),
        _gemm("nvjet_sm90_tst_64x512_64x2_1x2_h_bz_coopB_NNT", 80.0,
              [[2, 4, 128, 128], [2, 4, 128, 64]]),
    ]


def inplace_tree() -> list[Any]:
    tree = naive_tree()
    fill = tree[2].children[1]
    tree[2] = Op("aten::masked_fill_", fill.children)
    return tree


def _sdpa(inner: str, children: list[Any], causal_at: int) -> Op:
    concrete = [""] * 8
    concrete[5] = "True"
    inner_concrete = [""] * 9
    inner_concrete[causal_at] = "True"
    args = {"Input Dims": QKV_DIMS + [[]] * 5, "Input type": [BF16] * 3 + [""] * 5,
            "Concrete Inputs": concrete}
    inner_args = {"Input Dims": QKV_DIMS + [[]] * 6, "Input type": [BF16] * 3 + [""] * 6,
                  "Concrete Inputs": inner_concrete}
    return Op("aten::scaled_dot_product_attention", [Op(inner, children, inner_args)], args)


def math_tree() -> list[Any]:
    to = {"Input type": [BF16, "Scalar", "Scalar", "Scalar", ""],
          "Concrete Inputs": ["", "6", "False", "False", ""]}
    copy = Launch("void at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda>(int)",
                  25.0)
    fill = "void at::native::vectorized_elementwise_kernel<4, FillFunctor<bool> >(int)"
    f32 = "c10::Float"
    children = [Op("aten::to", [Op("aten::_to_copy", [Op("aten::copy_", [copy])])], to)
                for _ in range(3)] + [
        Op("aten::ones", [Op("aten::fill_", [Launch(fill, 1.0)])]),
        Op("aten::tril", [Launch("void at::native::triu_tril_kernel<bool, int, false, 8, false>"
                                 "(int)", 4.0)]),
        Op("aten::where", [Launch("void at::native::elementwise_kernel<128, 2, where>(int)",
                                  4.0)]),
        _gemm("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_"
              "ffma_aligna4_alignc4_execute_kernel__5x_cublas", 540.0, dtype=f32),
        Op("aten::_safe_softmax", [Op("aten::_softmax", [Launch(
            "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, "
            "false>(int)", 280.0)], {"Input type": [f32, "Scalar", "Scalar"]})]),
        _gemm("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_"
              "ffma_aligna4_alignc4_execute_kernel__5x_cublas", 420.0,
              [[2, 4, 128, 128], [2, 4, 128, 64]], f32),
    ]
    return [_sdpa("aten::_scaled_dot_product_attention_math", children, 5)]


FUSED = {
    "sdpa_flash": ("aten::_scaled_dot_product_flash_attention", 4, "void pytorch_flash::"
                   "flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
                   "cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)", 95.0),
    "sdpa_efficient": ("aten::_scaled_dot_product_efficient_attention", 6,
                       "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
                       "AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80>::Params)",
                       180.0),
    "sdpa_cudnn": ("aten::_scaled_dot_product_cudnn_attention", 6,
                   "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64"
                   "_4x1x1_cga1x1x1_kernel0_0", 58.0),
}


def fused_tree(variant: str) -> list[Any]:
    inner, causal_at, kernel, dur = FUSED[variant]
    return [_sdpa(inner, [Launch(kernel, dur)], causal_at)]


TREES: dict[str, Callable[[], list[Any]]] = {
    "naive": naive_tree, "inplace": inplace_tree, "sdpa_math": math_tree,
    **{v: functools.partial(fused_tree, v) for v in FUSED}}


def variant_doc(variant: str, instances: int = 3, **document: Any) -> dict[str, Any]:
    b = Builder()
    for _ in range(instances):
        b.region(TREES[variant]())
    return b.document(variant, **document)


def write_doc(path: Path, doc: dict[str, Any]) -> Path:
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    else:
        path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def synth_traces(tmp_path: Path) -> dict[str, Path]:
    """One synthetic trace file per variant (naive, inplace, sdpa_math, flash, efficient, cuDNN)."""
    return {v: write_doc(tmp_path / f"{v}.json.gz", variant_doc(v)) for v in TREES}


# ---- the builder itself ----

def test_builder_trace_loads_with_linked_gpu_events(tmp_path: Path) -> None:
    trace = load_trace(write_doc(tmp_path / "naive.json", variant_doc("naive")))
    kinds = [Kind(int(k)) for k in trace.kind]
    assert kinds.count(Kind.MEMCPY) == 3
    assert kinds.count(Kind.KERNEL) == 15
    assert kinds.count(Kind.USER_ANNOTATION) == 3
    assert trace.metadata["attn_tui"]["variant"] == "naive"


def test_builder_gpu_time_is_the_sum_of_durations(tmp_path: Path) -> None:
    from profiling.analysis.analysed import AnalysedTrace

    trace = load_trace(write_doc(tmp_path / "f.json", variant_doc("sdpa_flash", 2)))
    instances = AnalysedTrace(trace).instances("attn_fwd")
    assert [v.device_ns for v in instances] == [95_000, 95_000]
