"""``attn-tui slices``: what is in a time range, checked against a brute-force count.

The brute force reads the trace file with plain ``json`` (``Decimal`` times, so no
float rounding hides an off-by-one nanosecond), decides each thread's lane kind
from its categories, and counts in Python, event by event, what
``profiling.analysis.slices`` computes with numpy.  Both must agree exactly.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.analysis.slices import overlap_ns, parse_time_ns, union_ns
from profiling.trace import load_trace
from profiling.trace.model import Kind
from tests.conftest import SAMPLE_TRACES, needs_real_traces, real_trace_files
from tests.test_analysis_links import call, gpu, op
from tui.cli import main

GPU_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "gpu_user_annotation"}
CPU_CATS = {"cpu_op", "operator", "user_annotation", "cuda_runtime", "cuda_driver", "runtime",
            "driver", "hip_runtime", "mtia_runtime", "privateuse1_runtime", "xpu_runtime",
            "python_function", "python"}
COPY_CATS = {"gpu_memcpy": "memcpy", "memcpy": "memcpy", "gpu_memset": "memset",
             "memset": "memset"}
BUSY_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
NASTY = "[bold red]boom[/] \x1b[31m\"quoted\"\n\u4e2d"


# ---------- the brute force: plain Python over the file's events ----------

def read_events(path: Path) -> list[dict[str, Any]]:
    """Every complete event of the file: whole documents with ``json``; a file cut
    short or missing its closing ``]`` object by object until the first broken one."""
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    decoder = json.JSONDecoder(parse_float=Decimal)
    try:
        doc = decoder.decode(text)
        return doc["traceEvents"] if isinstance(doc, dict) else doc
    except json.JSONDecodeError:
        pass
    key = text.find('"traceEvents"')
    events: list[dict[str, Any]] = []
    pos = text.index("[", max(key, 0)) + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            event, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return events
        events.append(event)


def ns(value: Any) -> int:
    return int((Decimal(value) * 1000).to_integral_value())


def norm_id(value: Any) -> Any:
    return int(value) if isinstance(value, str) and value.isascii() and value.isdigit() else value


def brute_force(events: list[dict[str, Any]], lo: int | None, hi: int | None) -> dict[str, Any]:
    """Per (lane kind, name): count, clipped total, min, max; GPU busy; copies."""
    kept = [e for e in events if isinstance(e, dict) and e.get("ph") not in (None, "M")
            and isinstance(e.get("ts"), (int, Decimal))]
    gpu_n: dict[Any, int] = defaultdict(int)
    cpu_n: dict[Any, int] = defaultdict(int)
    for e in kept:
        key = (norm_id(e.get("pid", 0)), norm_id(e.get("tid", 0)))
        cat = str(e.get("cat", "")).lower()
        if e["ph"] == "X":
            gpu_n[key] += cat in GPU_CATS
            cpu_n[key] += cat in CPU_CATS

    def lane_kind(e: dict[str, Any]) -> str:
        key = (norm_id(e.get("pid", 0)), norm_id(e.get("tid", 0)))
        if gpu_n[key] and gpu_n[key] >= cpu_n[key]:
            return "gpu"
        return "cpu" if cpu_n[key] else "other"

    origin = min(ns(e["ts"]) for e in kept)
    end = max(ns(e["ts"]) + ns(e.get("dur", 0) if e["ph"] == "X" else 0) for e in kept)
    lo = 0 if lo is None else lo
    hi = end - origin if hi is None else hi
    rows: dict[tuple[str, str], list[int]] = {}
    busy: list[tuple[int, int]] = []
    copies = {"memcpy": [0, 0], "memset": [0, 0]}
    for e in kept:
        if e["ph"] in ("s", "t", "f"):
            continue
        t0 = ns(e["ts"]) - origin
        t1 = t0 + (max(ns(e.get("dur", 0)), 0) if e["ph"] == "X" else 0)
        inside = (t0 < hi and t1 > lo) if t1 > t0 else lo <= t0 <= hi
        if not inside:
            continue
        part = max(min(t1, hi) - max(t0, lo), 0)
        r = rows.setdefault((lane_kind(e), e.get("name", "")), [0, 0, part, part])
        r[0] += 1
        r[1] += part
        r[2], r[3] = min(r[2], part), max(r[3], part)
        cat = str(e.get("cat", "")).lower()
        if e["ph"] == "X" and cat in BUSY_CATS:
            busy.append((max(t0, lo), min(t1, hi)))
        if e["ph"] == "X" and cat in COPY_CATS:
            copies[COPY_CATS[cat]][0] += 1
            copies[COPY_CATS[cat]][1] += part
    covered, reach = 0, None
    for a, b in sorted(busy):
        if reach is None or a > reach:
            covered += b - a
            reach = b
        elif b > reach:
            covered += b - reach
            reach = b
    return {"rows": rows, "busy": covered, "copies": copies, "lo": lo, "hi": hi}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def check(capsys: pytest.CaptureFixture[str], path: Path, lo: int | None, hi: int | None,
          lanes: str = "all") -> dict[str, Any]:
    """``slices --json`` over [lo, hi] (ns, from the trace start) equals the brute force."""
    argv = ["slices", str(path), "--json", "--no-cache", "--lanes", lanes]
    if lo is not None:
        argv += ["--from", f"{lo / 1000:.3f}us"]
    if hi is not None:
        argv += ["--to", f"{hi}ns"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    got = json.loads(out)
    want = brute_force(read_events(path), lo, hi)
    expected = {k: v for k, v in want["rows"].items() if lanes == "all" or k[0] == lanes}
    assert {(r["lane_kind"], r["name"]): [r["count"], r["total_us"], r["min_us"], r["max_us"]]
            for r in got["rows"]} == {
        k: [c, t / 1000.0, a / 1000.0, b / 1000.0] for k, (c, t, a, b) in expected.items()}
    assert got["events"] == sum(v[0] for v in expected.values())
    assert got["from_us"] == want["lo"] / 1000.0 and got["to_us"] == want["hi"] / 1000.0
    assert got["gpu_busy_us"] == want["busy"] / 1000.0
    assert [got["memcpy"]["count"], got["memcpy"]["total_us"] * 1000] == pytest.approx(
        want["copies"]["memcpy"])
    assert [got["memset"]["count"], got["memset"]["total_us"] * 1000] == pytest.approx(
        want["copies"]["memset"])
    for r in got["rows"]:
        assert r["avg_us"] == pytest.approx(r["total_us"] / r["count"])
        assert r["share"] == pytest.approx(r["total_us"] / got["range_us"])
    return got


def span_of(path: Path) -> int:
    return brute_force(read_events(path), 0, None)["hi"]


# ---------- samples and real traces ----------

SAMPLES = sorted(SAMPLE_TRACES.glob("*.json.gz"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name.split(".")[0])
def test_samples_match_the_brute_force_on_several_ranges(capsys, path: Path):
    span = span_of(path)
    whole = check(capsys, path, None, None)
    assert whole["rows"] and whole["to_us"] == span / 1000.0
    check(capsys, path, span // 4, span * 3 // 5)
    check(capsys, path, span // 3 + 7, span // 3 + 40_000, lanes="gpu")  # ~40 µs: clips a lot
    check(capsys, path, span // 2, None, lanes="cpu")


def test_one_attn_fwd_instance_holds_one_memcpy_on_the_naive_sample(capsys):
    path = SAMPLE_TRACES / "naive.json.gz"
    events = read_events(path)
    origin = min(ns(e["ts"]) for e in events if e.get("ph") != "M")
    fwd = next(e for e in events
               if e.get("name") == "attn_fwd" and e.get("cat") == "gpu_user_annotation")
    lo = ns(fwd["ts"]) - origin
    got = check(capsys, path, lo, lo + ns(fwd["dur"]), lanes="gpu")
    memcpy = [r for r in got["rows"] if r["name"].startswith("Memcpy DtoD")]
    assert [r["count"] for r in memcpy] == [1] and got["memcpy"]["count"] == 1


@needs_real_traces
@pytest.mark.parametrize("path", real_trace_files(), ids=lambda p: p.name[:40])
def test_real_traces_match_the_brute_force(capsys, path: Path):
    span = span_of(path)
    check(capsys, path, None, None)
    check(capsys, path, span // 5, span // 2)


# ---------- units, errors, names ----------

@pytest.mark.parametrize("text,want", [
    ("12.5us", 12_500), ("1.2ms", 1_200_000), ("3s", 3_000_000_000), ("500ns", 500),
    ("7", 7_000), ("0.0015ms", 1_500), ("2 µs", 2_000), ("2μs", 2_000), ("1.5MS", 1_500_000),
    (".25us", 250), ("1e3us", 1_000_000),
])
def test_times_take_units_and_a_bare_number_is_microseconds(text: str, want: int):
    assert parse_time_ns(text) == want


@pytest.mark.parametrize("text", ["3xs", "", "-1us", "nan", "1..2us", "ms", "1 2us"])
def test_unreadable_times_are_refused(text: str):
    with pytest.raises(ValueError, match="as a time"):
        parse_time_ns(text)


@pytest.mark.parametrize("argv,words", [
    (["--from", "3xs"], "cannot read '3xs' as a time"),
    (["--from", "3ms", "--to", "1ms"], "--from 3 ms is not before --to 1 ms"),
    (["--from", "2us", "--to", "2000ns"], "is not before"),
    (["--from", "10s"], "is not before --to"),  # --to left out: the trace's end
])
def test_bad_ranges_give_one_line_and_status_2(capsys, argv: list[str], words: str):
    code, out, err = run(capsys, "slices", str(SAMPLE_TRACES / "naive.json.gz"), *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_names_are_data_in_the_table_and_the_json(capsys, write_trace):
    path = write_trace([
        op(NASTY, 0, 100, ext=1),
        call("cudaLaunchKernel", 10, 5, corr=40, ext=1),
        gpu(NASTY + " kernel", 50, 20, corr=40, ext=1),
    ])
    code, out, _ = run(capsys, "slices", str(path), "--from", "20", "--to", "60us")
    assert code == 0
    assert "[bold red]boom[/]" in out and "\x1b" not in out  # literal text, escape shown escaped
    code, out, _ = run(capsys, "slices", str(path), "--json", "--lanes", "gpu")
    rows = json.loads(out)["rows"]
    assert [(r["name"], r["count"], r["total_us"]) for r in rows] == [(NASTY + " kernel", 1, 20.0)]


def test_the_table_lists_the_longest_names(capsys, write_trace, monkeypatch):
    from tui.commands import slices as slices_command

    path = write_trace([op(f"op{i}", 10 * i, i + 1) for i in range(6)])  # op5 the longest
    monkeypatch.setattr(slices_command, "TABLE_ROWS", 2)
    code, out, _ = run(capsys, "slices", str(path))
    assert code == 0 and "op5" in out and "op4" in out and "op3" not in out
    assert "4 more names with 10 µs in all (the 2 longest shown" in out
    code, out, _ = run(capsys, "slices", str(path), "--json")
    assert len(json.loads(out)["rows"]) == 6


def test_overlapping_streams_count_once_in_gpu_busy(capsys, write_trace):
    path = write_trace([
        op("outer", 0, 100, ext=1),
        gpu("a", 10, 40, stream=7), gpu("b", 30, 40, stream=8),  # 10..70 covered: 60 µs
        gpu("Memcpy DtoD (Device -> Device)", 80, 10, cat="gpu_memcpy", stream=7),
    ])
    code, out, _ = run(capsys, "slices", str(path), "--json", "--from", "20us", "--to", "85us")
    got = json.loads(out)
    assert code == 0 and got["range_us"] == 65.0
    assert got["gpu_busy_us"] == 55.0 and got["memcpy"] == {"count": 1, "total_us": 5.0}
    assert got["gpu_busy_pct"] == pytest.approx(100 * 55 / 65)


def test_union_of_intervals_against_a_sweep():
    rng = np.random.default_rng(7)
    for _ in range(50):
        starts = rng.integers(0, 1000, 30)
        ends = starts + rng.integers(0, 100, 30)
        covered = np.zeros(1100, dtype=bool)
        for a, b in zip(starts, ends, strict=True):
            covered[a:b] = True
        assert union_ns(starts, ends) == int(covered.sum())


@pytest.mark.parametrize("path", [SAMPLE_TRACES / "sdpa_math.json.gz",
                                  *[p for p in real_trace_files() if "resnet50" in p.name]],
                         ids=lambda p: p.name[:30])
def test_lane_bounded_search_finds_what_a_full_scan_finds(path: Path):
    """``overlap_ns`` looks only between each lane's bounds; on many small and large
    ranges it must find exactly the rows a scan of every event finds."""
    trace = load_trace(path, use_cache=False)
    ts, end = trace.ts_ns, trace.ts_ns + trace.dur_ns
    rng = np.random.default_rng(3)
    span = int(end.max() - ts.min())
    for _ in range(40):
        lo = trace.start_ns + int(rng.integers(0, span))
        hi = lo + int(rng.choice([1, 1_000, 50_000, span // 10, span]))
        rows, start, stop = overlap_ns(trace, lo, hi)
        zero = trace.dur_ns == 0
        want = np.where(zero, (ts >= lo) & (ts <= hi), (ts < hi) & (end > lo))
        want &= trace.kind != Kind.FLOW
        assert rows.tolist() == np.flatnonzero(want).tolist()
        assert (start == np.maximum(ts[rows], lo)).all()
        assert (stop == np.minimum(end[rows], hi)).all()


def test_ties_read_the_same_whatever_the_file_order(capsys, write_trace):
    """Names with equal totals are listed by name, not by where the file first has
    them; a name with two kinds reads as the same one either way."""
    events = [gpu("zeta", 0, 10), gpu("alpha", 20, 10), gpu("mid", 40, 10),
              op("zeta", 0, 10), op("beta", 20, 5), op("beta", 30, 5),
              op("mixed", 50, 10), op("mixed", 70, 10, cat="user_annotation")]
    outs = []
    for k, order in enumerate((events, events[::-1], events[3:] + events[:3])):
        path = write_trace(order, name=f"t{k}.json")
        code, out, _ = run(capsys, "slices", str(path), "--json")
        assert code == 0
        outs.append(json.loads(out)["rows"])
    assert outs[0] == outs[1] == outs[2]
    gpu_names = [r["name"] for r in outs[0] if r["lane_kind"] == "gpu"]
    assert gpu_names == ["alpha", "mid", "zeta"]
