"""key_averages against torch's own EventList on random traces (needs torch, CPU is enough).

The oracles cover real runs; this covers shapes runs rarely make: deep
same-name chains (torch's _remove_dup_nodes), partial overlaps, zero-length
events, several threads, kernels attached at every level.  torch's own
``FunctionEvent``/``EventList`` classes build the expected table from the same
events, so nesting, merging and aggregation are checked against torch itself.
"""

from __future__ import annotations

import random

import pytest

from profiling.analysis.key_averages import key_averages
from profiling.analysis.nesting import nest
from profiling.trace import load_trace

torch = pytest.importorskip("torch")
from torch.autograd import DeviceType  # noqa: E402
from torch.autograd.profiler_util import EventList, FunctionEvent  # noqa: E402

NAMES = ["a", "a", "b", "c", "ProfilerStep#1", "ProfilerStep#2"]


def random_events(rng: random.Random) -> list[dict]:
    events: list[dict] = []
    ext = [0]
    corr = [1000]

    def block(tid: int, start: int, end: int, depth: int) -> None:
        t = start
        while t < end and len(events) < 300:
            dur = rng.randint(0, max(0, min(end - t, 400)))
            if rng.random() < 0.08:  # a partial overlap past the parent's end
                dur += rng.randint(1, 30)
            ext[0] += 1
            name = rng.choice(NAMES)
            events.append({"ph": "X", "cat": rng.choice(["cpu_op", "cpu_op", "user_annotation"]),
                           "name": name, "pid": 1, "tid": tid, "ts": t / 1000 * 997,
                           "dur": dur / 1000 * 997, "args": {"External id": ext[0]}})
            me = ext[0]
            launches = dur > 2 and rng.random() < 0.4
            if launches:
                # The kernel's launch: a zero-length runtime call at the op's start, on
                # its thread (the device time reaches the op only through that call).
                corr[0] += 1
                events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                               "pid": 1, "tid": tid, "ts": t / 1000 * 997, "dur": 0,
                               "args": {"External id": me, "correlation": corr[0]}})
                events.append({"ph": "X", "cat": "kernel", "name": f"k{rng.randint(0, 3)}",
                               "pid": 0, "tid": 7, "ts": 5000 + rng.randint(0, 5000),
                               "dur": rng.randint(1, 50) / 10,
                               "args": {"External id": me, "correlation": corr[0]}})
            if depth < 6 and dur > 2:
                block(tid, t + rng.randint(int(launches), 1), t + dur, depth + 1)
            t += dur + rng.randint(0, 20)

    for tid in (1, 2):
        block(tid, 0, 4000, 0)
    return events


def torch_table(events: list[dict]) -> dict:
    host, device = [], []
    for e in events:
        start = round(e["ts"] * 1000)
        end = start + round(e["dur"] * 1000)
        if e["cat"] == "kernel":
            device.append(FunctionEvent(
                id=e["args"]["correlation"], name=e["name"], thread=0, start_us=start / 1000,
                end_us=end / 1000, device_type=DeviceType.CUDA, use_device="cuda", stack=[]))
        elif e["cat"] == "cuda_runtime":  # torch's id for a call is its correlation
            host.append(FunctionEvent(
                id=e["args"]["correlation"], name=e["name"], thread=e["tid"],
                start_us=start / 1000, end_us=end / 1000, device_type=DeviceType.CPU,
                use_device="cuda", stack=[]))
        else:
            name = "ProfilerStep*" if e["name"].startswith("ProfilerStep#") else e["name"]
            host.append(FunctionEvent(
                id=e["args"]["External id"], name=name, thread=e["tid"], start_us=start / 1000,
                end_us=end / 1000, device_type=DeviceType.CPU, use_device="cuda",
                is_user_annotation=e["cat"] == "user_annotation", stack=[]))
    by_id = {fe.id: fe for fe, e in zip(host, [e for e in events if e["cat"] != "kernel"],
                                         strict=True) if e["cat"] != "cuda_runtime"}
    for e, fe in zip([e for e in events if e["cat"] == "kernel"], device, strict=True):
        owner = by_id.get(e["args"]["External id"])
        if owner is not None:
            owner.append_kernel(fe.name, 0, fe.time_range.end - fe.time_range.start)
    everything = EventList(sorted(host + device,
                                  key=lambda fe: [fe.time_range.start, -fe.time_range.end]),
                           use_device="cuda")
    everything._build_tree()
    out = {}
    for avg in everything.key_averages():
        out[avg.key, avg.device_type == DeviceType.CPU, bool(avg.is_user_annotation)] = avg
    return out


@pytest.mark.parametrize("seed", range(25))
def test_random_trace_matches_torch_event_list(seed, write_trace):
    events = random_events(random.Random(seed))
    ka = key_averages(load_trace(write_trace(events)))
    expected = torch_table(events)
    mine = {(r.key, r.device_type == "CPU", r.is_user_annotation): r for r in ka.rows}
    assert set(mine) == set(expected)
    for key, ref in expected.items():
        row = mine[key]
        assert row.count == ref.count, key
        for field in ("self_cpu_time_total", "cpu_time_total", "self_device_time_total",
                      "device_time_total"):
            assert getattr(row, field) == pytest.approx(getattr(ref, field), abs=1e-6), (key, field)


def brute_force_parents(start: list[int], end: list[int], group: list[int]) -> list[int]:
    """The latest earlier event of the same group that contains each event."""
    out = []
    for i in range(len(start)):
        parent = -1
        for j in range(i - 1, -1, -1):
            if group[j] == group[i] and start[i] < end[j] and end[i] <= end[j]:
                parent = j
                break
        out.append(parent)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_nest_is_the_latest_earlier_container(seed):
    import numpy as np

    rng = random.Random(seed)
    rows = sorted(
        ((rng.randint(0, 2), s, rng.randint(0, 60)) for s in (rng.randint(0, 300)
                                                             for _ in range(120))),
        key=lambda r: (r[0], r[1], -r[2]),
    )
    group = [r[0] for r in rows]
    start = [r[1] for r in rows]
    end = [r[1] + r[2] for r in rows]
    nesting = nest(np.array(start), np.array(end), np.array(group))
    assert nesting.parent.tolist() == brute_force_parents(start, end, group)
    for i in range(len(rows)):  # descendants are exactly i+1 .. stop-1
        desc = set()
        for j in range(i + 1, len(rows)):
            p = nesting.parent[j]
            while p > i:
                p = nesting.parent[p]
            if p == i:
                desc.add(j)
        assert desc == set(range(i + 1, int(nesting.stop[i])))
