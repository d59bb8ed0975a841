"""The findings rules over every instance at once (``finding_batch``, the region's
launch batch) give what the per-instance rules gave (``tests/findings_reference*``,
each instance's chains walked by ``launch_chain``): the same findings, instances,
evidence and text, on handmade traces made to raise every rule (many instances,
mixed), the synthetic variants, the samples and the real traces."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import finding_rules as new_rules
from profiling.analysis import finding_timing as new_timing
from profiling.analysis.analysed import STORED_BATCH, AnalysedTrace
from profiling.analysis.chains import (
    batch_launches,
    decode_launches,
    encode_launches,
    launch_chains,
)
from profiling.analysis.findings import region_context
from profiling.analysis.regions import STEP_GROUP
from profiling.analysis.units import fmt_ns
from profiling.trace.loader import load_trace
from tests import findings_reference as old_rules
from tests import findings_reference_timing as old_timing
from tests.conftest import REPO, SAMPLE_TRACES, real_trace_files
from tests.findings_reference import BruteContext
from tests.test_compare_fixtures import (
    TREES,
    Builder,
    Launch,
    Op,
    Sync,
    fused_tree,
    math_tree,
    naive_tree,
    variant_doc,
    write_doc,
)

PAIRS = [(new_rules.memcpy_out_of_place, old_rules.memcpy_out_of_place),
         (new_rules.fp32_upcast, old_rules.fp32_upcast),
         (new_rules.mask_rebuilt, old_rules.mask_rebuilt),
         (new_timing.sync_in_region, old_timing.sync_in_region),
         (new_timing.launch_bound, old_timing.launch_bound),
         (new_timing.gpu_idle_gaps, old_timing.gpu_idle_gaps),
         (new_timing.odd_instances, old_timing.odd_instances)]


def regions_of(a: AnalysedTrace) -> list[str]:
    names = list(a.attention_regions) or [n for n in a.regions.names() if n == STEP_GROUP]
    return names + [n for n in a.regions.names()[:3] if n not in names]


def check_rules(trace) -> set[str]:  # noqa: ANN001
    """Every rule, batched and per instance, on every region looked at; the ids raised."""
    a = AnalysedTrace(trace)
    raised: set[str] = set()
    for region in regions_of(a):
        for instances in (a.lazy_instances(region), a.instances(region)):
            if not len(instances):
                continue
            ctx = region_context(a, region, instances)
            ctx.prepare()
            old = region_context(a, region, list(instances))
            has_gpu = any(i.gpu_events for i in old.instances)  # the old rule, not the column sum
            assert ctx.has_gpu == has_gpu
            brute = BruteContext(a, region, old.instances, old.work, old.input_dtype, has_gpu)
            for new_rule, old_rule in PAIRS:
                got = new_rule(ctx)
                assert got == old_rule(brute), (region, new_rule.__name__)
                raised |= {f.id for f in got}
    return raised


def mixed_trace(tmp_path: Path, dtype: str | None = None, seed: int = 0,
                n: int = 40) -> Path:
    """Many instances of several kinds in a random order: out-of-place copies, other
    copies, syncs, masks, idle gaps, extra kernels, slow instances."""
    rng = random.Random(seed)
    host_gap = [Op("aten::mm", [Launch("gemm_a", 100)]), Sync("cudaGetDeviceProperties", 200),
                Op("aten::mm", [Launch("gemm_b", 100)])]
    copy = [Op("aten::add", [Op("aten::copy_", [Launch("Memcpy DtoD (Device -> Device)", 3.0,
                                                       "gpu_memcpy", "cudaMemcpyAsync")])])]
    kinds = [naive_tree, math_tree, lambda: fused_tree("sdpa_flash"), lambda: host_gap,
             lambda: fused_tree("sdpa_flash") + copy,
             lambda: fused_tree("sdpa_flash") + [Op("aten::item", [Sync("cudaStreamSynchronize",
                                                                         40)])],
             lambda: [Op("attn", [Launch("flash_fwd", rng.choice([95.0, 300.0]))])]]
    b = Builder()
    for _ in range(n):
        b.region(rng.choice(kinds)())
    doc = b.document("sdpa_math", dtype=dtype or "bf16")
    if dtype:
        doc["attn_tui"]["config"]["dtype"] = dtype
    return write_doc(tmp_path / f"mixed{seed}.json", doc)


@pytest.mark.parametrize("seed", range(4))
def test_batched_rules_equal_the_per_instance_rules_on_mixed_traces(tmp_path: Path,
                                                                    seed: int) -> None:
    raised = check_rules(load_trace(mixed_trace(tmp_path, "fp16", seed), use_cache=False))
    assert {"memcpy-out-of-place", "mask-rebuilt", "fp32-upcast", "sync-in-region",
            "odd-instance"} <= raised


def test_copies_with_no_out_of_place_op_and_small_regions(tmp_path: Path) -> None:
    copy = [Op("aten::add", [Op("aten::copy_", [Launch("Memcpy HtoD (Pageable -> Device)", 3.0,
                                                       "gpu_memcpy", "cudaMemcpyAsync")])])]
    b = Builder()
    for _ in range(5):
        b.region(fused_tree("sdpa_flash") + copy)
    path = write_doc(tmp_path / "copy.json", b.document(None))
    assert "memcpy-in-region" in check_rules(load_trace(path, use_cache=False))
    for variant in TREES:
        doc = variant_doc(variant, instances=2)
        check_rules(load_trace(write_doc(tmp_path / f"{variant}.json", doc), use_cache=False))


def test_cpu_only_instances(tmp_path: Path) -> None:
    """No GPU event: fp32-upcast reads the instances' own ops (the CPU oracle traces)."""
    folder = REPO / "tests" / "oracles" / "cpu"
    paths = sorted(folder.glob("*.trace.json.gz")) if folder.is_dir() else []
    if not paths:
        pytest.skip("CPU oracle traces absent")
    for path in paths:
        check_rules(load_trace(path, use_cache=False))


