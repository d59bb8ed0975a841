"""``findings``: each rule on a trace made to show it, no false positives, samples, real traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling.analysis.findings import Finding, trace_findings
from profiling.trace import Trace, load_trace
from tests.conftest import REPO, SAMPLE_TRACES, needs_real_traces, real_trace_files
from tests.test_compare_fixtures import (
    Builder,
    Launch,
    Op,
    Sync,
    fused_tree,
    synth_traces,  # noqa: F401  (fixture)
    write_doc,
)
from tui.cli import main

BLOG_IDS = {"memcpy-out-of-place", "memcpy-in-region", "fp32-upcast", "mask-rebuilt"}
CLEAN = ["inplace", "sdpa_flash", "sdpa_efficient", "sdpa_cudnn"]
FLASH = ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64> >"
         "(pytorch_flash::Flash_fwd_params)")


def _findings(trace: Trace) -> dict[str, Finding]:
    return {f.id: f for f in trace_findings(trace).findings}


def _check_evidence(trace: Trace, finding: Finding) -> None:
    """Every evidence row names a real trace row (the TUI jumps to it)."""
    assert finding.evidence, finding.id
    for e in finding.evidence:
        assert 0 <= e.row < len(trace)
        assert trace.name(e.row) == e.name
        assert e.dur_us == pytest.approx(int(trace.dur_ns[e.row]) / 1e3)


def _built(tmp_path: Path, regions: list[list], name: str = "t.json", **doc: object) -> Trace:
    b = Builder()
    for tree in regions:
        b.region(tree)
    return load_trace(write_doc(tmp_path / name, b.document(None, **doc)))  # type: ignore[arg-type]


def test_naive_copy_is_named_after_masked_fill(synth_traces: dict[str, Path]) -> None:  # noqa: F811
    trace = load_trace(synth_traces["naive"])
    found = _findings(trace)
    f = found["memcpy-out-of-place"]
    assert f.severity == "high" and f.region == "attn_fwd" and f.instances == (0, 1, 2)
    assert f.of_instances == 3 and f.instances_text() == "all 3 instances"
    assert "aten::masked_fill" in f.title and "masked_fill_" in f.suggestion
    assert "no_grad" in f.suggestion
    _check_evidence(trace, f)
    assert f.evidence[0].kind == "memcpy"
    assert f.evidence[0].launch_chain == ("aten::masked_fill", "aten::clone", "aten::copy_",
                                          "cudaMemcpyAsync")
    assert f.evidence[0].launched_by == " > ".join(f.evidence[0].launch_chain)
    assert {"fp32-upcast", "mask-rebuilt"}.isdisjoint(found)


def test_math_backend_upcast_and_mask(synth_traces: dict[str, Path]) -> None:  # noqa: F811
    trace = load_trace(synth_traces["sdpa_math"])
    found = _findings(trace)
    upcast, mask = found["fp32-upcast"], found["mask-rebuilt"]
    assert upcast.severity == "high" and "bf16" in upcast.title
    names = [e.name for e in upcast.evidence]
    assert any("f32f32" in n for n in names) and any("direct_copy" in n for n in names)
    assert any(e.note.startswith("cast bf16") for e in upcast.evidence)
    assert any("triu_tril" in e.name for e in mask.evidence)
    assert all(e.instance == 0 for e in mask.evidence)
    assert any("FillFunctor" in e.name for e in mask.evidence)
    for f in (upcast, mask):
        _check_evidence(trace, f)
    assert "memcpy-out-of-place" not in found


@pytest.mark.parametrize("variant", CLEAN)
def test_no_false_positives(synth_traces: dict[str, Path], variant: str) -> None:  # noqa: F811
    found = _findings(load_trace(synth_traces[variant]))
    assert BLOG_IDS.isdisjoint(found), sorted(found)
    assert "launch-bound" not in found  # 95-350 µs kernels for a few µs of CPU


def test_fp16_and_fp32_inputs(tmp_path: Path) -> None:
    from tests.test_compare_fixtures import math_tree

    b = Builder()
    b.region(math_tree())
    doc = b.document("sdpa_math", dtype="fp32")
    doc["attn_tui"]["config"]["dtype"] = "fp32"
    fp32 = load_trace(write_doc(tmp_path / "fp32.json", doc))
    assert "fp32-upcast" not in _findings(fp32)  # fp32 inputs: nothing was upcast
    doc["attn_tui"]["config"]["dtype"] = "fp16"
    fp16 = load_trace(write_doc(tmp_path / "fp16.json", doc))
    assert "fp16" in _findings(fp16)["fp32-upcast"].title


def test_sync_inside_the_region(tmp_path: Path) -> None:
    tree = fused_tree("sdpa_flash") + [Op("aten::item", [Sync("cudaStreamSynchronize", 40)])]
    trace = _built(tmp_path, [tree] * 3)
    f = _findings(trace)["sync-in-region"]
    assert f.instances == (0, 1, 2) and "cudaStreamSynchronize" in f.title
    _check_evidence(trace, f)
    assert f.evidence[0].kind == "runtime"


def test_launch_bound_region(tmp_path: Path) -> None:
    tiny = [Op("aten::add", [Launch("void add_kernel<float>()", 2.0)]) for _ in range(5)]
    trace = _built(tmp_path, [tiny] * 3)
    f = _findings(trace)["launch-bound"]
    assert f.severity == "low" and f.instances == (0, 1, 2)
    assert all(e.kind == "user_annotation" for e in f.evidence)
    _check_evidence(trace, f)


def test_gpu_idle_gaps_between_the_regions_kernels(tmp_path: Path) -> None:
    host_work = Sync("cudaGetDeviceProperties", 200)  # CPU busy, GPU idle, no sync
    tree = [Op("aten::mm", [Launch("gemm_a", 100)]), host_work,
            Op("aten::mm", [Launch("gemm_b", 100)])]
    trace = _built(tmp_path, [tree] * 3)
    found = _findings(trace)
    f = found["gpu-idle-gaps"]
    assert "sync-in-region" not in found
    assert f.evidence[0].name == "gemm_b" and "idle" in f.evidence[0].note
    _check_evidence(trace, f)
    flash = _findings(_built(tmp_path, [fused_tree("sdpa_flash")] * 3, "f.json"))
    assert "gpu-idle-gaps" not in flash
    assert "waits for the host" in f.detail  # gemm_b's launch came after the GPU went idle


def test_gpu_gaps_with_early_launches_do_not_blame_the_host(tmp_path: Path) -> None:
    """Both kernels launched back to back, the second starting late on the GPU (waiting
    on something else): the finding must not say the GPU waits for the host."""
    b = Builder()
    for _ in range(3):
        b.region([Op("aten::mm", [Launch("gemm_a", 100)]), Op("aten::mm", [Launch("gemm_b", 100)])])
    doc = b.document(None)
    for e in doc["traceEvents"]:
        if e["name"] == "gemm_b":
            e["ts"] += 300.0  # the GPU starts it 300 µs after its launch call returned
    f = _findings(load_trace(write_doc(tmp_path / "early.json", doc)))["gpu-idle-gaps"]
    assert "other than the host" in f.detail and "waits for the host" not in f.detail
    assert "CUDA graph" not in f.suggestion


def test_odd_instances(tmp_path: Path) -> None:
    extra = fused_tree("sdpa_flash") + [Op("aten::zero_", [Launch("fill_kernel", 2.0)])]
    slow = [Op("attn", [Launch(FLASH, 300.0)])]
    normal = [Op("attn", [Launch(FLASH, 95.0)])]
    trace = _built(tmp_path, [normal, normal, slow, normal, normal])
    odd = [f for f in trace_findings(trace).findings if f.id == "odd-instance"]
    assert len(odd) == 1 and odd[0].instances == (2,) and "GPU time" in odd[0].title
    assert odd[0].instances_text() == "#2 (1 of 5)"
    _check_evidence(trace, odd[0])
    trace = _built(tmp_path, [fused_tree("sdpa_flash")] * 3 + [extra], "seq.json")
    odd = [f for f in trace_findings(trace).findings if f.id == "odd-instance"]
    assert odd[0].instances == (3,) and "kernel sequence" in odd[0].title
    assert odd[0].evidence[0].name == "fill_kernel"


def test_trace_without_attention_looks_at_profiler_steps(tmp_path: Path) -> None:
    b = Builder()
    for step in range(3):
        b.region([Op("aten::mm", [Launch("gemm", 50)]), Sync("cudaDeviceSynchronize", 10)],
                 name=f"ProfilerStep#{step}")
    result = trace_findings(load_trace(write_doc(tmp_path / "s.json", b.document(None))))
    assert result.regions == ("ProfilerStep*",)
    assert "sync-in-region" in {f.id for f in result.findings}
    assert "no attention region" in result.notes[0]


def test_empty_trace_has_nothing_to_say(tmp_path: Path) -> None:
    result = trace_findings(load_trace(write_doc(tmp_path / "e.json", {"traceEvents": []})))
    assert result.findings == () and result.regions == ()


def test_cli_json_markdown_and_rich(synth_traces: dict[str, Path],  # noqa: F811
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = str(synth_traces["naive"])
    assert main(["findings", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["path"] == path and doc["regions"] == ["attn_fwd"]
    f = doc["findings"][0]
    assert {"id", "title", "severity", "region", "instances", "evidence", "suggestion"} <= f.keys()
    assert {"row", "name", "kind", "start_us", "dur_us", "launched_by"} <= f["evidence"][0].keys()
    assert main(["findings", path, "--markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## Findings") and "`memcpy-out-of-place`" in md and "Try:" in md
    assert "masked\\_fill\\_" in md  # markdown emphasis characters are escaped
    assert main(["findings", path]) == 0
    assert "memcpy-out-of-place" in capsys.readouterr().out


def test_cli_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("not json at all")
    assert main(["findings", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cpu_oracle_traces(capsys: pytest.CaptureFixture[str]) -> None:
    folder = REPO / "tests" / "oracles" / "cpu"
    math = folder / "sdpa_math.trace.json.gz"
    if not math.is_file():
        pytest.skip("CPU oracle traces absent")
    found = _findings(load_trace(math, use_cache=False))
    assert "mask-rebuilt" in found and "fp32-upcast" not in found  # fp32 on the CPU
    assert all(e.kind == "cpu_op" for e in found["mask-rebuilt"].evidence)
    inplace = _findings(load_trace(folder / "inplace.trace.json.gz", use_cache=False))
    assert BLOG_IDS.isdisjoint(inplace)


# ---- the GPU samples (skipped until they are in sample_traces/) ----

def _sample(variant: str) -> Trace:
    path = SAMPLE_TRACES / f"{variant}.json.gz"
    if not path.is_file():
        pytest.skip(f"sample_traces/{variant}.json.gz is absent")
    return load_trace(path, use_cache=False)


def test_sample_naive_has_the_memcpy_finding() -> None:
    trace = _sample("naive")
    f = _findings(trace)["memcpy-out-of-place"]
    assert f.instances == (0, 1, 2) and "aten::masked_fill" in f.title
    _check_evidence(trace, f)


def test_sample_math_has_upcast_and_mask() -> None:
    trace = _sample("sdpa_math")
    found = _findings(trace)
    assert {"fp32-upcast", "mask-rebuilt"} <= found.keys()
    for key in ("fp32-upcast", "mask-rebuilt"):
        _check_evidence(trace, found[key])


@pytest.mark.parametrize("variant", CLEAN)
def test_samples_without_false_positives(variant: str) -> None:
    assert BLOG_IDS.isdisjoint(_findings(_sample(variant)))


# ---- real traces from other people: findings must never fail on them ----

@needs_real_traces
@pytest.mark.real_traces
@pytest.mark.parametrize("path", real_trace_files(), ids=lambda p: p.name[:40])
def test_findings_run_on_real_traces(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", str(path), "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    trace = load_trace(path, use_cache=False)
    for f in doc["findings"]:
        assert f["severity"] in ("high", "medium", "low")
        for e in f["evidence"]:
            assert trace.name(e["row"]) == e["name"]
    assert main(["findings", str(path), "--markdown", "--no-cache"]) == 0
    assert main(["findings", str(path), "--no-cache"]) == 0


def test_hostile_names_are_shown_as_data(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    evil = "\x1b[31m[bold]evil`|_*<b>" + "x" * 3000
    tree = [Op("aten::masked_fill", [
        Op("aten::clone", [Op("aten::copy_", [Launch("Memcpy DtoD " + evil, 50.0, "gpu_memcpy",
                                                     "cudaMemcpyAsync")])]),
        Op("aten::masked_fill_", [Launch(evil, 50.0)])])]
    b = Builder()
    for _ in range(3):
        b.region(tree, name="attn_fwd")
    path = write_doc(tmp_path / "evil.json", b.document(None))
    for fmt in ([], ["--markdown"], ["--json"]):
        assert main(["findings", str(path), *fmt]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "memcpy-out-of-place" in out
    assert main(["compare", str(path)]) == 0
    assert "\x1b" not in capsys.readouterr().out


# ---- every sentence follows from the evidence, not from the samples ----

F32 = "c10::Float"
BF16_T = "c10::BFloat16"
CUSTOM_SGEMM = "ampere_sgemm_128x64_nn"


def test_out_of_place_copy_says_its_condition_and_names_the_op(tmp_path: Path) -> None:
    """An out-of-place ``aten::add`` (no fill): the advice is conditional, names the op
    found and its copy, and says nothing about a fill."""
    tree = [Op("aten::add", [
        Op("aten::to", [Op("aten::copy_", [Launch("Memcpy DtoD (Device -> Device)", 30.0,
                                                  "gpu_memcpy", "cudaMemcpyAsync")])]),
        Op("aten::add_", [Launch("void at::native::add_kernel(int)", 20.0)])])]
    trace = _built(tmp_path, [tree, tree, fused_tree("sdpa_flash")])
    f = _findings(trace)["memcpy-out-of-place"]
    assert f.title.startswith("aten::add copies its input") and "2 of 3 instances" in f.title
    assert "aten::to" in f.detail and "aten::clone" not in f.detail
    assert f.suggestion.startswith("if nothing reads the tensor aten::add takes")
    assert "aten::add_" in f.suggestion
    assert "fill" not in f.suggestion and "nothing needs" not in f.suggestion


def test_fp32_outside_the_math_backend_does_not_name_it(tmp_path: Path) -> None:
    """A user's own .float() before a matmul: fp32 kernels, no SDPA math backend."""
    to = {"Input type": [BF16_T, "Scalar", "Scalar", "Scalar", ""],
          "Concrete Inputs": ["", "6", "False", "False", ""]}
    tree = [Op("aten::to", [Op("aten::_to_copy", [Op("aten::copy_", [
                Launch("void at::native::direct_copy_kernel(int)", 5.0)])])], to),
            Op("aten::bmm", [Launch(CUSTOM_SGEMM, 60.0)], {"Input type": [F32, F32]})]
    b = Builder()
    for _ in range(3):
        b.region(tree)
    doc = b.document("naive")  # the capture config says bf16 inputs
    f = _findings(load_trace(write_doc(tmp_path / "up.json", doc)))["fp32-upcast"]
    assert CUSTOM_SGEMM in f.detail and "aten::to" in f.detail
    assert "math backend" not in f.detail and "math" not in f.suggestion
    assert "flash" not in f.suggestion  # no SDPA in sight: no backend advice


