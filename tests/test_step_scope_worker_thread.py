"""A profiler step whose process launches from one thread that is not the step's own.

Found by QA on synthetic server-style traces: ``prof.step()`` runs on the main
thread while one worker thread runs the model and launches every kernel.  The
step's process launches from a single lane, so it had no per-process section in
``Links.by_launch`` (``step_scope.with_process_sections`` makes one only for two
launching lanes or more), and ``query_lanes`` looked the step's launches up on
its own lane, which holds none: every step showed 0 kernels and 0 device time,
though a step's GPU work is its whole process's (``step_scope``).
"""

from __future__ import annotations

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import load_trace
from tests.conftest import cli_json
from tests.test_analysis_links import call, gpu, op

MAIN, WORKER, OTHER_PID = 11, 12, 20


def _server_steps() -> list[dict]:
    """Two steps on MAIN; WORKER launches inside each step and once between them; a
    second process launches during step 1 onto its own device."""
    return [
        op("ProfilerStep#1", 0, 1000, ext=1, cat="user_annotation", tid=MAIN),
        op("ProfilerStep#2", 2000, 1000, ext=2, cat="user_annotation", tid=MAIN),
        op("forward", 100, 300, ext=3, cat="user_annotation", tid=WORKER),
        call("cudaGraphLaunch", 110, 5, corr=50, ext=3, tid=WORKER),
        call("cudaLaunchKernel", 1500, 5, corr=51, tid=WORKER),  # between the steps
        op("forward", 2100, 300, ext=4, cat="user_annotation", tid=WORKER),
        call("cudaGraphLaunch", 2110, 5, corr=52, ext=4, tid=WORKER),
        call("cudaLaunchKernel", 505, 5, corr=60, tid=1, pid=OTHER_PID),
        gpu("graph_a", 200, 40, corr=50),
        gpu("graph_b", 240, 10, corr=50, stream=8),
        gpu("between", 1600, 5, corr=51),
        gpu("graph_a", 2200, 41, corr=52),
        gpu("graph_b", 2241, 11, corr=52, stream=8),
        {
            "ph": "X",
            "cat": "kernel",
            "name": "other_process_kernel",
            "pid": 1,
            "tid": 7,
            "ts": 600,
            "dur": 30,
            "args": {"correlation": 60, "stream": 7, "device": 1},
        },
    ]


def test_a_step_counts_the_launches_of_its_process_s_one_launching_thread(write_trace):
    path = str(write_trace(_server_steps()))
    step = cli_json("stats", path)["regions"]["ProfilerStep*"]
    assert step["instances"] == 2
    assert step["kernels_per_instance"] == 2.0
    assert step["device_time_avg_us"] == (40 + 10 + 41 + 11) / 2
    listing = cli_json("kernels", path, "--region", "ProfilerStep*")
    assert [[k["name"] for k in inst["kernels"]] for inst in listing] == [
        ["graph_a", "graph_b"],
        ["graph_a", "graph_b"],
    ]
    assert all(k["launched_by"] == "forward" for inst in listing for k in inst["kernels"])


def test_other_regions_and_the_timeline_links_agree(write_trace):
    trace = load_trace(write_trace(_server_steps()))
    a = AnalysedTrace(trace)
    steps = a.instances("ProfilerStep*")
    for step in steps:  # what the timeline marks for a selected step is its instance's work
        launched = [trace.name(int(r)) for r in a.links.launched_in(trace, step.row)]
        assert launched == [trace.name(int(r)) for r in step.gpu_rows(trace, a.links)]
    assert [s.gpu_events for s in steps] == [2, 2]
    assert [i.gpu_events for i in a.instances("forward")] == [2, 2]  # per thread, unchanged
