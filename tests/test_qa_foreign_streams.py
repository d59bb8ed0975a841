"""A GPU event written without a ``stream`` arg (found by QA on handmade traces):
Kineto puts the stream in the tid of every device event, and the arg only beside
it, so a writer that leaves the arg out still says the stream.  ``kernels --json``
printed ``"stream": null`` for such kernels while the timeline drew them on their
stream's lane; the loader now reads the lane's tid as the stream."""

from __future__ import annotations

import json

from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op
from tui.cli import main


def _no_stream_arg(event: dict) -> dict:
    event["args"].pop("stream")
    return event


EVENTS = [
    op("attn_fwd", 0, 200, cat="user_annotation", ext=1),
    op("aten::mm", 10, 100, ext=2),
    call("cudaLaunchKernel", 20, 5, corr=40, ext=2),
    _no_stream_arg(gpu("mm_kernel", 50, 20, corr=40, stream=13)),
    call("cudaLaunchKernel", 30, 5, corr=41, ext=2),
    gpu("add_kernel", 80, 20, corr=41, stream=7),  # an arg that says 7
]


def test_a_kernel_without_a_stream_arg_is_on_its_lanes_stream(write_trace, capsys):
    path = write_trace(EVENTS)
    trace = load_trace(path)
    stream = {trace.name(i): int(trace.stream[i]) for i in range(len(trace))}
    assert stream["mm_kernel"] == 13 and stream["add_kernel"] == 7
    assert stream["aten::mm"] == -1  # host rows keep no stream
    assert main(["kernels", str(path), "--region", "attn_fwd", "--json", "--no-cache"]) == 0
    (instance,) = json.loads(capsys.readouterr().out)
    assert {k["name"]: k["stream"] for k in instance["kernels"]} == {
        "mm_kernel": 13, "add_kernel": 7}
