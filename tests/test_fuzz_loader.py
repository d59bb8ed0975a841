"""Property-based tests: random damage to real and synthetic traces never crashes anything.

Seeds: a synthetic trace built here (every phase and kind the loader knows), two
traces from ``sample_traces/`` (committed, so CI without ``../shared`` runs them
all) and the small real traces from ``../shared/real_traces`` when present.
Mutations: byte flips, truncations, deletions, duplications, inserted tokens
(``NaN``, brackets, quotes, NUL, bytes that are not UTF-8...), type swaps inside
events, and gzip around any of it.

What must hold for every example: ``load_trace`` returns a ``Trace`` or raises
``TraceError`` (nothing else), with a tracemalloc peak under a small multiple of
the input (a count of bytes, the same on any machine; a hang is caught by
pytest-timeout, and load times are measured in bench/bench_extremes.py); and what
loads goes through the commands (stats, table, kernels, findings, compare) with exit
status 0 or 2, never a crash.

Examples are derandomized (same examples on every run, no example database), so
CI is repeatable; sizes keep the whole file near a minute on two cores.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import random
import shutil
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiling.errors import TraceError
from profiling.trace import Trace, cache, load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files

MAX_SEED_BYTES = 200_000
MEMORY_FACTOR = 40  # tracemalloc peak <= MEMORY_FACTOR * input + MEMORY_SLACK
MEMORY_SLACK = 2 << 20

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ---- seeds ----


def synthetic_seed(steps: int = 3, seed: int = 0) -> bytes:
    """A small trace with every phase and kind the loader handles."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": "main"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 10, "tid": 11,
         "args": {"sort_index": 1}},
    ]
    t, corr, ext = 1000.0, 1, 1
    for step in range(steps):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 10, "tid": 11, "ts": t, "dur": 400.0})
        events.append({"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 10,
                       "tid": 11, "ts": t + 5, "dur": 300.0, "args": {"External id": ext}})
        gpu_t = t + 50
        for k, op in enumerate(("aten::bmm", "aten::div", "aten::softmax", "aten::copy_")):
            ts = t + 10 + 60 * k
            events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 10, "tid": 11,
                           "ts": ts, "dur": 50.0,
                           "args": {"External id": ext + k + 1, "Input Dims": [[8, 16], [16]],
                                    "Input type": ["c10::BFloat16", ""]}})
            launch = "cudaMemcpyAsync" if op == "aten::copy_" else "cudaLaunchKernel"
            events.append({"ph": "X", "cat": "cuda_runtime", "name": launch, "pid": 10,
                           "tid": "11", "ts": ts + 5, "dur": 4.0,
                           "args": {"correlation": corr, "External id": ext + k + 1}})
            cat = "gpu_memcpy" if op == "aten::copy_" else "kernel"
            name = "Memcpy DtoD (Device -> Device)" if cat == "gpu_memcpy" else f"kernel_{op[6:]}"
            dur = float(rng.randint(5, 40))
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 0,
                           "tid": 7 if k % 2 else "stream 8", "ts": gpu_t, "dur": dur,
                           "args": {"correlation": corr, "stream": 7 if k % 2 else 8,
                                    "External id": ext + k + 1, "grid": [1, 2, 3]}})
            events.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 10,
                           "tid": 11, "ts": ts + 5})
            events.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0,
                           "tid": 7, "ts": gpu_t, "bp": "e"})
            gpu_t += dur + 1
            corr += 1
        events.append({"ph": "X", "cat": "gpu_user_annotation", "name": "attn_fwd", "pid": 0,
                       "tid": 7, "ts": t + 50, "dur": gpu_t - t - 50})
        events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 10,
                       "tid": 11, "ts": t + 20, "s": "t", "args": {"Bytes": 1024}})
        events.append({"ph": "C", "name": "counter", "pid": 10, "tid": 11, "ts": t + 30,
                       "args": {"v": step}})
        events.append({"ph": "B", "cat": "python_function", "name": "fwd.py(12): forward",
                       "pid": 10, "tid": 12, "ts": t})
        events.append({"ph": "E", "pid": 10, "tid": 12, "ts": t + 350})
        t += 500
        ext += 10
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Fake GPU"}],
           "traceEvents": events, "traceName": "synthetic"}
    return json.dumps(doc).encode()


