"""The committed GPU samples say what the capture issue promises (no torch needed).

``sample_traces/`` is what a new user opens first; these checks read the files
themselves: all eight variants ok on the GPU, every file under 2 MB, one
``attn_fwd`` region per active step, and the Memcpy that tells naive from inplace.
The capture's counts (``count_file``, the trace engine) are checked against a
brute-force count straight from the JSON events, written here independently.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from profiling.capture.config import VARIANT_NAMES
from profiling.capture.outputs import ORACLE_FIELDS, read_json
from profiling.capture.trace_counts import count_file

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


GPU_CATS = {"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets"}


def brute_force(doc: dict[str, Any], region: str = "attn_fwd") -> list[Counter[str]]:
    """Per ``region`` slice, in start order: its GPU events by kind, counted the slow,
    obvious way (each GPU event whose correlation is a ``cudaLaunch*``/``cuLaunch*``/
    ``cudaMem*Async`` call that starts inside the slice on the same pid and tid)."""
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    slices = sorted((e for e in events if e.get("cat") == "user_annotation"
                     and e.get("name") == region), key=lambda e: float(e["ts"]))
    calls = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
             and str(e.get("name", "")).startswith(("cudaLaunch", "cuLaunch", "cudaMem"))]
    out: list[Counter[str]] = []
    for s in slices:
        lo, hi = float(s["ts"]), float(s["ts"]) + float(s["dur"])
        mine = {c["args"]["correlation"] for c in calls
                if (c["pid"], c["tid"]) == (s["pid"], s["tid"]) and lo <= float(c["ts"]) < hi}
        counts: Counter[str] = Counter()
        for e in events:
            if e.get("cat") in GPU_CATS and e.get("args", {}).get("correlation") in mine:
                counts[GPU_CATS[e["cat"]]] += 1
        out.append(counts)
    return out


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_sample_trace_regions_and_oracle(name: str) -> None:
    entry = manifest()["variants"][name]
    doc = read_json(SAMPLES / entry["trace"])
    counts = count_file(SAMPLES / entry["trace"], "attn_fwd")
    expected = brute_force(doc)
    assert len(counts.instances) == len(expected) == manifest()["config"]["active"]
    assert doc["attn_tui"]["variant"] == name
    for inst, want in zip(counts.instances, expected, strict=True):
        assert (inst.kernels, inst.memcpys, inst.memsets) == (
            want["kernels"], want["memcpys"], want["memsets"])
    assert counts.per_instance("kernels") == entry["kernels_per_forward"]
    rows = read_json(SAMPLES / entry["key_averages"])
    assert rows and all(tuple(r) == ORACLE_FIELDS for r in rows)


def test_naive_launches_one_memcpy_per_region_and_inplace_none() -> None:
    variants = manifest()["variants"]
    naive = brute_force(read_json(SAMPLES / variants["naive"]["trace"]))
    inplace = brute_force(read_json(SAMPLES / variants["inplace"]["trace"]))
    assert [c["memcpys"] for c in naive] == [1] * len(naive)
    assert [c["memcpys"] for c in inplace] == [0] * len(inplace)
    assert count_file(SAMPLES / variants["naive"]["trace"], "attn_fwd").memcpy_names
