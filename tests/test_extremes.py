"""Valid traces at the edges: huge names, deep nesting, a million events in one lane,
zero-length and simultaneous events, events out of order, string ids, and traces
with no CPU side, no GPU side or nothing but metadata.

Each must load into the *right* model (depths, counts, links), not merely load,
and go through the headless commands (exit 0 with valid JSON; ``kernels`` may
exit 2 with one line when the trace has no ``attn_fwd`` region).
"""

from __future__ import annotations

import cProfile
import json
import pstats
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.trace import Kind, LaneKind, Trace, load_trace
from tests.fixtures.cli_run import assert_cli_ok_or_one_line, cli, cli_in_process

LONG = 10_000


def write(path: Path, events: list[dict[str, Any]], **top: Any) -> Path:
    path.write_text(json.dumps({"traceEvents": events, **top}))
    return path


def x(name: str, ts: float, dur: float, *, pid: Any = 1, tid: Any = 1, cat: str = "cpu_op",
      **args: Any) -> dict[str, Any]:
    event = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        event["args"] = {k.replace("_", " "): v for k, v in args.items()}
    return event


def kernel(name: str, ts: float, dur: float, corr: int, stream: int = 7) -> dict[str, Any]:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"correlation": corr, "stream": stream}}


def launch(ts: float, corr: int, *, pid: Any = 1, tid: Any = 1) -> dict[str, Any]:
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
            "tid": tid, "ts": ts, "dur": 1.0, "args": {"correlation": corr}}


def rows(trace: Trace, name: str) -> list[int]:
    index = trace.string_ids(name)
    return [] if index is None else np.flatnonzero(trace.name_id == index).tolist()


def commands(path: Path, *extra: tuple[str, ...]) -> dict[tuple[str, ...], Any]:
    """stats/table/kernels/findings --json and stats as text: 0 with JSON, or 2 in one line
    (``stats --json`` in a subprocess, the others through ``tui.cli.main`` here)."""
    out: dict[tuple[str, ...], Any] = {}
    for argv in (("stats", "--json"), ("table", "--json"), ("kernels", "--json"),
                 ("findings", "--json"), ("stats",), ("table",), *extra):
        run = cli if argv == ("stats", "--json") else cli_in_process
        result = run(argv[0], str(path), *argv[1:], "--no-cache")
        out[argv] = assert_cli_ok_or_one_line(result, path, "--json" in argv)
        if argv[0] != "kernels":
            assert result.returncode == 0, (argv, result.stderr)
    return out


# ---- names of 10,000 characters ----


def test_names_of_ten_thousand_characters(tmp_path: Path):
    op, kname, proc, thread = ("o" * LONG, "k" * (LONG - 1) + "K", "p" * LONG, "t" * LONG)
    key, value = "a" * LONG, "v" * LONG
    path = write(tmp_path / "long.json", [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": proc}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": thread}},
        x("attn_fwd", 0, 100, cat="user_annotation"),
        {**x(op, 10, 50), "args": {key: value, "External id": 3}},
        launch(20, 9),
        kernel(kname, 60, 5, 9),
    ])
    trace = load_trace(path)
    (row,) = rows(trace, op)
    assert trace.name(row) == op and trace.args(row)[key] == value
    (k,) = rows(trace, kname)
    assert len(trace.name(k)) == LONG and trace.kind[k] == Kind.KERNEL
    cpu = next(lane for lane in trace.lanes if lane.kind == LaneKind.CPU)
    assert thread in cpu.label and proc in trace.groups[cpu.group].label

    out = commands(tmp_path / "long.json", ("kernels",))
    assert {r["key"] for r in out[("table", "--json")]} >= {op, kname}
    (instance,) = out[("kernels", "--json")]
    assert instance["kernels"][0]["name"] == kname and instance["kernels"][0]["launched_by"] == op
    assert any(lane["label"].startswith(thread) for lane in out[("stats", "--json")]["lanes"])
    for argv in (("stats",), ("table",), ("kernels",)):  # Rich cuts names to their column
        assert max(len(line) for line in out[argv].splitlines()) < 1000, argv


