"""An op and the one launch call it is made of, with exactly the same start and length
(found by QA: the same trace shuffled gave another op table).

At microsecond resolution an op that does nothing but launch (``aten::fill_`` around
its ``cudaLaunchKernel``) can start and end with its call, and the call carries the
op's External id, so the External-id rule for exact ties left them in file order.
Written call first, the call became the op's parent: ``table`` gave the op's self
CPU time to the call, the kernel's device time to no op, and an enclosing
annotation lost it too.  A runtime call is a leaf; torch's own event list holds the
ops before the runtime calls.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from typing import Any

import pytest

from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op


def _table(path: str) -> dict[str, dict[str, Any]]:
    from tui.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["table", path, "--json", "--no-cache", "--limit", "1000"]) == 0
    return {r["key"]: r for r in json.loads(out.getvalue()) if r["device_type"] == "CPU"}


def _fill() -> list[dict]:
    return [
        op("attn_fwd", 90, 50, ext=1, cat="user_annotation"),
        op("aten::zero_", 100, 3, ext=2),
        op("aten::fill_", 100, 3, ext=3),
        call("cudaLaunchKernel", 100, 3, corr=100, ext=3),
        gpu("fill_kernel", 120, 5, corr=100),
    ]


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [0, 3, 2, 1, 4], [4, 3, 1, 2, 0],
                                   [3, 0, 2, 4, 1]])
def test_an_op_holds_the_call_it_ties_with_in_any_file_order(write_trace, order):
    events = _fill()
    trace = load_trace(write_trace([events[i] for i in order]))
    assert [trace.name(i) for i in range(4)] == [
        "attn_fwd", "aten::zero_", "aten::fill_", "cudaLaunchKernel"]
    assert [int(d) for d in trace.depth[:4]] == [0, 1, 2, 3]
    table = _table(str(trace.path))
    assert table["aten::fill_"]["self_device_time_total"] == 5.0
    assert table["attn_fwd"]["device_time_total"] == 5.0
    assert table["aten::fill_"]["self_cpu_time_total"] == 0.0
    assert table["cudaLaunchKernel"]["self_cpu_time_total"] == 3.0


def test_a_shuffled_trace_gives_the_same_table(write_trace):
    """Ops that are one call, ops that hold an op of their span and a call, ops with a
    call inside: the table of the file shuffled is the table of the file."""
    rng = random.Random(7)
    events, corr = [], 100
    for k in range(30):
        t, corr, ext = 10 * k, corr + 1, 1000 + k  # Kineto numbers a parent first
        shape = k % 3
        if shape == 0:
            events += [op("aten::fill_", t, 2, ext), call("cudaLaunchKernel", t, 2, corr, ext)]
        elif shape == 1:
            events += [op("aten::zero_", t, 3, ext=k + 1), op("aten::fill_", t, 3, ext=ext),
                       call("cudaLaunchKernel", t, 3, corr, ext)]
        else:
            events += [op("aten::add", t, 3, ext), call("cudaLaunchKernel", t + 1, 1, corr, ext)]
        events.append(gpu("k", 1000 + 5 * k, 2, corr=corr))
    want = _table(str(write_trace(events, name="ordered.json")))
    for n in range(3):
        shuffled = events[:]
        rng.shuffle(shuffled)
        assert _table(str(write_trace(shuffled, name=f"shuffled{n}.json"))) == want
    assert want["aten::fill_"]["self_device_time_total"] == 2.0 * 20
