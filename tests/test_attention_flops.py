"""Attention FLOPs (causal-aware), shapes from the capture config or the ops, and device peaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.attention_flops import (
    AttentionShape,
    attention_work,
    causal_scores,
    config_region,
    config_variant,
    shape_from_config,
    shape_from_op,
    tflops_per_second,
    work_from_ops,
)
from profiling.analysis.device_peaks import device_names, match_device, trace_device_name
from profiling.trace import load_trace
from profiling.trace.op_inputs import dtype_family
from tests.test_compare_fixtures import HAND_FLOPS, Builder, naive_tree, variant_doc, write_doc

SDPA = "aten::scaled_dot_product_attention"


def _sdpa_args(dims: list[list[int]], causal: str | None = "True") -> dict:
    concrete = ["", "", "", "", "0.", causal if causal is not None else "", "", "False"]
    args = {"Input Dims": dims + [[]] * 5, "Input type": ["c10::BFloat16"] * 3 + [""] * 5}
    if causal is not None:
        args["Concrete Inputs"] = concrete
    return args


def test_causal_forward_is_half_of_two_matmuls() -> None:
    shape = AttentionShape(8 * 16, 1024, 1024, 64, 64, True, "bf16", "test")
    assert shape.flops() == 4 * 8 * 16 * 1024 * 1024 * 64 / 2  # the blog's 17.2 GFLOP
    assert shape.flops() == 17_179_869_184.0
    full = AttentionShape(8 * 16, 1024, 1024, 64, 64, False, "bf16", "test")
    assert full.flops() == 4 * 8 * 16 * 1024 * 1024 * 64  # dense: every score


def test_unknown_causality_gives_no_flops() -> None:
    assert AttentionShape(4, 16, 16, 8, 8, None, None, "x").flops() is None


def test_config_shape_nested_and_flat() -> None:
    nested = {"attn_tui": {"variant": "naive", "config": {
        "batch": 8, "heads": 16, "seq": 1024, "head_dim": 64, "dtype": "bf16", "causal": True}}}
    shape = shape_from_config(nested)
    assert shape is not None and shape.flops() == 17_179_869_184.0
    assert shape.batch == 8 and shape.heads == 16 and shape.dtype == "bf16"
    assert config_variant(nested) == "naive" and config_region(nested) == "attn_fwd"
    flat = {"attn_tui": {"batch": 2, "heads": 2, "seq": 8, "head_dim": 4, "causal": False}}
    assert shape_from_config(flat).flops() == 4 * 2 * 2 * 8 * 8 * 4  # type: ignore[union-attr]
    assert shape_from_config({}) is None
    assert shape_from_config({"attn_tui": {"batch": 2}}) is None
    assert shape_from_config({"attn_tui": "junk"}) is None


def test_sdpa_op_shape_bhsd_with_causal_flag() -> None:
    shape = shape_from_op(SDPA, _sdpa_args([[16, 16, 559, 64]] * 3))
    assert shape is not None
    assert (shape.batch_heads, shape.seq_q, shape.seq_k, shape.head_dim) == (256, 559, 559, 64)
    assert shape.causal is True and shape.dtype == "BFloat16"
    assert shape.flops() == 4 * 256 * 559 * 559 * 64 / 2


def test_sdpa_op_without_concrete_inputs_has_unknown_causality() -> None:
    shape = shape_from_op(SDPA, _sdpa_args([[2, 2, 8, 4]] * 3, causal=None))
    assert shape is not None and shape.causal is None and shape.flops() is None


def test_grouped_query_attention_counts_query_heads() -> None:
    shape = shape_from_op(SDPA, _sdpa_args([[1, 32, 64, 128], [1, 8, 64, 128], [1, 8, 64, 128]],
                                           "False"))
    assert shape is not None and shape.batch_heads == 32
    assert shape.flops() == 4 * 32 * 64 * 64 * 128


def test_flash_bshd_layout_and_efficient_mask_type() -> None:
    flash = {"Input Dims": [[16, 559, 16, 64]] * 3 + [[]] * 12,
             "Concrete Inputs": ["", "", "", "", "", "559", "559", "0.", "True", "False"]}
    shape = shape_from_op("aten::_flash_attention_forward", flash)
    assert shape is not None and shape.batch_heads == 256 and shape.seq_q == 559
    assert shape.causal is True
    eff = {"Input Dims": [[2, 128, 4, 64]] * 3 + [[]] * 7,
           "Concrete Inputs": [""] * 9 + ["1"]}
    shape = shape_from_op("aten::_efficient_attention_forward", eff)
    assert shape is not None and shape.causal is True and shape.batch_heads == 8
    varlen = {"Input Dims": [[1000, 16, 64]] * 3}
    assert shape_from_op("aten::_flash_attention_forward", varlen) is None


def test_custom_flash_op_of_the_kernels_variant() -> None:
    args = {"Input Dims": [[8, 1024, 16, 64]] * 3 + [[], []],
            "Concrete Inputs": ["", "", "", "0.125", "True"]}
    shape = shape_from_op("attn_tui::flash_attn_fwd", args)
    assert shape is not None and shape.flops() == 17_179_869_184.0


def test_unreadable_op_args_give_none() -> None:
    assert shape_from_op(SDPA, {}) is None
    assert shape_from_op(SDPA, {"Input Dims": [[2, 2], []]}) is None
    assert shape_from_op(SDPA, {"Input Dims": [["a"], [1], [1]]}) is None
    assert shape_from_op("aten::add", _sdpa_args([[2, 2, 8, 4]] * 3)) is None


def test_work_from_config_and_from_ops_agree(tmp_path: Path) -> None:
    trace = load_trace(write_doc(tmp_path / "m.json", variant_doc("sdpa_math")))
    rows = AnalysedTrace(trace).instances("attn_fwd")[0].cpu_rows(trace)
    from_config = attention_work(trace, "attn_fwd", rows)
    from_ops = work_from_ops(trace, rows)
    assert from_config is not None and from_ops is not None
    assert from_config.flops == from_ops.flops == HAND_FLOPS
    assert "capture config" in from_config.source and SDPA in from_ops.source
    assert from_ops.calls == 1 and from_ops.causal is True


def test_unfused_matmul_pair_counts_the_full_score_matrix(tmp_path: Path) -> None:
    b = Builder()
    b.region(naive_tree())
    trace = load_trace(write_doc(tmp_path / "n.json", b.document(None)))
    rows = AnalysedTrace(trace).instances("attn_fwd")[0].cpu_rows(trace)
    work = attention_work(trace, "attn_fwd", rows)  # no config: shapes
    assert work is not None and "matmul shapes" in work.source
    assert work.causal is None and work.convention == "dense" and work.kind == "matmul_shapes"
    assert work.flops == 4 * 2 * 4 * 128 * 128 * 64  # every score the matmuls compute
    assert work.note.startswith("causal unknown: dense FLOPs")


def test_repeated_calls_fold_and_add_up(tmp_path: Path) -> None:
    from tests.test_compare_fixtures import fused_tree

    b = Builder()
    b.region(fused_tree("sdpa_flash") + fused_tree("sdpa_flash"))
    trace = load_trace(write_doc(tmp_path / "two.json", b.document(None)))
    work = work_from_ops(trace, AnalysedTrace(trace).instances("attn_fwd")[0].cpu_rows(trace))
    assert work is not None and work.calls == 2 and len(work.shapes) == 1
    assert work.flops == 2 * HAND_FLOPS


def test_tflops_helper() -> None:
    assert tflops_per_second(17_179_869_184.0, 95.4) == pytest.approx(180.08, rel=1e-3)
    assert tflops_per_second(None, 10.0) is None
    assert tflops_per_second(1e9, 0.0) is None


# ---- device peaks ----

@pytest.mark.parametrize(("name", "model", "bf16"), [
    ("NVIDIA H200", "H200 SXM", 989.4),
    ("NVIDIA H200 NVL", "H200 NVL", 835.5),
    ("NVIDIA H100 80GB HBM3", "H100 SXM", 989.4),
    ("NVIDIA H100 PCIe", "H100 PCIe", 756.5),
    ("NVIDIA H100 NVL", "H100 NVL", 835.5),
    ("NVIDIA GH200 480GB", "GH200", 989.4),
    ("NVIDIA A100-SXM4-80GB", "A100", 312.0),
    ("NVIDIA A100-PG509-200", "A100", 312.0),
    ("NVIDIA L4", "L4", 121.0),
    ("NVIDIA L40S", "L40S", 362.05),
    ("NVIDIA A10", "A10", 125.0),
    ("AMD Instinct MI300X", "MI300X", 1307.4),
    ("AMD Instinct MI250X", "MI250X", 383.0),
    ("AMD Instinct MI250", "MI250", 362.1),
])
def test_known_devices_match(name: str, model: str, bf16: float) -> None:
    peak = match_device(name)
    assert peak is not None and peak.model == model and peak.bf16_tflops == bf16
    assert "datasheet" in peak.source


def test_v100_has_fp16_but_no_bf16_peak() -> None:
    peak = match_device("Tesla V100-SXM2-32GB")
    assert peak is not None and peak.tflops("bf16") is None and peak.tflops("fp16") == 125.0
    assert match_device("Tesla V100-PCIE-16GB").fp16_tflops == 112.0  # type: ignore[union-attr]
    assert peak.tflops("fp32") is None


@pytest.mark.parametrize("name", ["AMD Radeon Graphics", "NVIDIA A10G", "NVIDIA GeForce RTX 4090",
                                  "Intel(R) Data Center GPU Max 1550", "", None])
def test_unknown_devices_stay_blank(name: str | None) -> None:
    assert match_device(name) is None


def test_dtype_families() -> None:
    assert dtype_family("c10::BFloat16") == "bf16" and dtype_family("torch.float16") == "fp16"
    assert dtype_family("Half") == "fp16" and dtype_family("float") == "fp32"
    assert dtype_family("int64") is None and dtype_family(None) is None


def test_trace_device_name_by_index_and_fallbacks() -> None:
    meta = {"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"},
                                 {"id": 1, "name": "NVIDIA A100-SXM4-80GB"}]}
    assert device_names(meta) == {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA A100-SXM4-80GB"}
    assert trace_device_name(meta, 1) == "NVIDIA A100-SXM4-80GB"
    assert trace_device_name(meta) is None  # two different GPUs and no index: no guess
    same = {"deviceProperties": [{"id": i, "name": "NVIDIA H200"} for i in range(8)]}
    assert trace_device_name(same) == "NVIDIA H200"
    old = {"computeProperties": [{"id": 0, "name": "Tesla V100-DGXS-32GB"}]}
    assert trace_device_name(old) == "Tesla V100-DGXS-32GB"
    stored = {"attn_tui": {"environment": {"gpu": "NVIDIA H200"}}}
    assert trace_device_name(stored) == "NVIDIA H200"
    assert trace_device_name({"deviceProperties": "junk"}) is None


def test_causal_scores_follow_the_masks_alignment() -> None:
    """A causal mask keeps a triangle of the scores: half of a square one; with fewer
    queries than keys, torch's top-left mask keeps ``Sq^2/2`` and FlashAttention's
    bottom-right one ``Sq*Sk - Sq^2/2`` (a decode step sees every key)."""
    assert causal_scores(1024, 1024) == causal_scores(1024, 1024, True) == 1024 * 1024 / 2
    assert causal_scores(1, 4096) == 0.5 and causal_scores(1, 4096, True) == 4096 - 0.5
    assert causal_scores(256, 1024) == 256 * 256 / 2
    assert causal_scores(256, 1024, True) == 256 * 1024 - 256 * 256 / 2
    assert causal_scores(1024, 256) == 1024 * 256 - 256 * 256 / 2  # more queries than keys
    assert causal_scores(1024, 256, True) == 256 * 256 / 2
    # brute force: count the kept (query, key) pairs, compare up to the triangle's diagonal
    for sq, sk in ((7, 19), (19, 7), (12, 12)):
        top_left = sum(min(i + 1, sk) for i in range(sq))
        bottom_right = sum(min(max(i + sk - sq + 1, 0), sk) for i in range(sq))
        assert abs(causal_scores(sq, sk) - top_left) <= min(sq, sk) / 2
        assert abs(causal_scores(sq, sk, True) - bottom_right) <= min(sq, sk) / 2


def test_flash_attn_decode_counts_every_key() -> None:
    """One query over 4,096 keys: flash_attn's causal flag (bottom-right) keeps every
    key, so the count is the dense one less half a score, not half of it."""
    args = {"Input Dims": [[2, 1, 8, 64], [2, 4096, 8, 64], [2, 4096, 8, 64]] + [[]] * 5,
            "Concrete Inputs": ["", "", "", "0.", "0.125", "True", "", ""]}
    shape = shape_from_op("flash_attn::_flash_attn_forward", args)
    assert shape is not None and shape.causal is True and shape.bottom_right
    assert shape.flops() == 2.0 * 16 * (4096 - 0.5) * 128
    eff = {"Input Dims": [[2, 1, 4, 64], [2, 512, 4, 64], [2, 512, 4, 64]] + [[]] * 7,
           "Concrete Inputs": [""] * 9 + ["2"]}  # custom_mask_type 2: CausalFromBottomRight
    shape = shape_from_op("aten::_efficient_attention_forward", eff)
    assert shape is not None and shape.causal is True and shape.bottom_right
    sdpa = shape_from_op(SDPA, _sdpa_args([[2, 8, 1, 64], [2, 8, 4096, 64], [2, 8, 4096, 64]]))
    assert sdpa is not None and not sdpa.bottom_right  # torch's is_causal: top left
    assert sdpa.flops() == 2.0 * 16 * 0.5 * 128