# ---- 10,000 levels of nesting ----


def test_ten_thousand_levels_of_nesting(tmp_path: Path):
    n = LONG
    events = [x("attn_fwd", 0, 4 * n, cat="user_annotation")]
    events += [x(f"level{i % 7}", 1 + i, 4 * n - 2 - 2 * i) for i in range(n)]
    events += [launch(n + 5, 5), kernel("k", n + 10, 3, 5)]
    random.Random(3).shuffle(events)  # the file order does not matter
    path = write(tmp_path / "deep.json", events)
    trace = load_trace(path)
    assert len(trace) == n + 3
    depth = {trace.name(r): int(trace.depth[r]) for r in range(len(trace))}
    assert depth["attn_fwd"] == 0 and depth["cudaLaunchKernel"] == n + 1
    innermost = max(rows(trace, f"level{(n - 1) % 7}"), key=lambda r: int(trace.ts_ns[r]))
    assert int(trace.depth[innermost]) == n
    lane = trace.lanes[int(trace.lane[innermost])]
    assert lane.max_depth == n + 1 and lane.events == n + 2

    out = commands(path)
    table = {r["key"]: r for r in out[("table", "--json")]}
    assert sum(table[f"level{k}"]["count"] for k in range(7)) == n
    assert table["attn_fwd"]["cpu_time_total"] == pytest.approx(4 * n)
    self_total = sum(r["self_cpu_time_total"] for r in table.values() if r["device_type"] == "CPU")
    assert self_total == pytest.approx(4 * n)  # self times add up to the outermost range
    (instance,) = out[("kernels", "--json")]
    assert [k["name"] for k in instance["kernels"]] == ["k"]


# ---- a million events in one lane ----


def write_one_lane(path: Path, parents: int) -> None:
    """``parents`` ops of 90 us, each holding nine of 8 us: ten events per parent."""
    with path.open("w") as f:
        f.write('{"traceEvents": [\n{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, '
                '"args": {"name": "main"}}')
        for b in range(parents):
            base = b * 100
            f.write(f',\n{{"ph":"X","cat":"cpu_op","name":"parent","pid":1,"tid":1,'
                    f'"ts":{base},"dur":90,"args":{{"External id":{b}}}}}')
            f.write("".join(
                f',\n{{"ph":"X","cat":"cpu_op","name":"op{j}","pid":1,"tid":1,'
                f'"ts":{base + 1 + 10 * j},"dur":8}}' for j in range(9)))
        f.write("\n]}\n")


def test_a_million_events_in_one_lane(tmp_path: Path):
    path = tmp_path / "million.json"
    write_one_lane(path, 100_000)
    # No wall-clock bound (the time, 1 M against 100 k events, is in bench/bench_extremes.py):
    # the loader's Python work is counted instead, one process so every call is seen.
    # Decoding is per chunk in C, so Python calls stay far below one per 100 events; a
    # per-event Python step (the usual way a load turns slow or quadratic) breaks this.
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        trace = load_trace(path, use_cache=False, workers=1)
    finally:
        profiler.disable()
    calls = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
    assert calls < 1_000_000 // 100, calls
    assert len(trace) == 1_000_000 and len(trace.lanes) == 1
    (lane,) = trace.lanes
    assert lane.events == 1_000_000 and lane.max_depth == 1 and lane.label.startswith("main")
    parent = trace.string_ids("parent")
    is_parent = trace.name_id == parent
    assert int(is_parent.sum()) == 100_000
    assert not trace.depth[is_parent].any() and (trace.depth[~is_parent] == 1).all()
    assert np.all(np.diff(trace.ts_ns) >= 0)

    result = cli("table", str(path), "--json", "--no-cache", timeout=300)
    table = {r["key"]: r for r in assert_cli_ok_or_one_line(result, path, True)}
    assert table["parent"]["count"] == 100_000
    assert table["parent"]["cpu_time_total"] == pytest.approx(100_000 * 90)
    assert table["parent"]["self_cpu_time_total"] == pytest.approx(100_000 * 18)
    assert table["op4"]["count"] == 100_000


