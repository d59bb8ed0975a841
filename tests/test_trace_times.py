"""Exact time: ``ts``/``dur`` become integer nanoseconds from their decimal text.

Nanosecond-resolution traces write epoch microseconds with three decimals
(``1712195495505828.904``).  A float64 holds those to about 0.25 us only, which
makes children seem to end after their parents and self CPU times wrong; every
test here fails when a float stands between the text and the nanoseconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from profiling.trace import load_trace
from profiling.trace.decode import decode_chunk
from profiling.trace.times import (
    LIMIT_NS,
    NOT_A_NUMBER,
    OK,
    OUT_OF_RANGE,
    float_times_ns,
    text_times_ns,
)
from tests.conftest import REAL_TRACES, needs_real_traces, real_trace_files

EPOCH_US = 1712195495505820  # a multiple of 4: floats near it step by 0.25 us


def exact_ns(text: str) -> int:
    """The reference: the decimal text in microseconds, times 1000, half to even."""
    return int((Decimal(text) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def table_json(path: Path) -> list[dict[str, Any]]:
    from tui.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["table", str(path), "--json", "--no-cache"]) == 0
    rows = json.loads(out.getvalue())
    assert isinstance(rows, list)
    return rows


# ---- a parent whose child ends with it, where floats say the child ends later ----

# (name, ts text, dur text): the parent [X+0.120, X+10.120] holds both children;
# in float64 the parent starts at X+0.0 and narrow at X+5.25, so narrow would end
# 0.24 us after its parent and not count as its child.
OPS = [
    ("aten::index", f"{EPOCH_US}.120", "10.000"),
    ("aten::slice", f"{EPOCH_US + 1}.004", "2.000"),
    ("aten::narrow", f"{EPOCH_US + 5}.130", "4.990"),
]


def nested_trace_text() -> bytes:
    events = [
        f'{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 7, "tid": 7, '
        f'"ts": {ts}, "dur": {dur}, "args": {{"External id": {k + 1}}}}}'
        for k, (name, ts, dur) in enumerate(OPS)
    ]
    return ('{"schemaVersion": 1, "traceEvents": [' + ", ".join(events) + "]}").encode()


def test_floats_would_misplace_the_child():
    """The case is a real one: through float64, narrow ends after its parent."""
    (_, p_ts, p_dur), _, (_, c_ts, c_dur) = OPS
    assert float(c_ts) + float(c_dur) > float(p_ts) + float(p_dur)
    assert exact_ns(c_ts) + exact_ns(c_dur) <= exact_ns(p_ts) + exact_ns(p_dur)


def test_epoch_nanoseconds_are_exact_columns_and_nesting(write_trace):
    trace = load_trace(write_trace(raw=nested_trace_text()))
    by_name = {trace.name(r): r for r in range(len(trace))}
    for name, ts, dur in OPS:
        row = by_name[name]
        assert int(trace.ts_ns[row]) == exact_ns(ts), name
        assert int(trace.dur_ns[row]) == exact_ns(dur), name
    depth = {name: int(trace.depth[row]) for name, row in by_name.items()}
    assert depth == {"aten::index": 0, "aten::slice": 1, "aten::narrow": 1}


def test_self_cpu_time_is_exact_in_table_json(write_trace):
    rows = {r["key"]: r for r in table_json(write_trace(raw=nested_trace_text()))}
    durs = {name: exact_ns(dur) for name, _, dur in OPS}
    parent_self_ns = durs["aten::index"] - durs["aten::slice"] - durs["aten::narrow"]
    assert rows["aten::index"]["self_cpu_time_total"] == parent_self_ns / 1000  # 3.01 us
    assert rows["aten::index"]["cpu_time_total"] == durs["aten::index"] / 1000
    assert rows["aten::narrow"]["self_cpu_time_total"] == durs["aten::narrow"] / 1000


def test_a_chunk_read_as_numbers_switches_to_text_when_numbers_cannot_be_exact():
    """The loader guesses the route from a sample; a chunk proves it wrong safely."""
    body = nested_trace_text()
    lo = body.index(b"[") + 1
    hi = body.rindex(b"]")
    chunk = decode_chunk(body, lo, hi, True, "t.json", exact=False)
    assert chunk.exact_times
    assert sorted(chunk.ts_ns.tolist()) == sorted(exact_ns(ts) for _, ts, _ in OPS)
    small = b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 2903534560548.505, "dur": 1}'
    relative = decode_chunk(small, 0, len(small), True, "t.json", exact=False)
    assert not relative.exact_times and relative.ts_ns.tolist() == [2903534560548505]


def test_leniently_read_events_keep_exact_times(write_trace):
    """A chunk with a NaN token is read event by event; its times stay exact."""
    text = nested_trace_text().replace(b'"pid": 7, "tid": 7, "ts": ' + f"{EPOCH_US + 1}".encode(),
                                       b'"pid": 7, "tid": 7, "v": NaN, "ts": '
                                       + f"{EPOCH_US + 1}".encode())
    assert b"NaN" in text
    trace = load_trace(write_trace(raw=text))
    assert any("NaN" in w for w in trace.warnings)
    assert sorted(trace.ts_ns.tolist()) == sorted(exact_ns(ts) for _, ts, _ in OPS)


# ---- the converters against a decimal reference ----


def random_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        whole = rng.choice([rng.randrange(10**16), rng.randrange(10**4), 0, rng.randrange(10**13),
                            rng.randrange(10**17), 9199999999999999, 8999999999999999])
        decimals = rng.choice([0, 1, 2, 3, 3, 3, 4, 6, 12])
        text = str(whole)
        if decimals:
            text += "." + "".join(rng.choice("0123456789") for _ in range(decimals))
        texts.append(("-" if rng.random() < 0.05 else "") + text)
    return texts + ["0.0005", "0.0015", "-0.0025", "1e3", "1.5E-3", "-0", "1E+400"]


def reference(text: str) -> tuple[int, int]:
    value = Decimal(text)
    ns = int((value * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))
    if -LIMIT_NS < ns < LIMIT_NS:
        return ns, OK
    return (LIMIT_NS if ns > 0 else -LIMIT_NS), OUT_OF_RANGE


def test_text_route_matches_decimal_arithmetic():
    texts = random_texts(1, 20_000)
    ns, state, strings = text_times_ns([msgspec.Raw(t.encode()) for t in texts])
    assert strings == 0
    got = list(zip(ns.tolist(), state.tolist(), strict=True))
    assert got == [reference(t) for t in texts]


def test_text_route_reads_strings_and_refuses_non_numbers():
    texts = [b'"141"', b'" 1.25 "', b'"x"', b"null", b"true", b"{}", b"[1]", b"", b"NaN",
             b'"inf"']
    ns, state, strings = text_times_ns(texts)
    assert ns[:2].tolist() == [141_000, 1_250] and state[:2].tolist() == [OK, OK]
    assert state[2:].tolist() == [NOT_A_NUMBER] * 8
    assert strings == 4


def test_number_route_is_exact_below_2_43_and_declines_above():
    rng = random.Random(2)
    exact = [rng.randrange(-(2**43) * 1000 + 1, 2**43 * 1000) for _ in range(20_000)]
    texts = [f"{'-' if x < 0 else ''}{abs(x) // 1000}.{abs(x) % 1000:03d}" for x in exact]
    ns, state = float_times_ns([float(t) for t in texts])  # type: ignore[misc]
    assert ns.tolist() == exact and not state.any()
    assert float_times_ns([1.5, float(f"{EPOCH_US}.904")]) is None
    ints, _ = float_times_ns([EPOCH_US, 2**53 + 1, 1.5])  # type: ignore[misc]
    assert ints.tolist() == [EPOCH_US * 1000, (2**53 + 1) * 1000, 1500]


# ---- real traces ----


def _entries(path: Path) -> list[Any]:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        import gzip

        data = gzip.decompress(data)
    doc = json.loads(data, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


@needs_real_traces
@pytest.mark.parametrize(
    "path", [p for p in real_trace_files() if "derived" not in p.parts], ids=lambda p: p.name[:40]
)
def test_real_trace_times_equal_their_decimal_text(path: Path):
    trace = load_trace(path, use_cache=False)
    entries = _entries(path)
    for row in range(len(trace)):
        event = entries[int(trace.source_index[row])]
        assert int(trace.ts_ns[row]) == exact_ns(str(event["ts"])), (row, event)
        if event.get("ph") == "X" and "dur" in event:
            assert int(trace.dur_ns[row]) == exact_ns(str(event["dur"])), (row, event)


SHIFT_US = 1_710_000_000_000_000  # to epoch microseconds, keeping every decimal


def shift_times(text: bytes, shift_us: int) -> bytes:
    """Every ``ts`` moved by whole microseconds, on the text (no float involved)."""
    return re.sub(rb'("ts": )(-?\d+)', lambda m: m.group(1) + str(int(m.group(2)) + shift_us)
                  .encode(), text)


@needs_real_traces
def test_a_real_nanosecond_trace_moved_to_epoch_time_keeps_every_number(tmp_path: Path):
    """nano-vllm's decode trace (three decimals, relative times) moved to epoch time:
    the columns move by exactly the shift and ``table --json`` does not change."""
    source = REAL_TRACES / "more" / "nanovllm-zhang-yuhui__decode_gpu_0.json"
    if not source.is_file():
        pytest.skip("the nano-vllm trace is not in ../shared/real_traces")
    original = tmp_path / "relative.json"
    moved = tmp_path / "epoch.json"
    original.write_bytes(source.read_bytes())
    moved.write_bytes(shift_times(source.read_bytes(), SHIFT_US))
    assert re.search(rb'"ts": 17\d{14}\.\d{3}', moved.read_bytes())
    a = load_trace(original, use_cache=False)
    b = load_trace(moved, use_cache=False)
    assert np.array_equal(b.ts_ns - a.ts_ns, np.full(len(a), SHIFT_US * 1000))
    assert np.array_equal(a.dur_ns, b.dur_ns) and np.array_equal(a.depth, b.depth)
    assert table_json(original) == table_json(moved)
