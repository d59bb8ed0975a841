"""A region whose GPU work is a CUDA graph replay is not told to adopt CUDA graphs.

Serving engines replay their decode steps as graphs: one ``cudaGraphLaunch`` whose
correlation id every kernel of the graph carries.  The traces here are built as
the findings tests build theirs (``test_compare_fixtures.Builder``), with one more
node: ``Graph``, a graph-launch call and the kernels it replays, all sharing the
call's correlation id, as Kineto records them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.finding_graphs import GRAPH_LAUNCH, graph_replays
from profiling.analysis.findings import Finding, region_context, trace_findings
from profiling.trace import Trace, load_trace
from tests.conftest import SAMPLE_TRACES, needs_real_traces, real_trace_files
from tests.test_compare_fixtures import Builder, Launch, Op, Sync, write_doc
from tests.test_findings_batch import check_rules

TINY = "void at::native::vectorized_elementwise_kernel<4, AddFunctor<float> >(int)"


@dataclass
class Graph:
    """One graph launch replaying ``kernels`` (µs each), back to back on the stream."""

    kernels: list[float] = field(default_factory=lambda: [2.0] * 5)
    api: str = "cudaGraphLaunch"


class GraphBuilder(Builder):
    def _node(self, node: Any) -> None:
        if not isinstance(node, Graph):
            super()._node(node)
            return
        self.corr += 1
        ts = self.cpu + 1
        self._x("cuda_runtime", node.api, ts, 4, 1, 1, {"correlation": self.corr})
        start = max(self.gpu, ts + 5)
        for i, dur in enumerate(node.kernels):
            self._x(
                "kernel",
                f"{TINY} #{i}",
                start,
                dur,
                0,
                7,
                {"correlation": self.corr, "device": 0, "stream": 7, "graph node id": i + 1},
            )
            start += dur
        self.gpu = start
        self.cpu += 6


def eager_step() -> list[Any]:
    return [Op("aten::add", [Launch(TINY, 2.0)]) for _ in range(5)]


def graph_step(api: str = "cudaGraphLaunch") -> list[Any]:
    """A decode step as an engine runs it: host work (inputs prepared on the host),
    then one replay of five tiny kernels."""
    return [Op("aten::index_put_", []), Graph(api=api)]


def built(tmp_path: Path, regions: list[list[Any]], name: str) -> Trace:
    b = GraphBuilder()
    for tree in regions:
        b.region(tree, cpu_pad=20.0)
    return load_trace(write_doc(tmp_path / name, b.document(None)), use_cache=False)


def found(trace: Trace) -> dict[str, Finding]:
    return {f.id: f for f in trace_findings(trace).findings}


def test_graph_kernels_share_their_launch(tmp_path: Path) -> None:
    """The fixture is what the rule reads: every kernel of a replay links to the one call."""
    trace = built(tmp_path, [graph_step()] * 2, "g.json")
    a = AnalysedTrace(trace)
    kernels = np.flatnonzero(
        np.char.startswith(np.array([trace.name(r) for r in range(len(trace))]), TINY)
    )
    calls = {int(a.links.launch[r]) for r in kernels.tolist()}
    assert len(kernels) == 10 and len(calls) == 2
    assert {trace.name(c) for c in calls} == {"cudaGraphLaunch"}


def test_eager_launch_bound_region_is_told_to_use_graphs(tmp_path: Path) -> None:
    trace = built(tmp_path, [eager_step()] * 3, "eager.json")
    f = found(trace)["launch-bound"]
    assert "CUDA graphs" in f.suggestion and "reduce-overhead" in f.suggestion
    assert "replay" not in f.detail and "replay" not in f.suggestion
    check_rules(trace)


@pytest.mark.parametrize(
    "api", ["cudaGraphLaunch", "cudaGraphLaunch_v10000", "hipGraphLaunch", "cuGraphLaunch"]
)
def test_graph_replays_are_not_told_to_adopt_graphs(tmp_path: Path, api: str) -> None:
    trace = built(tmp_path, [graph_step(api)] * 3, f"{api}.json")
    f = found(trace)["launch-bound"]
    assert f.instances == (0, 1, 2)  # the host cost is real: the finding stays
    assert f"every instance replays a CUDA graph ({api})" in f.detail
    assert "kernels are already one launch per replay, so" in f.detail
    assert "reduce-overhead" not in f.suggestion and "batch more work" not in f.suggestion
    assert f.suggestion.startswith("CUDA graphs are already in use")
    assert "host work around each replay" in f.suggestion
    check_rules(trace)


def test_work_launched_outside_the_graph_is_counted(tmp_path: Path) -> None:
    """Every step replays a graph and also launches two kernels of its own (sampling,
    say): the detail counts them; the advice still does not say to adopt graphs."""
    step = [*graph_step(), Op("aten::argmax", [Launch(TINY, 2.0), Launch(TINY, 2.0)])]
    trace = built(tmp_path, [step] * 3, "outside.json")
    f = found(trace)["launch-bound"]
    assert "(and 2 GPU event(s) per instance launched outside it)" in f.detail
    assert "reduce-overhead" not in f.suggestion
    assert "capture more of the step in the graph" in f.suggestion
    check_rules(trace)


def test_instances_with_no_gpu_work_are_neither(tmp_path: Path) -> None:
    """An instance that launches nothing is not an eager one: the rest still all replay."""
    trace = built(tmp_path, [graph_step()] * 3 + [[Op("aten::view", [])]], "idle.json")
    f = found(trace)["launch-bound"]
    assert "every instance with GPU work replays a CUDA graph" in f.detail
    assert "reduce-overhead" not in f.suggestion
    check_rules(trace)


def test_mixed_region_says_how_many_replay(tmp_path: Path) -> None:
    """Two eager warm-up steps, then three replays: both pieces of advice, each to its own."""
    trace = built(tmp_path, [eager_step()] * 2 + [graph_step()] * 3, "mixed.json")
    f = found(trace)["launch-bound"]
    assert "3 of 5 instances replay a CUDA graph (cudaGraphLaunch)" in f.detail
    assert "the other 2 launch their kernels one by one" in f.detail
    assert "for the 2 instances that launch kernels one by one" in f.suggestion
    assert "reduce-overhead" in f.suggestion
    assert "for the 3 graph replays: look at the host work" in f.suggestion
    check_rules(trace)


def test_graph_launch_seen_on_the_host_only(tmp_path: Path) -> None:
    """A replay whose kernels the profiler did not record (no GPU event carries its
    correlation) still makes the instance a graph replay: its own CPU rows hold the call."""
    b = GraphBuilder()
    for _ in range(3):
        b.region([Op("aten::add", [Launch(TINY, 2.0)]), Sync("cudaGraphLaunch", 4.0)], cpu_pad=20.0)
    trace = load_trace(write_doc(tmp_path / "host.json", b.document(None)), use_cache=False)
    a = AnalysedTrace(trace)
    ctx = region_context(a, "attn_fwd", a.instances("attn_fwd"))
    g = graph_replays(ctx)
    assert g.replays.tolist() == [True] * 3 and g.calls == ("cudaGraphLaunch",)
    assert "every instance replays a CUDA graph" in found(trace)["launch-bound"].detail
    check_rules(trace)


def test_gpu_idle_between_replays_is_not_told_to_capture_a_graph(tmp_path: Path) -> None:
    """Two replays per step with host work between them: the GPU waits for the host
    (a host-late gap), and the advice is about that host work, not about graphs."""
    step = [Graph(), Sync("cudaGetDeviceProperties", 100.0), Graph()]
    trace = built(tmp_path, [step] * 3, "gaps.json")
    f = found(trace)["gpu-idle-gaps"]
    assert "the GPU waits for the host to launch it" in f.detail
    assert "capture the region in a CUDA graph" not in f.suggestion
    assert "already replays a CUDA graph (cudaGraphLaunch)" in f.suggestion
    eager = [
        Op("aten::add", [Launch(TINY, 2.0)]),
        Sync("cudaGetDeviceProperties", 100.0),
        Op("aten::add", [Launch(TINY, 2.0)]),
    ]
    mixed = built(tmp_path, [eager] * 2 + [step] * 3, "gaps_mixed.json")
    g = found(mixed)["gpu-idle-gaps"]
    assert "of the 2 instances that launch kernels one by one: fuse" in g.suggestion
    assert "those of the 3 instances that replay a graph: they already replay" in g.suggestion
    assert "capture the region in a CUDA graph, and look for host work" in g.suggestion
    plain = found(built(tmp_path, [eager] * 3, "gaps_eager.json"))["gpu-idle-gaps"]
    assert plain.suggestion.startswith("fuse the small kernels (torch.compile) or capture")
    for t in (trace, mixed):
        check_rules(t)


def test_graph_launch_names() -> None:
    for name in (
        "cudaGraphLaunch",
        "cudaGraphLaunch_v10000",
        "cudaGraphLaunch_ptsz",
        "hipGraphLaunch",
        "cuGraphLaunch",
    ):
        assert GRAPH_LAUNCH.search(name), name
    for name in (
        "cudaLaunchKernel",
        "cuLaunchKernelEx",
        "cudaGraphInstantiate",
        "cudaStreamIsCapturing",
        "cudaGraphLaunchX",
        "aten::cudaGraphLaunch",
        "cudaStreamBeginCapture",
        "hipLaunchKernel",
    ):
        assert not GRAPH_LAUNCH.search(name), name


@needs_real_traces
@pytest.mark.parametrize(
    "path", sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files(), ids=lambda p: p.name[:40]
)
def test_no_graph_replay_in_traces_without_graph_launches(path: Path) -> None:
    """None of the samples or real traces launches a graph (their runtime calls were
    checked by hand): no finding may say a region replays one."""
    trace = load_trace(path, use_cache=False)
    assert not any(GRAPH_LAUNCH.search(s) for s in trace.strings)
    for f in trace_findings(trace).findings:
        assert "graph replay" not in f.suggestion and "replays a CUDA graph" not in f.detail
