"""Regions, copies, the kernels listing and the stats object on tiny handmade traces."""

from __future__ import annotations

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import instance_kernels
from profiling.analysis.stats import trace_stats
from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op


def attention_step(step: int, t0: float, corr0: int, with_copy: bool) -> list[dict]:
    """One ProfilerStep holding one attn_fwd with 2 kernels (+ a memcpy) and a memset."""
    ext = 100 * step
    events = [
        op(f"ProfilerStep#{step}", t0, 400, ext=ext, cat="user_annotation"),
        op("attn_fwd", t0 + 10, 200, ext=ext + 1, cat="user_annotation"),
        op("aten::bmm", t0 + 20, 30, ext=ext + 2),
        call("cudaLaunchKernel", t0 + 25, 5, corr=corr0, ext=ext + 2),
        op("aten::softmax", t0 + 60, 30, ext=ext + 3),
        call("cudaLaunchKernel", t0 + 65, 5, corr=corr0 + 1, ext=ext + 3),
        op("aten::zero_", t0 + 300, 20, ext=ext + 5),  # after attn_fwd, inside the step
        call("cudaMemsetAsync", t0 + 305, 5, corr=corr0 + 3, ext=ext + 5),
        # launched late, runs first: GPU order is not launch order
        gpu("bmm_kernel", t0 + 500, 40, corr=corr0, ext=ext + 2, stream=7),
        gpu("softmax_kernel", t0 + 450, 10, corr=corr0 + 1, ext=ext + 3, stream=8),
        gpu("Memset (Device)", t0 + 600, 1, corr=corr0 + 3, cat="gpu_memset"),
        {"ph": "X", "cat": "gpu_user_annotation", "name": "attn_fwd", "pid": 0, "tid": 7,
         "ts": t0 + 450, "dur": 90, "args": {"External id": ext + 1}},
    ]
    if with_copy:
        events += [
            op("aten::copy_", t0 + 100, 30, ext=ext + 4),
            call("cudaMemcpyAsync", t0 + 105, 5, corr=corr0 + 2, ext=ext + 4),
            gpu("Memcpy HtoD (Pageable -> Device)", t0 + 545, 4, corr=corr0 + 2,
                cat="gpu_memcpy"),
        ]
    return events


@pytest.fixture
def trace(write_trace):
    events = attention_step(3, 1000, 10, True) + attention_step(4, 2000, 20, False)
    # a kernel launched from another thread while attn_fwd is open: not attn_fwd's
    events += [call("cudaLaunchKernel", 1050, 5, corr=99, tid=77),
               gpu("other_thread_kernel", 1100, 5, corr=99)]
    return load_trace(write_trace(events))


def test_instances_and_gpu_events_launched_inside_on_the_same_thread(trace):
    a = AnalysedTrace(trace)
    attn = a.regions.select("attn_fwd")
    assert [i.index for i in attn] == [0, 1]
    first = attn[0]
    assert (first.kernels, first.memcpys, first.memsets) == (2, 1, 0)
    assert first.cpu_ns == 200_000
    assert first.device_ns == (40 + 10 + 4) * 1000
    assert first.gpu_annotation_ns == 90_000  # the cross-check, not the source
    names = [trace.name(r) for r in first.gpu_rows(trace, a.links)]
    assert names == ["softmax_kernel", "bmm_kernel", "Memcpy HtoD (Pageable -> Device)"]
    assert (attn[1].kernels, attn[1].memcpys) == (2, 0)


def test_profiler_steps_keep_their_names_and_group_as_profilerstep_star(trace):
    regions = AnalysedTrace(trace).regions
    assert regions.names() == ["ProfilerStep*", "attn_fwd"]
    steps = regions.select("ProfilerStep*")
    assert [(s.name, s.index) for s in steps] == [("ProfilerStep#3", 0), ("ProfilerStep#4", 1)]
    assert [s.name for s in regions.select("ProfilerStep#4")] == ["ProfilerStep#4"]
    # A step is the whole process's iteration: the other thread's kernel is its too
    # (not attn_fwd's); step_scope.
    assert steps[0].memsets == 1 and steps[0].kernels == 3


def test_summaries_average_per_instance(trace):
    summary = {s.name: s for s in AnalysedTrace(trace).regions.summaries()}
    attn = summary["attn_fwd"]
    assert attn.instances == 2
    assert attn.cpu_time_avg_us == pytest.approx(200.0)
    assert attn.device_time_avg_us == pytest.approx((54 + 50) / 2)
    assert (attn.kernels_per_instance, attn.memcpy_per_instance) == (2.0, 0.5)
    assert summary["ProfilerStep*"].memset_per_instance == 1.0


def test_old_traces_spell_steps_as_ops(write_trace):
    events = [op("ProfilerStep#1", 0, 100, ext=1, cat="Operator"),
              op("aten::add", 10, 10, ext=2, cat="Operator")]
    regions = AnalysedTrace(load_trace(write_trace(events))).regions
    assert regions.names() == ["ProfilerStep*"]


