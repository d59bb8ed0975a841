"""Flow-only links on traces whose GPU events carry no ``correlation`` (found by QA on a
variant of the real HTA AlexNet trace with the GPU events' correlation args removed).

Kineto ends ``ac2g`` flows on ``cuda_sync`` slices too ("Stream Sync" of a
cudaStreamSynchronize), and those run on the stream's lane while the copy before
them is still open there.  A flow finish binds to its innermost enclosing slice, so
the sync's flow must not tie the copy to cudaStreamSynchronize.
"""

from __future__ import annotations

from pathlib import Path

from profiling.analysis.links import LinkSource, link_gpu_events
from profiling.trace import load_trace
from tests.test_analysis_links import PID, TID, call, flow, gpu, op, row

REAL_ALEXNET = (
    Path(__file__).resolve().parents[2]
    / "shared/real_traces/single_gpu/hta_alexnet__benchmark_result_2869224_1695835535_trace.json.gz"
)


def _copy_then_sync() -> list[dict]:
    # The numbers of the real trace (alexnet, correlation 14 and 15), relative.
    return [
        op("aten::copy_", 90, 80, ext=1),
        call("cudaMemcpyAsync", 100, 54, corr=14, ext=1),
        flow("s", 14, 100, PID, TID),
        call("cudaStreamSynchronize", 163, 11, corr=15, ext=1),
        flow("s", 15, 163, PID, TID),
        gpu("Memcpy HtoD (Pageable -> Device)", 155, 12, cat="gpu_memcpy"),  # no correlation
        flow("f", 14, 155, 0, 7),
        {
            "ph": "X",
            "cat": "cuda_sync",
            "name": "Stream Sync",
            "pid": 0,
            "tid": 7,
            "ts": 165,
            "dur": 9,
            "args": {"stream": 7, "device": 0},
        },
        flow("f", 15, 165, 0, 7),
    ]


def test_sync_flow_does_not_relink_the_open_copy(write_trace):
    trace = load_trace(write_trace(_copy_then_sync()))
    links = link_gpu_events(trace)
    memcpy = row(trace, "Memcpy HtoD (Pageable -> Device)")
    assert trace.name(int(links.launch[memcpy])) == "cudaMemcpyAsync"
    assert links.source[memcpy] == LinkSource.FLOW
    assert trace.name(int(links.op[memcpy])) == "aten::copy_"


def test_flow_ending_inside_an_earlier_sync_still_links(write_trace):
    """The rule only drops a flow when the other slice is the *inner* one: a GPU event
    that starts while an older device slice is open keeps its flow."""
    events = _copy_then_sync()
    events[7]["ts"], events[7]["dur"] = 150, 30  # the sync now opens before the copy
    events[8]["ts"] = 150
    trace = load_trace(write_trace(events))
    links = link_gpu_events(trace)
    memcpy = row(trace, "Memcpy HtoD (Pageable -> Device)")
    assert trace.name(int(links.launch[memcpy])) == "cudaMemcpyAsync"


def test_real_alexnet_without_gpu_correlation_links_as_with_it(tmp_path):
    import gzip
    import json

    if not REAL_ALEXNET.is_file():
        import pytest

        pytest.skip("../shared/real_traces absent")
    doc = json.loads(gzip.decompress(REAL_ALEXNET.read_bytes()))
    with_corr = link_gpu_events(load_trace(REAL_ALEXNET))
    ref = load_trace(REAL_ALEXNET)
    for e in doc["traceEvents"]:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            e["args"].pop("correlation", None)
    path = tmp_path / "flows_only.json"
    path.write_text(json.dumps(doc))
    trace = load_trace(path)
    flows = link_gpu_events(trace)
    assert (flows.source[flows.gpu_rows] == LinkSource.FLOW).all()
    want = [ref.name(int(with_corr.launch[r])) for r in with_corr.gpu_rows]
    got = [trace.name(int(flows.launch[r])) for r in flows.gpu_rows]
    assert got == want