@pytest.mark.parametrize("path", sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files(),
                         ids=lambda p: p.name)
def test_batched_rules_on_samples_and_real_traces(path: Path) -> None:
    check_rules(load_trace(path, use_cache=False))


def test_launch_batch_kept_and_read_back(tmp_path: Path) -> None:
    """A region's batch is stored as arrays and read back equal; a copy that does not
    fit the trace or the instances is refused (recomputed), never used."""
    trace = load_trace(mixed_trace(tmp_path, n=STORED_BATCH + 6), use_cache=False)
    a = AnalysedTrace(trace)
    instances = a.instances("attn_fwd")
    batch = a.launch_batch(instances)
    arrays, _ = encode_launches(batch)
    back = decode_launches(trace, arrays, len(instances))
    for k, inst in enumerate(instances):
        assert batch_launches(back, k) == a.launches(inst)
        assert a.gpu_rows(inst).tolist() == inst.gpu_rows(trace, a.links).tolist()
    with pytest.raises(ValueError):
        decode_launches(trace, arrays, len(instances) + 1)
    bad = dict(arrays, chain=np.asarray(arrays["chain"]) + len(trace))
    with pytest.raises(ValueError):
        decode_launches(trace, bad, len(instances))


def test_chains_of_some_rows_are_those_of_every_row(tmp_path: Path) -> None:
    """``launch_chains`` of a region's GPU rows only (a batch on a trace whose chains are
    not built yet) gives each of those rows the ops the whole table gives it."""
    a = AnalysedTrace(load_trace(mixed_trace(tmp_path, seed=5), use_cache=False))
    every = launch_chains(a.trace, a.links, a.ops)
    some_rows = every.gpu[::3]
    some = launch_chains(a.trace, a.links, a.ops, some_rows[::-1])
    assert some.gpu.tolist() == some_rows.tolist()
    for lo_hi_all, lo_hi in zip(zip(*every.spans(some_rows), strict=True),
                                zip(*some.spans(some_rows), strict=True), strict=True):
        assert every.ops[slice(*lo_hi_all)].tolist() == some.ops[slice(*lo_hi)].tolist()
    assert any(hi > lo for lo, hi in zip(*some.spans(some_rows), strict=True))


