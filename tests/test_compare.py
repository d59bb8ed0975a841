"""``compare``: the blog's story side by side, on synthetic, sample and real traces."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from profiling.analysis.compare import compare_traces, summarize_trace
from profiling.analysis.links import link_gpu_events
from profiling.analysis.regions import find_regions
from profiling.trace import load_trace
from tests.conftest import SAMPLE_TRACES, needs_real_traces, real_trace_files
from tests.test_compare_fixtures import (
    HAND_FLOPS,
    Builder,
    fused_tree,
    synth_traces,  # noqa: F401  (fixture)
    variant_doc,
    write_doc,
)
from tui.cli import main
from tui.compare_table import COLUMNS, table_rows

ORDER = ["naive", "inplace", "sdpa_math", "sdpa_flash", "sdpa_efficient", "sdpa_cudnn"]


def _compare_json(paths: list[Path], capsys: pytest.CaptureFixture[str], *extra: str) -> list:
    assert main(["compare", *map(str, paths), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _by_label(doc: list[dict]) -> dict[str, dict]:
    return {item["label"]: item["regions"]["attn_fwd"] for item in doc}


def test_json_is_one_object_per_file_in_order(synth_traces: dict[str, Path],  # noqa: F811
                                              capsys: pytest.CaptureFixture[str]) -> None:
    paths = [synth_traces[v] for v in reversed(ORDER)]
    doc = _compare_json(paths, capsys)
    assert [item["path"] for item in doc] == [str(p) for p in paths]
    for item in doc:
        assert {"path", "regions", "self_device_time_total_us", "self_cpu_time_total_us"} <= \
            item.keys()
        region = item["regions"]["attn_fwd"]
        for key in ("instances", "cpu_time_avg_us", "device_time_avg_us", "kernels_per_instance",
                    "memcpy_per_instance", "memset_per_instance", "implementation", "tflops",
                    "peak_share", "time_ratio_to_first"):
            assert key in region
        assert region["instances"] == 3
    assert doc[0]["regions"]["attn_fwd"]["time_ratio_to_first"] == 1.0


def test_the_blog_story(synth_traces: dict[str, Path],  # noqa: F811
                        capsys: pytest.CaptureFixture[str]) -> None:
    r = _by_label(_compare_json([synth_traces[v] for v in ORDER], capsys))
    assert r["naive"]["memcpy_per_instance"] == 1 and r["inplace"]["memcpy_per_instance"] == 0
    assert r["sdpa_math"]["kernels_per_instance"] > r["inplace"]["kernels_per_instance"]
    assert r["sdpa_math"]["device_time_avg_us"] > r["inplace"]["device_time_avg_us"]
    for variant in ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn"):
        assert r[variant]["kernels_per_instance"] == 1
        assert r[variant]["attention_kernels_per_instance"] == 1
    keys = {v: r[v]["implementation_key"] for v in ORDER}
    assert keys == {"naive": "unfused", "inplace": "unfused", "sdpa_math": "math",
                    "sdpa_flash": "pytorch_flash", "sdpa_efficient": "cutlass_mem_efficient",
                    "sdpa_cudnn": "cudnn"}
    assert r["sdpa_math"]["time_ratio_to_first"] > 1 > r["sdpa_flash"]["time_ratio_to_first"]


def test_tflops_agree_with_a_hand_computation(synth_traces: dict[str, Path],  # noqa: F811
                                              capsys: pytest.CaptureFixture[str]) -> None:
    r = _by_label(_compare_json([synth_traces[v] for v in ORDER], capsys))
    for variant, region in r.items():
        assert region["flops_per_instance"] == HAND_FLOPS
        hand = HAND_FLOPS / (region["device_time_avg_us"] * 1e-6) / 1e12
        assert region["tflops"] == pytest.approx(hand, rel=0.01), variant
        assert region["peak_tflops"] == 989.4  # H100 SXM, bf16
        assert region["peak_share"] == pytest.approx(region["tflops"] / 989.4, rel=1e-9)
    assert r["sdpa_flash"]["tflops"] == pytest.approx(HAND_FLOPS / 95e-6 / 1e12, rel=1e-9)


def test_region_metrics_equal_the_regions_module(synth_traces: dict[str, Path]) -> None:  # noqa: F811
    trace = load_trace(synth_traces["naive"])
    mine = summarize_trace(trace).regions["attn_fwd"]
    theirs = {s.name: s for s in find_regions(trace, link_gpu_events(trace)).summaries()}
    ref = theirs["attn_fwd"]
    assert (mine.instances, mine.kernels_per_instance, mine.memcpy_per_instance,
            mine.memset_per_instance) == (ref.instances, ref.kernels_per_instance,
                                          ref.memcpy_per_instance, ref.memset_per_instance)
    assert mine.cpu_time_avg_us == pytest.approx(ref.cpu_time_avg_us)
    assert mine.device_time_avg_us == pytest.approx(ref.device_time_avg_us)
    assert len(mine.device_time_us) == 3


def test_unknown_device_leaves_peak_blank(tmp_path: Path) -> None:
    doc = variant_doc("sdpa_flash", device="AMD Radeon Graphics")
    item = summarize_trace(load_trace(write_doc(tmp_path / "x.json", doc)))
    region = item.regions["attn_fwd"]
    assert item.peak is None and region.peak_tflops is None and region.peak_share is None
    assert region.tflops is not None  # the achieved rate does not need the device


def test_missing_region_is_zero_instances_and_attention_ops_are_offered(tmp_path: Path) -> None:
    b = Builder()
    for _ in range(2):
        b.region(fused_tree("sdpa_cudnn"), name="layer0")
    item = summarize_trace(load_trace(write_doc(tmp_path / "y.json", b.document(None))))
    assert item.regions["attn_fwd"].instances == 0
    assert item.regions["attn_fwd"].tflops is None
    assert item.warnings and "attn_fwd" in item.warnings[0]
    # layer0 is not named like attention, so the attention op becomes the region
    sdpa = item.regions["aten::scaled_dot_product_attention"]
    assert sdpa.instances == 2 and sdpa.implementation.key == "cudnn"
    assert sdpa.flops_per_instance == HAND_FLOPS


def test_region_option_and_ratio_basis(synth_traces: dict[str, Path],  # noqa: F811
                                       capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json([synth_traces["naive"], synth_traces["sdpa_flash"]], capsys,
                        "--region", "aten::scaled_dot_product_attention")
    assert doc[0]["regions"]["aten::scaled_dot_product_attention"]["instances"] == 0
    assert doc[1]["regions"]["aten::scaled_dot_product_attention"]["instances"] == 3
    items = compare_traces([load_trace(synth_traces["naive"]), load_trace(synth_traces["inplace"])])
    assert items[1].regions["attn_fwd"].ratio_basis == "device"


def test_markdown_table(synth_traces: dict[str, Path],  # noqa: F811
                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", *(str(synth_traces[v]) for v in ORDER), "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| trace | implementation | inst |") and "TFLOP/s" in lines[0]
    assert set(lines[1]) <= set("|-:")
    table = lines[: 2 + len(ORDER)]
    assert lines[2].startswith("| naive | unfused") and "| 1.00x |" in lines[2]
    assert all(line.count("|") == lines[0].count("|") for line in table)
    notes = lines[2 + len(ORDER):]  # what the FLOPs count, under the table
    assert notes[0] == "" and notes[1].startswith("GFLOP per instance: causal =")
    assert any(n.startswith("- naive, inplace, sdpa\\_math") and "causal FLOPs from the "
               "capture config" in n for n in notes)


def test_names_are_data_not_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(json.dumps(variant_doc("sdpa_flash", 1)))
    del doc["attn_tui"]  # label comes from the file name
    path = write_doc(tmp_path / "[bold red]evil|name.json", doc)
    assert main(["compare", str(path)]) == 0
    assert "[bold red]evil|name" in capsys.readouterr().out
    assert main(["compare", str(path), "--markdown"]) == 0
    assert "[bold red]evil\\|name" in capsys.readouterr().out


def test_table_rows_have_every_column(synth_traces: dict[str, Path]) -> None:  # noqa: F811
    rows = table_rows(compare_traces([load_trace(synth_traces[v]) for v in ORDER]))
    assert len(rows) == len(ORDER) and all(len(row) == len(COLUMNS) for row in rows)
    assert rows[3][COLUMNS.index("implementation")] == "PyTorch flash (FlashAttention-2)"


def test_missing_file_is_one_line_and_exit_2(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.json" in err


# ---- the GPU samples captured on an H200 (skipped until they are in sample_traces/) ----

SAMPLES = ["naive", "inplace", "sdpa_math", "sdpa_flash", "sdpa_efficient", "sdpa_cudnn"]


def _samples() -> list[Path]:
    paths = [SAMPLE_TRACES / f"{v}.json.gz" for v in SAMPLES]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        pytest.skip(f"sample traces absent: {', '.join(missing)}")
    return paths


def test_samples_tell_the_story(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json(_samples(), capsys, "--no-cache")
    r = _by_label(doc)
    assert r["naive"]["memcpy_per_instance"] == 1 and r["inplace"]["memcpy_per_instance"] == 0
    assert r["sdpa_math"]["kernels_per_instance"] > r["inplace"]["kernels_per_instance"]
    assert r["sdpa_math"]["device_time_avg_us"] > r["inplace"]["device_time_avg_us"]
    for variant in ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn"):
        assert r[variant]["attention_kernels_per_instance"] == 1
        assert r[variant]["kernels_per_instance"] == 1
    manifest = json.loads((SAMPLE_TRACES / "manifest.json").read_text())
    b, h, s, d = (manifest["shape"][k] for k in ("batch", "heads", "seq", "head_dim"))
    flops = 4 * b * h * s * s * d / (2 if manifest["causal"] else 1)  # by hand
    for item in doc:
        region = item["regions"]["attn_fwd"]
        assert region["implementation"], item["label"]
        assert region["flops_per_instance"] == flops
        hand = flops / (region["device_time_avg_us"] * 1e-6) / 1e12
        assert region["tflops"] == pytest.approx(hand, rel=0.01), item["label"]
        assert item["device"] == manifest["gpu"]
        if manifest["gpu"] == "NVIDIA H200":
            assert region["peak_tflops"] == 989.4


# ---- real traces from other people: compare must never fail on them ----

@needs_real_traces
@pytest.mark.real_traces
@pytest.mark.parametrize("path", real_trace_files(), ids=lambda p: p.name[:40])
def test_compare_runs_on_real_traces(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json([path], capsys, "--no-cache")
    assert len(doc) == 1 and "attn_fwd" in doc[0]["regions"]
    assert main(["compare", str(path), "--markdown", "--no-cache"]) == 0
    assert main(["compare", str(path), "--no-cache"]) == 0


def test_per_instance_rates_and_implementations_by_region(
        synth_traces: dict[str, Path]) -> None:  # noqa: F811
    from profiling.analysis.compare import implementations_by_region

    trace = load_trace(synth_traces["sdpa_cudnn"])
    region = summarize_trace(trace).regions["attn_fwd"]
    assert region.tflops_per_instance == pytest.approx([HAND_FLOPS / 58e-6 / 1e12] * 3)
    assert implementations_by_region(trace)["attn_fwd"].key == "cudnn"


def test_gemm_and_softmax_alone_are_not_called_attention(tmp_path: Path) -> None:
    from profiling.analysis.compare import implementations_by_region
    from tests.test_compare_fixtures import Launch, Op

    b = Builder()
    b.region([Op("aten::addmm", [Launch("ampere_sgemm_128x64_nn", 50)]),
              Op("aten::_softmax", [Launch("softmax_warp_forward<float>", 5)])],
             name="ProfilerStep#1")
    trace = load_trace(write_doc(tmp_path / "resnet.json", b.document(None)))
    assert implementations_by_region(trace) == {}


def test_an_attention_op_region_reads_its_own_shapes(tmp_path: Path) -> None:
    from tests.test_compare_fixtures import Launch, Op

    op = Op("attn_tui::flash_attn_fwd", [Launch("attn_tui_flash_fwd_kernel", 80.0,
                                                api="cuLaunchKernelEx")],
            {"Input Dims": [[2, 128, 4, 64]] * 3 + [[], []],
             "Concrete Inputs": ["", "", "", "0.125", "True"]})
    b = Builder()
    for _ in range(2):
        b.region([op], name="ProfilerStep#0")
    item = summarize_trace(load_trace(write_doc(tmp_path / "k.json", b.document(None))))
    region = item.regions["attn_tui::flash_attn_fwd"]
    assert region.instances == 2 and region.flops_per_instance == HAND_FLOPS
    assert region.implementation.key == "custom_attention"
    assert "attn_tui_flash_fwd_kernel" in region.implementation.name


# ---- FLOPs say what they count, and agree whichever source they came from ----


def _raw_events(path: Path) -> list[dict]:
    """The trace's events read straight from its JSON (not through the loader)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def _flops_from_raw_sdpa(path: Path) -> float:
    """4*B*H*Sq*Sk*D (halved when is_causal) from the SDPA op's recorded args, by hand."""
    sdpa = next(e for e in _raw_events(path)
                if e.get("name") == "aten::scaled_dot_product_attention")
    (b, h, sq, d), (_, _, sk, _) = sdpa["args"]["Input Dims"][:2]
    causal = sdpa["args"]["Concrete Inputs"][5] == "True"
    return 4 * b * h * sq * sk * d / (2 if causal else 1)


