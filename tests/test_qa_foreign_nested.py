"""A region nested in itself (found by QA on the DLRM job: DDP's ``forward`` wrapper
calls itself, so ``DistributedDataParallel.forward`` opens inside
``DistributedDataParallel.forward`` on one thread): both ranges were instances,
so the region's count doubled and the inner one's kernels counted twice in its
totals.  One call is one instance now; the same name on another thread, or after
the first one ends, is another."""

from __future__ import annotations

import json

import numpy as np

from profiling.analysis.ranges import inside_same_key
from tests.conftest import REAL_TRACES, needs_real_traces
from tests.test_analysis_links import TID, call, gpu, op
from tui.cli import main

WRAP = "DistributedDataParallel.forward"


def _ann(name: str, ts: int, dur: int, tid: int = TID) -> dict:
    return op(name, ts, dur, cat="user_annotation", tid=tid)


EVENTS = [
    _ann(WRAP, 0, 100), _ann(WRAP, 10, 80),  # the wrapper calling itself
    op("aten::mm", 20, 30, ext=1), call("cudaLaunchKernel", 25, 5, corr=40, ext=1),
    gpu("mm_kernel", 40, 20, corr=40),
    _ann(WRAP, 200, 50),  # a second call, after the first
    call("cudaLaunchKernel", 210, 5, corr=41), gpu("add_kernel", 220, 10, corr=41),
    _ann(WRAP, 15, 40, tid=TID + 1),  # the same name on another thread at the same time
]


def _json(capsys, *argv: str):
    assert main([*argv, "--json", "--no-cache"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_region_inside_itself_is_one_instance(write_trace, capsys):
    path = str(write_trace(EVENTS))
    region = _json(capsys, "stats", path)["regions"][WRAP]
    assert region["instances"] == 3  # two calls on one thread, one on the other
    instances = _json(capsys, "kernels", path, "--region", WRAP)
    kernels = sorted(k["name"] for i in instances for k in i["kernels"])
    assert kernels == ["add_kernel", "mm_kernel"]  # each kernel once


def test_inside_same_key_against_a_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        key = rng.integers(0, 3, n)
        start = np.sort(rng.integers(0, 50, n))
        end = start + rng.integers(0, 20, n)
        order = np.lexsort((start - end, start))  # start order, longest first
        key, start, end = key[order], start[order], end[order]
        want = [any(key[j] == key[i] and start[i] < end[j] for j in range(i))
                for i in range(n)]
        assert inside_same_key(key, start, end).tolist() == want


@needs_real_traces
def test_dlrm_wrapper_counts_its_outer_calls(capsys):
    path = str(next((REAL_TRACES / "multi_rank" / "param_dlrm_8ranks").glob("worker0_*")))
    region = _json(capsys, "stats", path)["regions"][WRAP]
    assert region["instances"] == 1
