"""Which instances of a region replay a CUDA (or HIP) graph, and what the timing
findings then say instead of "use CUDA graphs".

Serving engines (vLLM, SGLang, nano-vllm) run their decode steps as graph
replays: the host makes one ``cudaGraphLaunch`` (``hipGraphLaunch``, the driver's
``cuGraphLaunch``; Kineto may name it ``cudaGraphLaunch_v10000``) and every kernel
of the graph carries that call's correlation id.  Telling such a region to cut
its launch overhead with CUDA graphs is wrong advice: its kernels are already one
launch.  What is left is the host's work around the replay (the graph launch
itself, scheduling, Python, input copies, syncs) and the GPU waiting for it.

An instance replays a graph when a graph-launch call launched one of its GPU
events (``links.launch``) or is among its own CPU rows (a replay whose kernels
the profiler missed still means the region uses graphs).  The rules count such
instances among those with GPU work and choose their text by that count: none,
all, or some (said as "k of n").  No majority threshold: a mixed region (eager
warm-up steps, an eager fallback for some batch sizes) gets both pieces of
advice, each addressed to the instances it is true of.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from profiling.analysis.finding_batch import name_flags, names_of
from profiling.analysis.finding_types import RegionContext
from profiling.trace.model import Kind

GRAPH_LAUNCH = re.compile(r"^(?:cuda|hip|cu)GraphLaunch(?:_\w+)?$")
"""A graph-launch runtime or driver call: cudaGraphLaunch, cudaGraphLaunch_v10000,
cudaGraphLaunch_ptsz, hipGraphLaunch, cuGraphLaunch."""

EAGER_ADVICE = (
    "batch more work per call, or cut launch overhead with CUDA graphs "
    "(torch.compile mode='reduce-overhead')"
)
REPLAY_ADVICE = (
    "look at the host work around each replay in the timeline (Python, "
    "scheduling, input copies, syncs), capture more of the step in the graph, "
    "or overlap the host with the previous replay (prepare the next inputs "
    "while the graph runs)"
)


@dataclass(frozen=True)
class GraphReplays:
    """Per instance (in ``RegionContext.instances`` order): whether it replays a graph
    (``replays``), whether it has GPU work at all (``work``: GPU events, or a graph
    launch) and how many of its GPU events a call other than a graph launch
    launched (``outside``); ``calls``: the graph-launch call names found, sorted."""

    replays: np.ndarray
    work: np.ndarray
    outside: np.ndarray
    calls: tuple[str, ...]

    def count(self, positions: np.ndarray | None = None) -> tuple[int, int]:
        """(instances replaying a graph, instances with GPU work), of ``positions`` only
        when given."""
        replays, work = self.replays, self.work
        if positions is not None:
            replays, work = replays[positions], work[positions]
        return int(replays.sum()), int(work.sum())

    @property
    def named(self) -> str:
        return ", ".join(self.calls)

    def outside_per_replay(self) -> float:
        """GPU events launched outside the graph, per instance that replays one."""
        g = int(self.replays.sum())
        return float(self.outside[self.replays].sum()) / g if g else 0.0


def graph_replays(ctx: RegionContext) -> GraphReplays:
    """``GraphReplays`` of every instance at once: the launching calls of the region's
    GPU rows and the instances' runtime rows, each distinct name tested once."""
    t, n = ctx.trace, len(ctx.instances)
    replays = np.zeros(n, dtype=bool)
    outside = np.zeros(n, dtype=np.int64)
    found: list[np.ndarray] = []
    b = ctx.batch
    calls = np.asarray(ctx.analysed.links.launch[b.rows], dtype=np.int64)
    known = np.flatnonzero(calls >= 0)
    if known.shape[0]:
        graph = name_flags(t, np.asarray(t.name_id[calls[known]]), GRAPH_LAUNCH.search)
        replays[ctx.gpu_owner[known[graph]]] = True
        found.append(calls[known[graph]])
        outside = np.bincount(ctx.gpu_owner[known[~graph]], minlength=n)
    rows, owner = ctx.cpu_flat[0], ctx.cpu_owner
    runtime = np.flatnonzero(t.kind[rows] == int(Kind.RUNTIME))
    if runtime.shape[0]:
        graph = name_flags(t, np.asarray(t.name_id[rows[runtime]]), GRAPH_LAUNCH.search)
        replays[owner[runtime[graph]]] = True
        found.append(rows[runtime[graph]])
    every = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    work = replays | (np.diff(b.inst_ptr) > 0)
    return GraphReplays(replays, work, outside, tuple(sorted(names_of(t, every))))


def launch_text(ratio: float, graphs: GraphReplays) -> tuple[str, str]:
    """(detail, suggestion) of ``launch-bound``: CPU ``ratio`` times the GPU time."""
    said = f"the host spends {ratio:.1f}x the GPU time issuing this region"
    caveat = " (the profiler inflates CPU time: confirm without it)"
    g, of = graphs.count()
    if g == 0:
        return said + caveat, EAGER_ADVICE
    if g == of:
        extra = graphs.outside_per_replay()
        who = "every instance" if of == graphs.work.shape[0] else "every instance with GPU work"
        besides = (
            f" (and {extra:.3g} GPU event(s) per instance launched outside it)" if extra else ""
        )
        return (
            f"{said}, yet {who} replays a CUDA graph ({graphs.named}): its graph's "
            f"kernels are already one launch per replay{besides}, so the CPU time is the "
            "host's work around the replay (the graph launch itself, scheduling, Python, "
            f"input copies, syncs){caveat}",
            "CUDA graphs are already in use: " + REPLAY_ADVICE,
        )
    return (
        f"{said}; {g} of {of} instances replay a CUDA graph ({graphs.named}), the other "
        f"{of - g} launch their kernels one by one{caveat}",
        f"for the {of - g} instances that launch kernels one by one: {EAGER_ADVICE}; for "
        f"the {g} graph replays: {REPLAY_ADVICE}",
    )


def host_late_advice(graphs: GraphReplays, late: np.ndarray, eager: str, others: str = "") -> str:
    """What ``gpu-idle-gaps`` suggests for the host-late gaps, those of the instances
    at positions ``late``: ``eager`` when none of them replays a graph, the replay
    advice when all do, each to its own instances (with counts) when some do; then
    ``others`` for the gaps that did not wait on the host, if any."""
    g, of = graphs.count(late)
    replay = f"already replay{{}} a CUDA graph ({graphs.named}), so {REPLAY_ADVICE}"
    if g == 0:
        parts = [("the host-late gaps", eager)]
    elif g == of:
        parts = [("the host-late gaps", "the region " + replay.format("s"))]
    else:
        parts = [
            (
                f"the host-late gaps of the {of - g} instances that launch kernels one by one",
                eager.replace("; ", ", and "),  # its own "; " would read as the next part's
            ),
            (f"those of the {g} instances that replay a graph", "they " + replay.format("")),
        ]
    said = (
        parts[0][1]
        if len(parts) == 1 and not others
        else "; ".join(f"for {who}: {what}" for who, what in parts)
    )
    return f"{said}; for the others, {others}" if others else said