# ---- zero-length, simultaneous and out-of-order events ----


def test_zero_length_events(tmp_path: Path):
    path = write(tmp_path / "zero.json", [
        x("attn_fwd", 0, 10, cat="user_annotation"),
        x("at start", 0, 0), x("inside", 5, 0), x("at end", 10, 0), x("after", 12, 0),
        launch(6, 1), kernel("empty kernel", 20, 0, 1),
        {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 5, "s": "t"},
    ])
    trace = load_trace(path)
    depth = {trace.name(r): int(trace.depth[r]) for r in range(len(trace))}
    assert depth == {"attn_fwd": 0, "at start": 1, "inside": 1, "at end": 0, "after": 0,
                     "cudaLaunchKernel": 1, "empty kernel": 0, "mark": 1}
    (k,) = rows(trace, "empty kernel")
    assert trace.dur_ns[k] == 0 and trace.kind[k] == Kind.KERNEL
    assert trace.warnings == []
    out = commands(path)
    (instance,) = out[("kernels", "--json")]
    assert instance["kernels"][0]["name"] == "empty kernel"
    assert instance["kernels"][0]["dur_us"] == 0


def test_identical_timestamps_are_all_kept(tmp_path: Path):
    events = [x("attn_fwd", 0, 100, cat="user_annotation")]
    # Alternating names: torch's key_averages folds a same-name child into its parent,
    # and identical ranges nest one inside the other.
    events += [x("same" if i % 2 else "twin op", 10, 5) for i in range(100)]
    events += [launch(20, i) for i in range(100)]
    events += [kernel("twin", 50, 5, i) for i in range(100)]
    path = write(tmp_path / "same.json", events)
    trace = load_trace(path)
    assert len(rows(trace, "same")) == 50 and len(rows(trace, "twin")) == 100
    assert len(trace) == 301
    out = commands(path)
    table = {(r["key"], r["device_type"]): r for r in out[("table", "--json")]}
    assert table[("same", "CPU")]["count"] == table[("twin op", "CPU")]["count"] == 50
    assert table[("twin", "CUDA")]["count"] == 100
    assert table[("twin", "CUDA")]["self_device_time_total"] == pytest.approx(500)
    (instance,) = out[("kernels", "--json")]
    assert len(instance["kernels"]) == 100


def _model(trace: Trace) -> list[tuple[Any, ...]]:
    return sorted(
        (trace.lanes[int(trace.lane[r])].label, int(trace.ts_ns[r]), int(trace.dur_ns[r]),
         trace.name(r), int(trace.depth[r]), int(trace.kind[r]), int(trace.correlation[r]))
        for r in range(len(trace))
    )


def test_out_of_order_events_give_the_same_model(tmp_path: Path):
    events = [x("attn_fwd", 0, 400, cat="user_annotation")]
    for i in range(50):
        events += [x("op", 5 + 7 * i, 6), launch(6 + 7 * i, i), kernel(f"k{i % 3}", 400 + i, 1, i)]
    ordered = write(tmp_path / "ordered.json", events)
    shuffled_events = list(events)
    random.Random(11).shuffle(shuffled_events)
    shuffled = write(tmp_path / "shuffled.json", shuffled_events)
    a, b = load_trace(ordered), load_trace(shuffled)
    assert _model(a) == _model(b)
    assert all(np.all(np.diff(b.ts_ns[b.lane_rows(i)]) >= 0) for i in range(len(b.lanes)))
    out_a, out_b = commands(ordered), commands(shuffled)
    for argv in (("table", "--json"), ("kernels", "--json")):
        assert out_a[argv] == out_b[argv]
    stats_a, stats_b = out_a[("stats", "--json")], out_b[("stats", "--json")]
    stats_a.pop("path"), stats_b.pop("path")
    assert stats_a == stats_b


