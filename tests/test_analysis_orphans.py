"""Orphans counted by cause (issue 10, item 7): one synthetic trace per cause, each
built so that the linking rule (``links``/``correlation``) leaves the event alone."""

from __future__ import annotations

import json

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.orphans import CAUSES, orphans_by_cause
from profiling.analysis.stats import trace_stats
from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op
from tui.cli import main

# CPU work from t=100: an op launching one kernel (corr 1) that runs at t=300 on stream 7.
WINDOW = [op("aten::mm", 100, 50, ext=1),
          call("cudaLaunchKernel", 110, 5, corr=1, ext=1),
          gpu("gemm_kernel", 300, 20, corr=1)]


def _causes(write_trace, events) -> dict[str, int]:
    a = AnalysedTrace(load_trace(write_trace(WINDOW + events)))
    assert a.links.orphans.shape[0] == sum(orphans_by_cause(a.trace, a.links).values())
    return orphans_by_cause(a.trace, a.links)


def test_no_correlation(write_trace):
    assert _causes(write_trace, [gpu("copy_kernel", 400, 5)]) == {"no_correlation": 1}


def test_id_only_on_a_host_event_that_is_not_a_runtime_call(write_trace):
    odd = call("cudaLaunchKernel", 120, 5, corr=2, cat="some_new_api_category")
    assert _causes(write_trace, [odd, gpu("copy_kernel", 400, 5, corr=2)]) == {
        "not_a_runtime_call": 1}


def test_before_the_first_cpu_event(write_trace):
    assert _causes(write_trace, [gpu("old_kernel", 50, 5, corr=90)]) == {"before_window": 1}


def test_after_the_first_cpu_event_but_before_the_streams_first_launched_event(write_trace):
    # Starts at 200, after the CPU's first event (100), but stream 7 runs in order and
    # the first kernel launched in the window runs at 300: this one was queued earlier.
    assert _causes(write_trace, [gpu("old_kernel", 200, 5, corr=91)]) == {"before_window": 1}


def test_call_missing_after_work_launched_in_the_window(write_trace):
    causes = _causes(write_trace, [gpu("lost_kernel", 400, 5, corr=92),
                                   gpu("other_stream", 400, 5, corr=93, stream=9)])
    # Stream 9 has nothing launched in the window: it ran after the first CPU event,
    # so nothing says it was queued before the window either.
    assert causes == {"call_missing": 2}


def test_a_lone_call_in_another_process_links_so_is_no_cause(write_trace):
    events = [call("cudaLaunchKernel", 120, 5, corr=3, pid=77),
              gpu("copy_kernel", 400, 5, corr=3)]
    assert _causes(write_trace, events) == {}


def test_stats_says_each_cause_with_its_count(write_trace, capsys):
    path = write_trace(WINDOW + [gpu("a", 50, 5, corr=90), gpu("b", 51, 5, corr=91),
                                 gpu("c", 400, 5),
                                 gpu("Memset (Device)", 410, 1, corr=92, cat="gpu_memset")])
    stats = trace_stats(AnalysedTrace(load_trace(path)))
    assert stats["orphans"] == 4
    assert stats["orphans_by_cause"] == {"no_correlation": 1, "before_window": 2,
                                         "call_missing": 1}
    orphan_lines = [w for w in stats["warnings"] if "no launching call" in w]
    assert orphan_lines == [
        f"1 GPU events (1 kernels) have no launching call in the trace (no_correlation): "
        f"they {CAUSES['no_correlation']}; they count for no op or region",
        f"2 GPU events (2 kernels) have no launching call in the trace (before_window): "
        f"they {CAUSES['before_window']}; they count for no op or region",
        f"1 GPU events (1 memsets) have no launching call in the trace (call_missing): "
        f"they {CAUSES['call_missing']}; they count for no op or region",
    ]
    assert main(["stats", str(path), "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["orphans_by_cause"] == stats["orphans_by_cause"]
    assert main(["stats", str(path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "(before_window)" in out and "(call_missing)" in out