def _text_of(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def seeds() -> dict[str, bytes]:
    out = {"synthetic": synthetic_seed()}
    for name in ("sdpa_flash.json.gz", "kernels.json.gz"):
        path = SAMPLE_TRACES / name
        if path.is_file():
            out[f"sample/{name}"] = _text_of(path)
    for path in real_trace_files():
        try:
            text = _text_of(path)
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        if len(text) <= MAX_SEED_BYTES:
            out[f"real/{path.name}"] = text
    return out


SEEDS = seeds()
SEED_NAMES = sorted(SEEDS)


def events_of(text: bytes) -> tuple[dict[str, Any], list[Any]] | None:
    try:
        value = json.loads(text)
    except ValueError:  # the derived, cut-short real traces
        return None
    if isinstance(value, list):
        return {}, value
    return value, value.get("traceEvents", [])


# ---- mutations ----

TOKENS = [b"NaN", b"-Infinity", b"1e999", b"-0", b"{", b"}", b"[", b"]", b",", b":", b'"',
          b"\\", b"\\u", b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"null", b"true",
          b"\x1b[31m", b"9" * 40, b'"ph": "B",', b'"ts": "x",', b"\n", b"\xef\xbb\xbf",
          b'{"ph": "E"}', b"[" * 2000]

position = st.integers(min_value=0, max_value=2**31)
byte_op = st.one_of(
    st.tuples(st.just("flip"), position, st.integers(1, 255)),
    st.tuples(st.just("truncate"), position),
    st.tuples(st.just("delete"), position, st.integers(1, 400)),
    st.tuples(st.just("duplicate"), position, st.integers(1, 400)),
    st.tuples(st.just("insert"), position, st.sampled_from(TOKENS)),
)


def mutate_bytes(data: bytes, ops: list[tuple[Any, ...]]) -> bytes:
    buf = bytearray(data)
    for op in ops:
        at = op[1] % (len(buf) + 1)
        if op[0] == "flip" and buf:
            buf[at % len(buf)] ^= op[2]
        elif op[0] == "truncate":
            del buf[at:]
        elif op[0] == "delete":
            del buf[at : at + op[2]]
        elif op[0] == "duplicate":
            buf[at:at] = buf[at : at + op[2]]
        elif op[0] == "insert":
            buf[at:at] = op[2]
    return bytes(buf)


WEIRD_VALUES = [None, True, False, 0, -1, 1.5, -1e308, 1e308, 2**53 + 1, 2**64 + 7, -(2**70),
                "", "x", "NaN", "-5", "0x1F", "\u00b2", "9" * 30, "\x1b]0;t\x07", [], [1, "a"],
                {}, {"a": {"b": [None]}}, "X", "M", "s"]
FIELDS = ["ph", "name", "cat", "pid", "tid", "ts", "dur", "id", "args", "bp", "s",
          "args.correlation", "args.External id", "args.stream", "args.name", "args.labels",
          "args.sort_index"]
swap = st.tuples(position, st.sampled_from(FIELDS),
                 st.one_of(st.sampled_from(WEIRD_VALUES), st.just("<drop>")))


def swap_types(text: bytes, swaps: list[tuple[int, str, Any]], bare: bool) -> bytes:
    parsed = events_of(text)
    if parsed is None or not parsed[1]:
        return text
    top, events = parsed
    events = list(events)
    for index, field, value in swaps:
        i = index % len(events)
        event = events[i]
        if not isinstance(event, dict):
            continue
        event = dict(event)
        if field.startswith("args."):
            args = event.get("args")
            args = dict(args) if isinstance(args, dict) else {}
            key = field[5:]
            if value == "<drop>":
                args.pop(key, None)
            else:
                args[key] = value
            event["args"] = args
        elif value == "<drop>":
            event.pop(field, None)
        else:
            event[field] = value
        events[i] = event
    if bare:
        return json.dumps(events).encode()
    return json.dumps({**top, "traceEvents": events}).encode()


# ---- the properties ----


def load_within_bounds(data: bytes, name: str = "t.json") -> Trace | None:
    """load_trace: a Trace or a TraceError, under the memory bound."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        tracemalloc.start()
        try:
            trace = load_trace(path, use_cache=False)
        except TraceError as exc:
            line = exc.line()
            assert "\n" not in line and str(path) in line, line
            trace = None
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert peak <= MEMORY_FACTOR * len(data) + MEMORY_SLACK, (peak, len(data))
        if trace is not None:
            exercise(trace)
        return trace


def exercise(trace: Trace) -> None:
    """Touch what consumers touch: names, lanes, args of a few rows."""
    assert len(trace.ts_ns) == len(trace.lane) == len(trace.depth)
    assert int(trace.lane_start[-1]) == len(trace) if len(trace.lanes) else True
    for row in range(0, len(trace), max(1, len(trace) // 20)):
        trace.name(row)
        assert isinstance(trace.args(row), dict)
    for lane in trace.lanes:
        assert isinstance(lane.label, str)


@settings(FUZZ, max_examples=300)
@given(seed=st.sampled_from(SEED_NAMES), ops=st.lists(byte_op, min_size=1, max_size=4),
       gz=st.sampled_from([False, False, False, True]))
def test_byte_mutations_load_or_raise_trace_error(seed: str, ops: list, gz: bool):
    data = mutate_bytes(SEEDS[seed], ops)
    if gz:
        data = gzip.compress(data, mtime=0)
    load_within_bounds(data)


@settings(FUZZ, max_examples=60)
@given(seed=st.sampled_from(SEED_NAMES), ops=st.lists(byte_op, min_size=1, max_size=2))
def test_damaged_gzip_loads_or_raises_trace_error(seed: str, ops: list):
    load_within_bounds(mutate_bytes(gzip.compress(SEEDS[seed], mtime=0), ops), "t.json.gz")


@settings(FUZZ, max_examples=200)
@given(seed=st.sampled_from(SEED_NAMES), swaps=st.lists(swap, min_size=1, max_size=8),
       bare=st.booleans(), then=st.lists(byte_op, max_size=1))
def test_type_swaps_load_or_raise_trace_error(seed: str, swaps: list, bare: bool, then: list):
    load_within_bounds(mutate_bytes(swap_types(SEEDS[seed], swaps, bare), then))


def run_cli(*argv: str) -> tuple[int, str, str]:
    from tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@settings(FUZZ, max_examples=60)
@given(seed=st.sampled_from(SEED_NAMES), swaps=st.lists(swap, max_size=6),
       ops=st.lists(byte_op, max_size=2))
def test_commands_never_crash_on_what_loads(seed: str, swaps: list, ops: list):
    data = mutate_bytes(swap_types(SEEDS[seed], swaps, False) if swaps else SEEDS[seed], ops)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_bytes(data)
        try:
            load_trace(path, use_cache=False)
        except TraceError:
            return
        for argv in (("stats", "--json"), ("table", "--json"), ("kernels", "--json"),
                     ("findings", "--json"), ("stats",), ("table",), ("findings",)):
            code, out, err = run_cli(argv[0], str(path), *argv[1:], "--no-cache")
            assert code in (0, 2), (argv, code, err)
            if argv[0] == "kernels" and code == 0 and err:
                # without --region, kernels names the regions it chose: one line
                assert err.count("\n") == 1 and "no --region given" in err, err
            else:
                assert (code == 0) == (err == "") or argv[0] == "findings", (argv, err)
            if code == 0 and "--json" in argv:
                json.loads(out)
        code, out, err = run_cli("compare", str(path), str(path), "--json", "--no-cache")
        assert code in (0, 2), ("compare", code, err)


@pytest.mark.parametrize("seed", SEED_NAMES)
def test_every_seed_loads(seed: str):
    """The unmutated seeds load (else the mutations above test little)."""
    trace = load_within_bounds(SEEDS[seed])
    assert trace is not None and len(trace) > 0


# ---- a damaged sidecar index is rebuilt, never trusted into a crash ----

INDEX_FILES = [f"{c}.npy" for c in cache.COLUMN_DTYPES] + ["meta.json"]
damage = st.one_of(
    st.tuples(st.just("flip"), st.lists(st.tuples(position, st.integers(1, 255)),
                                        min_size=1, max_size=5)),
    st.tuples(st.just("truncate"), position),
    st.tuples(st.just("swap"), st.sampled_from(INDEX_FILES)),
)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Trace]:
    folder = tmp_path_factory.mktemp("index")
    path = folder / "t.json"
    path.write_bytes(SEEDS["synthetic"])
    fresh = load_trace(path, use_cache=False)
    load_trace(path, min_cache_bytes=0)
    index = cache.cache_dirs(path)[0]  # in the user cache folder (ATTN_TUI_CACHE_DIR)
    pristine = folder / "pristine"
    shutil.copytree(index, pristine)
    return path, pristine, fresh


@settings(FUZZ, max_examples=80, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(INDEX_FILES), how=damage)
def test_a_damaged_index_is_rebuilt_or_harmless(indexed: tuple[Path, Path, Trace], name: str,
                                               how: tuple[Any, ...]):
    from profiling.analysis.stats import trace_stats

    path, pristine, fresh = indexed
    index = cache.cache_dirs(path)[0]
    shutil.rmtree(index, ignore_errors=True)
    shutil.copytree(pristine, index)
    target = index / name
    data = bytearray(target.read_bytes())
    if how[0] == "flip" and data:
        for at, bits in how[1]:
            data[at % len(data)] ^= bits
    elif how[0] == "truncate":
        del data[how[1] % (len(data) + 1):]
    elif how[0] == "swap":
        data = bytearray((index / how[1]).read_bytes())
    target.write_bytes(bytes(data))
    trace = load_trace(path, min_cache_bytes=0)
    if any("damaged cache" in w for w in trace.warnings):
        assert np.array_equal(trace.ts_ns, fresh.ts_ns)  # rebuilt from the file
        assert trace.strings == fresh.strings
    exercise(trace)
    trace_stats(trace)  # whatever was accepted is consistent