# ---- ids and missing sides ----


def test_string_pids_and_tids(tmp_path: Path):
    path = write(tmp_path / "ids.json", [
        {"ph": "M", "name": "process_name", "pid": "host-a", "tid": 0,
         "args": {"name": "trainer"}},
        x("attn_fwd", 0, 50, pid="host-a", tid="main thread", cat="user_annotation"),
        launch(5, 1, pid="host-a", tid="main thread"),
        x("digits as string", 60, 5, pid="10", tid="11"),
        x("digits as int", 70, 5, pid=10, tid=11),
        {**kernel("kern", 20, 5, 1), "pid": "gpu0", "tid": "stream 7"},
    ])
    trace = load_trace(path)
    by_name = {trace.name(r): trace.lanes[int(trace.lane[r])] for r in range(len(trace))}
    assert by_name["attn_fwd"].pid == "host-a" and by_name["attn_fwd"].tid == "main thread"
    assert by_name["attn_fwd"].kind == LaneKind.CPU
    assert by_name["digits as string"] is by_name["digits as int"]
    assert by_name["digits as int"].pid == 10 and by_name["digits as int"].tid == 11
    gpu = by_name["kern"]
    assert gpu.pid == "gpu0" and gpu.kind == LaneKind.GPU and gpu.label == "stream 7"
    assert "trainer" in trace.groups[by_name["attn_fwd"].group].label
    out = commands(path)
    pids = {str(lane["pid"]) for lane in out[("stats", "--json")]["lanes"]}
    assert pids == {"host-a", "10", "gpu0"}
    (instance,) = out[("kernels", "--json")]
    assert instance["kernels"][0]["launched_by"] == "attn_fwd"


def test_no_cpu_events(tmp_path: Path):
    path = write(tmp_path / "gpu_only.json", [kernel(f"k{i}", 10 * i, 5, i) for i in range(20)])
    trace = load_trace(path)
    assert len(trace) == 20 and {lane.kind for lane in trace.lanes} == {LaneKind.GPU}
    out = commands(path)
    stats = out[("stats", "--json")]
    assert stats["gpu_events"] == 20 and stats["orphans"] == 20 and stats["regions"] == {}
    assert {r["device_type"] for r in out[("table", "--json")]} == {"CUDA"}
    assert out[("kernels", "--json")] == []  # no region of any kind: an empty list, exit 0


def test_no_gpu_events(tmp_path: Path):
    path = write(tmp_path / "cpu_only.json", [
        x("attn_fwd", 0, 100, cat="user_annotation"), x("aten::bmm", 10, 30),
        x("aten::softmax", 50, 20),
    ])
    trace = load_trace(path)
    assert {lane.kind for lane in trace.lanes} == {LaneKind.CPU}
    out = commands(path)
    stats = out[("stats", "--json")]
    assert stats["gpu_events"] == 0 and stats["regions"]["attn_fwd"]["instances"] == 1
    assert stats["regions"]["attn_fwd"]["kernels_per_instance"] == 0
    (instance,) = out[("kernels", "--json")]
    assert instance["kernels"] == []


def test_nothing_but_metadata(tmp_path: Path):
    path = write(tmp_path / "meta.json", [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
    ], schemaVersion=1, deviceProperties=[{"id": 0, "name": "H200"}])
    trace = load_trace(path)
    assert len(trace) == 0 and trace.n_entries == 3 and trace.lanes == []
    assert trace.metadata["deviceProperties"] == [{"id": 0, "name": "H200"}]
    out = commands(path)
    stats = out[("stats", "--json")]
    assert stats["events"] == 3 and stats["rows"] == 0 and stats["lanes"] == []
    assert out[("table", "--json")] == []