def test_math_backend_is_named_when_the_evidence_runs_under_it(
        synth_traces: dict[str, Path]) -> None:  # noqa: F811
    found = _findings(load_trace(synth_traces["sdpa_math"]))
    assert "aten::_scaled_dot_product_attention_math" in found["fp32-upcast"].detail
    assert "SDPA math backend" in found["fp32-upcast"].detail
    mask = found["mask-rebuilt"]
    assert {"aten::ones", "aten::tril", "aten::where"} <= set(mask.detail.replace(",", " ").split())
    assert "math backend" in mask.detail


def test_a_users_own_tril_names_only_what_ran(tmp_path: Path) -> None:
    """torch.tril in the user's forward, no ones/where, no SDPA: the finding names
    aten::tril and its kernel, not the math backend's ones/tril/where."""
    tree = [Op("aten::tril", [Launch("void at::native::triu_tril_kernel<float>(int)", 3.0)])]
    tree += fused_tree("sdpa_flash")
    trace = _built(tmp_path, [tree] * 3)
    f = _findings(trace)["mask-rebuilt"]
    assert "aten::tril" in f.title and "every instance" in f.title
    assert "at::native::triu_tril_kernel" in f.detail
    assert "aten::ones" not in f.detail and "aten::where" not in f.detail
    assert "math backend" not in f.detail and f.suggestion.startswith("build the mask once")
