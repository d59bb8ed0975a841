"""A file that merges several ranks' traces: which process launched a GPU event.

SGLang's ProfileMerger writes one file from every TP/DP/PP/EP rank's Kineto trace,
relabelling each pid as ``"[TP01] <pid>"`` (the host process and its GPU alike) and
leaving correlation, External and flow ids as they were.  Those ids are counted per
process, so ranks that run in step carry the same ids: no id is one call's alone,
and the launching call was chosen by time, the nearest call before the event, which
in lockstep ranks is often another rank's (found by QA on a synthetic merged trace:
every kernel of 4 ranks went to the last rank's calls, the other ranks' regions had
none).  The pid's rank label now says which process drives which device.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from tests.conftest import REAL_TRACES, cli_json, needs_real_traces

DLRM = REAL_TRACES / "multi_rank" / "param_dlrm_8ranks"


def _rank(rank: int, label: bool) -> list[dict]:
    """One rank's step: same ids as every other rank, its calls 3 us after the previous
    rank's, its kernels named after it and as long as its rank number + 1 us."""
    host, dev = 5000 + rank, rank
    lag = 3 * rank

    def pid(p: int) -> Any:
        return f"[TP{rank:02d}] {p}" if label else p

    events = [
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": "forward_batch",
            "pid": pid(host),
            "tid": host,
            "ts": 10 + lag,
            "dur": 80,
            "args": {"External id": 1},
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaGraphLaunch",
            "pid": pid(host),
            "tid": host,
            "ts": 20 + lag,
            "dur": 5,
            "args": {"correlation": 100, "External id": 1},
        },
    ]
    for j in range(3):
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": f"graph_k_r{rank}",
                "pid": pid(dev),
                "tid": 7,
                "ts": 40 + lag + 10 * j,
                "dur": rank + 1,
                "args": {"correlation": 100, "External id": 1, "device": dev, "stream": 7},
            }
        )
    return events


def test_each_rank_s_kernels_are_its_own_calls(write_trace):
    path = str(write_trace([e for r in range(4) for e in _rank(r, label=True)]))
    listing = cli_json("kernels", path, "--region", "forward_batch")
    assert len(listing) == 4
    for inst in listing:
        names = {k["name"] for k in inst["kernels"]}
        assert len(inst["kernels"]) == 3 and len(names) == 1, inst
    got = sorted(next(iter({k["name"] for k in i["kernels"]})) for i in listing)
    assert got == [f"graph_k_r{r}" for r in range(4)]
    trace = load_trace(path)
    a = AnalysedTrace(trace)
    for inst in a.instances("forward_batch"):
        host = trace.lanes[inst.lane].pid
        names = {trace.name(int(r)) for r in inst.gpu_rows(trace, a.links)}
        assert names == {f"graph_k_r{int(str(host).split()[-1]) - 5000}"}


def test_bare_pids_keep_the_nearest_call_rule(write_trace):
    """Without labels nothing tells the ranks apart: the rule before this change (the
    nearest call made before the event) stands, and every event still has one call."""
    trace = load_trace(write_trace([e for r in range(2) for e in _rank(r, label=False)]))
    a = AnalysedTrace(trace)
    assert sum(i.gpu_events for i in a.instances("forward_batch")) == 6


def _lone_id_rank(rank: int, with_call: bool) -> dict[str, Any]:
    """A rank whose kernel has id 7; its call is in the file only ``with_call`` (else
    it was made before the profiling window: the kernel runs before any CPU event)."""
    host, at = 5000 + rank, 100
    events: list[dict[str, Any]] = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": host, "tid": host,
         "ts": at, "dur": 20, "args": {"External id": 3}},
    ]
    if with_call:
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": host, "tid": host, "ts": at + 5, "dur": 5,
                       "args": {"correlation": 7, "External id": 3}})
    start = at + 30 if with_call else at - 50
    events.append({"ph": "X", "cat": "kernel", "name": f"k_r{rank}", "pid": rank, "tid": 7,
                   "ts": start, "dur": 10,
                   "args": {"correlation": 7, "device": rank, "stream": 7}})
    return {"traceEvents": events, "distributedInfo": {"rank": rank, "world_size": 2}}


def test_another_rank_s_lone_call_never_launches_a_kernel(write_trace):
    """Rank 1's kernel was launched before the window; rank 0's only call with the
    same id is not its launch (it was, before: a lone id linked wherever it was)."""
    from tests.fixtures.sglang_merge import merged_like_sglang

    doc = merged_like_sglang([_lone_id_rank(0, True), _lone_id_rank(1, False)])
    path = str(write_trace(doc.pop("traceEvents"), **doc))
    stats = cli_json("stats", path)
    assert (stats["gpu_events"], stats["orphans"]) == (2, 1)
    assert stats["orphans_by_cause"] == {"before_window": 1}
    trace = load_trace(path)
    links = AnalysedTrace(trace).links
    (orphan,) = links.orphans.tolist()
    assert trace.name(orphan) == "k_r1"
    (kernel,) = [int(r) for r in links.gpu_rows if int(r) != orphan]
    assert trace.lanes[trace.lane[int(links.launch[kernel])]].pid == "[TP00] 5000"


@needs_real_traces
def test_the_dlrm_job_merged_as_sglang_does_has_each_rank_s_numbers(write_trace):
    """The 8-rank DLRM job merged into one file as SGLang does: its orphans (and their
    causes) are the ranks' own, and every region figure of ``stats`` is the ranks'
    figures weighted by their instances.  Before, 81 of its 2,244 GPU events were
    taken by another rank's call whose id they shared, and 30 region figures moved."""
    import json

    from tests.fixtures.sglang_merge import merged_like_sglang

    paths = sorted(str(p) for p in DLRM.glob("*.json"))
    assert len(paths) == 8
    ranks = [cli_json("stats", p) for p in paths]
    doc = merged_like_sglang([json.loads(Path(p).read_text()) for p in paths])
    merged = cli_json("stats", str(write_trace(doc.pop("traceEvents"), **doc)))
    assert merged["gpu_events"] == sum(r["gpu_events"] for r in ranks)
    assert merged["orphans"] == sum(r["orphans"] for r in ranks) > 0
    causes: Counter[str] = Counter()
    for r in ranks:
        causes.update(r["orphans_by_cause"])
    assert merged["orphans_by_cause"] == dict(causes)
    for name, region in merged["regions"].items():
        own = [r["regions"][name] for r in ranks if name in r["regions"]]
        n = sum(o["instances"] for o in own)
        assert region["instances"] == n, name
        for key in ("kernels_per_instance", "memcpy_per_instance", "memset_per_instance",
                    "device_time_avg_us"):
            weighted = sum(o[key] * o["instances"] for o in own) / n
            assert region[key] == pytest.approx(weighted, rel=1e-6, abs=1e-3), (name, key)
