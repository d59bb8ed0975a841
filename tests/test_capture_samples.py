"""The committed GPU samples say what the capture issue promises (no torch needed).

``sample_traces/`` is what a new user opens first; these checks read the files
themselves: all eight variants ok on the GPU, every file under 2 MB, one
``attn_fwd`` region per active step, and the Memcpy that tells naive from inplace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.capture.config import VARIANT_NAMES
from profiling.capture.outputs import ORACLE_FIELDS, read_json
from profiling.capture.trace_counts import count_region

SAMPLES = Path(__file__).resolve().parents[1] / "sample_traces"
pytestmark = pytest.mark.skipif(not (SAMPLES / "manifest.json").exists(),
                                reason="no sample_traces/manifest.json")


def manifest() -> dict:
    return read_json(SAMPLES / "manifest.json")


def test_all_eight_ok_on_a_gpu_at_the_default_shape() -> None:
    m = manifest()
    assert m["device"] == "cuda" and m["gpu"]
    assert m["shape"] == {"batch": 8, "heads": 16, "seq": 1024, "head_dim": 64}
    assert m["dtype"] == "bf16" and m["causal"] is True
    assert {n: e["status"] for n, e in m["variants"].items()} == dict.fromkeys(VARIANT_NAMES, "ok")


def test_every_file_is_under_two_megabytes() -> None:
    for path in SAMPLES.iterdir():
        assert path.stat().st_size < 2 * 1024 * 1024, path.name


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_sample_trace_regions_and_oracle(name: str) -> None:
    entry = manifest()["variants"][name]
    trace = read_json(SAMPLES / entry["trace"])
    counts = count_region(trace, "attn_fwd")
    assert len(counts.instances) == manifest()["config"]["active"]
    assert trace["attn_tui"]["variant"] == name
    assert counts.per_instance("kernels") == entry["kernels_per_forward"]
    rows = read_json(SAMPLES / entry["key_averages"])
    assert rows and all(tuple(r) == ORACLE_FIELDS for r in rows)


def test_naive_launches_one_memcpy_per_region_and_inplace_none() -> None:
    naive = count_region(read_json(SAMPLES / manifest()["variants"]["naive"]["trace"]), "attn_fwd")
    inplace = count_region(read_json(SAMPLES / manifest()["variants"]["inplace"]["trace"]),
                           "attn_fwd")
    assert [i.memcpy for i in naive.instances] == [1] * len(naive.instances)
    assert [i.memcpy for i in inplace.instances] == [0] * len(inplace.instances)