def test_copies_by_name_with_launchers_and_regions(trace):
    a = AnalysedTrace(trace)
    copies = {c.name: c for c in a.copies}
    memcpy = copies["Memcpy HtoD (Pageable -> Device)"]
    assert (memcpy.kind, memcpy.count, memcpy.total_us) == ("memcpy", 1, 4.0)
    assert memcpy.launched_by == ["aten::copy_"]
    assert memcpy.regions == ["ProfilerStep*", "attn_fwd"]
    memset = copies["Memset (Device)"]
    assert memset.count == 2 and memset.regions == ["ProfilerStep*"]
    assert memset.launched_by == ["aten::zero_"]


def test_instance_kernels_offsets_from_first_gpu_event(trace):
    a = AnalysedTrace(trace)
    listing = instance_kernels(a, a.regions.select("attn_fwd")[0])
    js = listing.as_json()
    assert js["region"] == "attn_fwd" and js["instance"] == 0
    assert [k["name"] for k in js["kernels"]][0] == "softmax_kernel"
    assert [k["start_offset_us"] for k in js["kernels"]] == [0.0, 50.0, 95.0]
    assert js["kernels"][1] == {"name": "bmm_kernel", "kind": "kernel", "start_offset_us": 50.0,
                                "dur_us": 40.0, "stream": 7, "launched_by": "aten::bmm",
                                "launch_chain": ["aten::bmm", "cudaLaunchKernel"],
                                "attribution": "external_id"}
    assert js["start_us"] == pytest.approx(1010.0 - 1000.0)  # from the trace's first event
    assert js["gpu_start_us"] == pytest.approx(450.0)
    assert js["cpu_time_us"] == 200.0 and js["device_time_us"] == 54.0


def test_stats_object(trace):
    stats = trace_stats(trace)
    assert stats["events"] == trace.n_entries
    assert {lane["kind"] for lane in stats["lanes"]} >= {"cpu", "gpu"}
    assert set(stats["lanes"][0]) == {"kind", "pid", "tid", "label", "events"}
    assert stats["regions"]["attn_fwd"]["kernels_per_instance"] == 2.0
    assert stats["copies"]["Memset (Device)"]["count"] == 2
    assert stats["orphans"] == 0


def test_orphans_become_a_warning(write_trace):
    t = load_trace(write_trace([gpu("early", 0, 5, corr=1), gpu("early2", 10, 5, corr=2,
                                                                cat="gpu_memcpy")]))
    stats = trace_stats(t)
    assert stats["orphans"] == 2
    assert any("2 GPU events (1 kernels, 1 memcpys)" in w for w in stats["warnings"])


def synthetic_steps(steps: int, regions: int = 10, ops: int = 8) -> list[dict]:
    """A seeded, regular trace: steps > attn_fwd regions > ops > launches > kernels."""
    events, ts, corr, ext = [], 0.0, 1, 1
    for s in range(steps):
        step_start, step_at = ts, len(events)
        events.append({})
        ts += 1
        for _ in range(regions):
            region_start, region_at = ts, len(events)
            events.append({})
            ts += 0.5
            for k in range(ops):
                events.append(op(f"aten::op{k}", ts, 3.0, ext=ext))
                events.append(call("cudaLaunchKernel", ts + 1, 1.0, corr=corr, ext=ext))
                events.append(gpu(f"kernel_{k}", ts + 5, 2.0, corr=corr, ext=ext))
                corr, ext, ts = corr + 1, ext + 1, ts + 3.5
            events[region_at] = op("attn_fwd", region_start, ts - region_start, ext=ext,
                                   cat="user_annotation")
            ext, ts = ext + 1, ts + 0.5
        events[step_at] = op(f"ProfilerStep#{s}", step_start, ts - step_start, ext=ext,
                             cat="user_annotation")
        ext, ts = ext + 1, ts + 1
    return events


def test_many_instances_at_once(write_trace):
    from profiling.analysis.key_averages import key_averages

    t = load_trace(write_trace(synthetic_steps(150)))
    a = AnalysedTrace(t)
    summary = {s.name: s for s in a.regions.summaries()}
    assert summary["attn_fwd"].instances == 1500
    assert summary["attn_fwd"].kernels_per_instance == 8.0
    assert summary["ProfilerStep*"].kernels_per_instance == 80.0
    assert summary["attn_fwd"].device_time_avg_us == pytest.approx(16.0)
    rows = {(r.key, r.device_type): r for r in key_averages(t).rows}
    assert rows["cudaLaunchKernel", "CPU"].count == 150 * 10 * 8
    assert rows["attn_fwd", "CPU"].device_time_total == pytest.approx(1500 * 16.0)
    assert rows["ProfilerStep*", "CPU"].count == 150
