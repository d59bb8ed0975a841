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

from typing import Any

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from tests.conftest import cli_json


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
