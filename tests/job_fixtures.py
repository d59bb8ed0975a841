"""Synthetic rank traces for job tests: steps, launches and GPU events placed by hand.

Every rank numbers its correlation ids from 1, as real ranks do, so ids collide
across ranks on purpose (a merged job must never link across ranks).  Times are
whole microseconds on the rank's own clock; ``base_ns`` is written as
``baseTimeNanoseconds`` when given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Gpu:
    name: str
    start: int  # µs, rank clock
    dur: int
    stream: int = 7
    cat: str = "kernel"  # kernel | gpu_memcpy | gpu_memset


@dataclass
class Step:
    start: int  # CPU start of ProfilerStep#N (µs)
    end: int
    gpu: list[Gpu] = field(default_factory=list)
    region: tuple[str, int, int] | None = None  # (name, start, end) of an annotation


def rank_doc(rank: int | None, world: int | None, steps: list[Step], *,
             base_ns: int | None = None, first_step: int = 1,
             backend: str = "nccl") -> dict[str, Any]:
    """A Kineto-like document: host pid 100+rank (thread 1), GPU pid = rank."""
    pid, dev = 100 + (rank or 0), rank or 0
    ev: list[dict[str, Any]] = []
    corr = 0
    for n, step in enumerate(steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{first_step + n}",
                   "pid": pid, "tid": 1, "ts": step.start, "dur": step.end - step.start})
        if step.region:
            name, lo, hi = step.region
            ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": pid, "tid": 1,
                       "ts": lo, "dur": hi - lo})
        for j, g in enumerate(step.gpu):
            corr += 1
            cpu_t = step.start + 10 + j
            if step.region and g.name.startswith("attn"):
                cpu_t = step.region[1] + 1 + j
            api = "cudaMemcpyAsync" if g.cat == "gpu_memcpy" else "cudaLaunchKernel"
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": pid, "tid": 1,
                       "ts": cpu_t, "dur": 1, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": g.cat, "name": g.name, "pid": dev, "tid": g.stream,
                       "ts": g.start, "dur": g.dur,
                       "args": {"correlation": corr, "device": dev, "stream": g.stream}})
    ev.append({"ph": "M", "name": "process_labels", "pid": dev, "args": {"labels": f"GPU {dev}"}})
    doc: dict[str, Any] = {"schemaVersion": 1, "traceEvents": ev}
    if rank is not None:
        doc["distributedInfo"] = {"backend": backend, "rank": rank, "world_size": world}
    if base_ns is not None:
        doc["baseTimeNanoseconds"] = base_ns
    return doc


def write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def straggler_job(folder: Path, slow: int = 2, ranks: int = 4, steps: int = 3) -> list[str]:
    """``ranks`` ranks, ``steps`` steps each: compute then an all-reduce.  Rank ``slow``
    computes 600 µs where the others compute 400, so they wait in the all-reduce."""
    paths = []
    for r in range(ranks):
        items = []
        for s in range(steps):
            t0 = 1000 + s * 2000
            work = 600 if r == slow else 400
            arrive = t0 + work
            ready = t0 + 600  # when the slowest rank arrives
            items.append(Step(t0, t0 + 1800, [
                Gpu("attn_kernel", t0 + 10, work - 10),
                Gpu("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", arrive,
                    ready - arrive + 100, stream=20),
            ], region=("attn_fwd", t0 + 1, t0 + 5)))
        paths.append(write(folder / f"job.rank{r}.json", rank_doc(r, ranks, items)))
    return paths
