"""Collectives are matched one way for the whole job.

Newer PyTorch copies the collective's sequence number (``Seq``) and process group
into the NCCL kernel's args; a kernel recorded without them (the profiler window
opening on a collective whose metadata it missed) is matched by order.  The choice
was made per rank from its first comm kernel: when only rank 0's first kernel lacked
the keys, all of rank 0's kernels were keyed by order while its peers' were keyed by
number, no collective matched rank 0, and its ``collective_wait_us`` read 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.job_fixtures import Gpu, Step, rank_doc, write
from tui.cli import main

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def _rank(r: int, strip_first: bool) -> dict:
    steps = []
    for s in range(3):
        t0 = 1000 + 2000 * s
        arrive = t0 + (100 if r == 0 else 300)  # rank 0 arrives first: it waits 200 µs
        steps.append(Step(t0, t0 + 1500, [Gpu("gemm", t0 + 10, 50),
                                          Gpu(NCCL, arrive, t0 + 600 - arrive, stream=20)]))
    doc = rank_doc(r, 2, steps)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and "nccl" in e["name"]]
    for seq, k in enumerate(kernels, 1):
        if not (strip_first and seq == 1):
            k["args"].update({"Collective name": "allreduce", "Process Group Name": "0",
                              "Process Group Ranks": "[0, 1]", "Seq": seq})
    return doc


@pytest.mark.parametrize("strip_first", [False, True])
def test_a_rank_whose_first_kernel_lacks_seq_still_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    strip_first: bool,
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    paths = [write(tmp_path / f"r{r}.json", _rank(r, strip_first and r == 0)) for r in range(2)]
    assert main(["ranks", *paths, "--json"]) == 0
    waits = [r["collective_wait_us"] for r in json.loads(capsys.readouterr().out)]
    # every collective by number; the one without its number cannot be matched
    assert waits == ([400.0, 0.0] if strip_first else [600.0, 0.0])


def test_a_kernel_left_over_from_before_the_window_does_not_shift_the_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found on a synthetic 3-rank job of older torch (no Seq: matched by order) where
    rank 1's window caught the tail of an all-reduce launched before it opened (no
    launch in its trace): every later collective of rank 1 was matched with its peers'
    next one, and its wait read 14 ms instead of 0.6 ms."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    docs = [_rank(r, strip_first=True) for r in range(2)]
    for doc in docs:  # older torch: no keys at all
        for e in doc["traceEvents"]:
            if e.get("cat") == "kernel":
                for k in ("Collective name", "Process Group Name", "Process Group Ranks", "Seq"):
                    e["args"].pop(k, None)
    plain = [write(tmp_path / f"p{r}.json", d) for r, d in enumerate(docs)]
    assert main(["ranks", *plain, "--json"]) == 0
    expected = [r["collective_wait_us"] for r in json.loads(capsys.readouterr().out)]
    assert expected == [600.0, 0.0]
    docs[1]["traceEvents"].append({"ph": "X", "cat": "kernel", "name": NCCL, "pid": 1, "tid": 20,
                                   "ts": 900, "dur": 40,
                                   "args": {"correlation": 99, "device": 1, "stream": 20}})
    left = [write(tmp_path / f"l{r}.json", d) for r, d in enumerate(docs)]
    assert main(["ranks", *left, "--json"]) == 0
    assert [r["collective_wait_us"] for r in json.loads(capsys.readouterr().out)] == expected