def test_kernel_columns_kept_and_read_back(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A region's ``kernels`` columns read back from their stored arrays give the same
    listing, byte for byte, and the same time widths (the longest ``fmt_ns`` text of
    each time column); columns that do not fit the instances are refused, and so
    are widths no time's text can have."""
    from profiling.analysis import instance_kernels as ik
    from profiling.analysis import kernels_json as kj

    trace = load_trace(mixed_trace(tmp_path, n=STORED_BATCH + 3), use_cache=False)
    a = AnalysedTrace(trace)
    instances = a.instances("attn_fwd")
    cols = ik.kernel_columns(a, instances)
    arrays, _ = ik._encode_columns(cols)
    back = ik._decode_columns(trace, arrays, len(instances))
    assert back.chains == cols.chains and back.chain.tolist() == cols.chain.tolist()
    durations = trace.dur_ns[cols.rows].tolist()
    assert back.time_widths == cols.time_widths == (
        max(len(fmt_ns(v)) for v in cols.offset_ns.tolist()),
        max(len(fmt_ns(v)) for v in durations))
    for bad_widths in ([7, 99], [-1, 7], [7, 7, 7]):
        with pytest.raises(ValueError):
            ik._decode_columns(trace, dict(arrays, time_widths=np.array(bad_widths)),
                               len(instances))
    want = kj.kernels_json(a, instances)
    monkeypatch.setattr(kj, "kernel_columns", lambda *_: back)
    assert kj.kernels_json(a, instances) == want
    with pytest.raises(ValueError):
        ik._decode_columns(trace, arrays, len(instances) - 1)
    with pytest.raises(ValueError):
        ik._decode_columns(trace, dict(arrays, chain=np.asarray(arrays["chain"]) + 99),
                           len(instances))


def test_distinct_is_unique() -> None:
    from profiling.analysis.ranges import distinct

    rng = np.random.default_rng(3)
    for values in (rng.integers(-5, 5, 300), rng.integers(0, 10**9, 1000),
                   np.zeros(0, dtype=np.int64), np.array([7]), np.array([2, 2, 2])):
        assert distinct(values).tolist() == np.unique(values).tolist()


def test_a_region_asked_again_keeps_one_batch(tmp_path: Path) -> None:
    """Findings run twice on one analysis remember the region's batch once, and each
    instance's launches still come from it."""
    from profiling.analysis.findings import region_findings

    a = AnalysedTrace(load_trace(mixed_trace(tmp_path, seed=2), use_cache=False))
    first = region_findings(a, "attn_fwd")
    assert region_findings(a, "attn_fwd") == first
    assert len(a._batches) == 1
    inst = a.instances("attn_fwd")[1]
    assert a.launches(inst) == BruteContext(a, "attn_fwd", [inst], None, None, True).launches(inst)


def test_batch_and_kernel_columns_stored_with_the_index_are_read_on_reopen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the index, not the codecs alone: a first open stores a region's launch
    batch and its ``kernels`` columns; a reopen reads them (building either again
    fails the test) and gives the same launches and the same listing."""
    from profiling.analysis import analysed as analysed_module
    from profiling.analysis import instance_kernels as ik
    from profiling.analysis import kernels_json as kj
    from profiling.trace.cache import index_of

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = mixed_trace(tmp_path, n=STORED_BATCH + 5)
    first = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    assert index_of(first.trace) is not None
    instances = first.instances("attn_fwd")
    want_launches = [batch_launches(first.launch_batch(instances), k)
                     for k in range(len(instances))]
    want_listing = kj.kernels_json(first, instances)

    def rebuilt(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("built again on a reopen")

    monkeypatch.setattr(analysed_module, "instance_launches", rebuilt)
    monkeypatch.setattr(ik, "_kernel_columns", rebuilt)
    again = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    instances = again.instances("attn_fwd")
    batch = again.launch_batch(instances)
    assert [batch_launches(batch, k) for k in range(len(instances))] == want_launches
    assert kj.kernels_json(again, instances) == want_listing