def _without_config(src: Path, dst: Path) -> Path:
    opener = gzip.open if src.name.endswith(".gz") else open
    with opener(src, "rt") as f:
        doc = json.load(f)
    del doc["attn_tui"]
    dst.write_text(json.dumps(doc))
    return dst


def _config_flops(path: Path) -> float:
    """4*B*H*S*S*D (halved when causal) from the stored capture config, by hand."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        c = json.load(f)["attn_tui"]["config"]
    return 4 * c["batch"] * c["heads"] * c["seq"] ** 2 * c["head_dim"] / (2 if c["causal"] else 1)


def _flops_check(paths: dict[str, Path], tmp_path: Path,
                 capsys: pytest.CaptureFixture[str]) -> None:
    """Config and shapes give the same causal TFLOP/s for SDPA; unfused shapes say dense."""
    names = list(paths)
    bare = [_without_config(paths[v], tmp_path / f"bare_{v}.json") for v in names]
    with_cfg = _compare_json([paths[v] for v in names], capsys, "--no-cache")
    without = _compare_json(bare, capsys, "--no-cache")
    for v, a, b in zip(names, with_cfg, without, strict=True):
        ra, rb = a["regions"]["attn_fwd"], b["regions"]["attn_fwd"]
        assert ra["flops_source"] == "config" and ra["causal"] is True
        assert ra["flops_convention"] == "causal"
        assert ra["flops_per_instance"] == _config_flops(paths[v])
        assert ra["dtype"] == rb["dtype"] == "bf16", v  # one spelling whichever source
        if v.startswith("sdpa"):
            assert rb["flops_source"] == "shapes" and rb["causal"] is True
            assert rb["flops_convention"] == "causal" and rb["flops_note"] is None
            assert rb["flops_per_instance"] == _flops_from_raw_sdpa(paths[v])
            assert rb["tflops"] == pytest.approx(ra["tflops"], rel=1e-12), v
        elif v in ("naive", "inplace"):  # the mask is built outside the region
            assert rb["flops_source"] == "matmul_shapes" and rb["causal"] is None
            assert rb["flops_convention"] == "dense"
            assert rb["flops_note"].startswith("causal unknown: dense FLOPs")
            assert rb["flops_per_instance"] == 2 * _config_flops(paths[v])
            assert rb["tflops"] == pytest.approx(2 * ra["tflops"], rel=1e-12), v


def test_flops_label_their_source_and_convention(synth_traces: dict[str, Path],  # noqa: F811
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _flops_check({v: synth_traces[v] for v in ORDER}, tmp_path, capsys)
    assert main(["compare", str(tmp_path / "bare_naive.json"), "--markdown"]) == 0
    assert "causal unknown: dense FLOPs" in capsys.readouterr().out


def test_sample_flops_agree_across_sources(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _flops_check(dict(zip(SAMPLES, _samples(), strict=True)), tmp_path, capsys)


def test_a_causal_mask_in_the_region_makes_matmul_flops_causal(tmp_path: Path) -> None:
    from tests.test_compare_fixtures import Launch, Op, naive_tree

    b = Builder()
    b.region([Op("aten::tril", [Launch("triu_tril_kernel", 2.0)])] + naive_tree())
    doc = b.document(None)
    region = summarize_trace(load_trace(write_doc(tmp_path / "m.json", doc))).regions["attn_fwd"]
    assert region.causal is True and region.flops_convention == "causal"
    assert region.flops_source == "matmul_shapes" and not region.flops_note
    b_, h, s_, d = 2, 4, 128, 64  # QKV_DIMS of the fixture, written out
    assert region.flops_per_instance == 4 * b_ * h * s_ * s_ * d / 2


def test_rank_of_a_multi_rank_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``distributedInfo`` gives ``rank``/``world_size`` in the JSON, and the rank in the
    trace cell only when the job has more than one rank."""
    paths = []
    for name, info in (("r2", {"rank": 2, "world_size": 4}), ("solo", {"rank": 0, "world_size": 1}),
                       ("bad", {"rank": True, "world_size": "many"}), ("none", None)):
        doc = variant_doc("sdpa_flash", 1)
        del doc["attn_tui"]  # label from the file name
        if info is not None:
            doc["distributedInfo"] = info
        paths.append(write_doc(tmp_path / f"{name}.json", doc))
    out = _compare_json(paths, capsys)
    assert [(d["rank"], d["world_size"]) for d in out] == [(2, 4), (0, 1), (None, None),
                                                          (None, None)]
    assert main(["compare", *map(str, paths), "--markdown"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:6]
    assert [r.split(" | ")[0] for r in rows] == ["| r2 · rank 2/4", "| solo", "| bad", "| none"]


def test_tui_compare_header_says_when_flops_count_differently(
        synth_traces: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    """The TUI's Compare header (``CompareResult.warnings``) carries the FLOPs note when
    one file's figure is dense (no config, mask outside the region), and nothing when
    every figure is the config's causal count."""
    from profiling.analysis.analysed import AnalysedTrace
    from tui.compare_data import Source, compare_sources

    def result(paths: list[Path]) -> list[str]:
        return compare_sources([Source(str(p), AnalysedTrace(load_trace(p)))
                                for p in paths]).warnings

    assert result([synth_traces["naive"], synth_traces["sdpa_flash"]]) == []
    bare = _without_config(synth_traces["naive"], tmp_path / "bare.json")
    notes = result([bare, synth_traces["sdpa_flash"]])
    assert any(n.startswith("bare: dense FLOPs") and "causal unknown" in n for n in notes)
    assert any(n.startswith("sdpa_flash: causal FLOPs from the capture config") for n in notes)
