"""A corpus of broken inputs, each with its expected outcome, through the loader and the CLI.

Every case either *loads* (what was repaired or skipped is named in the trace's
warnings) or raises one ``TraceError`` line that names the file.  The same cases
run through ``attn-tui stats/table/kernels`` in subprocesses: exit 0 with valid
JSON, or exit 2 with exactly one stderr line naming the path, never a traceback.
The input file is byte-identical and keeps its mtime afterwards.

docs/reliability.md tabulates these cases; keep the two in step.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from profiling.errors import TraceError
from profiling.trace import Trace, load_trace
from tests.conftest import REPO

# ---- a small valid trace with one attn_fwd region, to break in every way ----

META = [
    {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python3"}},
    {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": "main"}},
    {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
]
BODY = [
    {"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 10, "tid": 11,
     "ts": 100.0, "dur": 50.0, "args": {"External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 110.0,
     "dur": 20.0, "args": {"External id": 2, "Input Dims": [[2, 3], [3, 4]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 112.0, "dur": 3.0, "args": {"correlation": 77, "External id": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 11,
     "ts": 120.0, "dur": 3.0, "args": {"correlation": 78, "External id": 2}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130.0,
     "dur": 20.0, "args": {"correlation": 77, "External id": 2, "stream": 7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0,
     "tid": 7, "ts": 151.0, "dur": 2.0, "args": {"correlation": 78, "stream": 7}},
]
EVENTS = META + BODY


def doc(events: list[Any] | None = None, **top: Any) -> bytes:
    return json.dumps({"traceEvents": EVENTS if events is None else events, **top}).encode()


def array_doc(events: list[Any] | None = None) -> bytes:
    return json.dumps(EVENTS if events is None else events).encode()


def with_event(**fields: Any) -> list[Any]:
    """EVENTS plus one extra CPU op with ``fields`` overriding its defaults."""
    extra = {"ph": "X", "cat": "cpu_op", "name": "extra", "pid": 10, "tid": 11,
             "ts": 140.0, "dur": 1.0}
    extra.update(fields)
    return EVENTS + [{k: v for k, v in extra.items() if v is not _DROP}]


_DROP = object()


def replace_once(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) >= 1, old
    return data.replace(old, new, 1)


def _tokens(data: bytes, replacements: dict[bytes, bytes]) -> bytes:
    for old, new in replacements.items():
        data = replace_once(data, old, new)
    return data


def cut_inside_last_event(data: bytes) -> bytes:
    return data[: data.rindex(b'"name"') + 3]


def gzip_corrupt() -> bytes:
    packed = bytearray(gzip.compress(doc() * 1, mtime=0))
    for i in range(20, 40):  # inside the deflate stream, after the 10-byte header
        packed[i] ^= 0x5A
    return bytes(packed)


def deeply_nested() -> bytes:
    depth = 50_000
    return (b'{"traceEvents": [{"ph": "X", "name": "deep", "pid": 1, "tid": 1, "ts": 1, '
            b'"dur": 1, "args": {"x": ' + b"[" * depth + b"]" * depth + b"}}]}")


# ---- the corpus ----

LOADS, WARNS, ERROR = "loads", "loads with a warning", "clear error"


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # the row of docs/reliability.md it belongs to
    data: bytes
    outcome: str  # LOADS (no warning), WARNS (a warning containing ``expect``), ERROR
    expect: str = ""
    check: Callable[[Trace], None] | None = None


def _rows(trace: Trace, name: str) -> list[int]:
    return [i for i in range(len(trace)) if trace.name(i) == name]


def _check_args_not_object(trace: Trace) -> None:
    assert trace.args(_rows(trace, "list args")[0]) == {"args": [1, 2]}
    assert trace.args(_rows(trace, "string args")[0]) == {"args": "x"}


def _check_wrong_types(trace: Trace) -> None:
    (row,) = _rows(trace, "123")
    assert trace.ts_ns[row] == 141_000  # "141" read as a number
    assert len(_rows(trace, "gemm")) == 1  # the well-typed events are untouched


def _check_nan_tokens(trace: Trace) -> None:
    assert _rows(trace, "nan ts") == []  # no usable time: skipped
    (row,) = _rows(trace, "inf dur")
    assert trace.dur_ns[row] == 0
    (row,) = _rows(trace, "nan arg")
    assert str(trace.args(row)["v"]) == "nan"
    assert len(_rows(trace, "gemm")) == 1


def _check_big_ints(trace: Trace) -> None:
    (row,) = _rows(trace, "big")
    assert int(trace.correlation[row]) == 2**53 + 1  # exact, not rounded through a float
    assert trace.lanes[int(trace.lane[row])].pid == 2**53 + 1


def _check_huge_ints(trace: Trace) -> None:
    (row,) = _rows(trace, "huge")
    assert int(trace.external_id[row]) == -1  # does not fit int64: treated as absent
    assert str(trace.lanes[int(trace.lane[row])].pid) == str(2**64 + 1)


def _check_duplicate_keys(trace: Trace) -> None:
    assert _rows(trace, "second") and not _rows(trace, "first")  # last one wins, as in JSON


def _check_replacement_char(trace: Trace) -> None:
    assert any("\ufffd" in s for s in trace.strings)
    assert len(_rows(trace, "gemm")) == 1


def _check_cut(trace: Trace) -> None:
    assert len(_rows(trace, "attn_fwd")) == 1


def _check_empty(trace: Trace) -> None:
    assert len(trace) == 0 and trace.lanes == []


_NOISE = bytes([0x80]) + random.Random(7).randbytes(4095)
_DUP_KEYS = replace_once(
    doc(with_event(name="NAME")), b'"name": "NAME"', b'"name": "first", "name": "second"'
)

CASES = [
    # nothing there
    Case("empty", "empty / blank", b"", ERROR, "file is empty"),
    Case("whitespace", "empty / blank", b" \n\t\r\n  ", ERROR, "only whitespace"),
    Case("bom_only", "empty / blank", b"\xef\xbb\xbf", ERROR, "byte-order mark"),
    Case("zero_filled", "empty / blank", b"\x00" * 4096, ERROR, "only zero bytes"),
    # not JSON at all
    Case("plain_text", "not JSON", b"hello, world\n", ERROR, "not JSON"),
    Case("binary_noise", "not JSON", _NOISE, ERROR, "not JSON"),
    Case("js_object_literal", "not JSON", b"{traceEvents: []}", ERROR, "not valid JSON"),
    Case("trailing_garbage", "not JSON", doc() + b" garbage", ERROR, "not valid JSON"),
    Case("two_documents", "not JSON", doc() + doc(), ERROR, "not valid JSON"),
    Case("raw_control_char_in_string", "not JSON",
         replace_once(doc(), b'"aten::mm"', b'"aten\x01mm"'), ERROR, "not valid JSON"),
    # JSON of the wrong shape, level by level
    Case("top_number", "wrong shape: top level", b"42", ERROR, "not a trace"),
    Case("top_string", "wrong shape: top level", b'"trace"', ERROR, "not a trace"),
    Case("top_null", "wrong shape: top level", b"null", ERROR, "not a trace"),
    Case("top_list_of_numbers", "wrong shape: top level", b"[1, 2, 3]", ERROR, "not a trace"),
    Case("no_traceEvents", "wrong shape: top level", b'{"events": []}', ERROR,
         "no 'traceEvents'"),
    Case("traceEvents_object", "wrong shape: traceEvents", b'{"traceEvents": {"a": 1}}',
         ERROR, "not a list"),
    Case("traceEvents_string", "wrong shape: traceEvents", b'{"traceEvents": "x"}', ERROR,
         "not a list"),
    Case("traceEvents_null", "wrong shape: traceEvents", b'{"traceEvents": null}', ERROR,
         "not a list"),
    Case("no_entry_is_an_object", "wrong shape: an event", b'{"traceEvents": [[1], [2], 3]}',
         ERROR, "not a trace"),
    Case("some_entries_not_objects", "wrong shape: an event",
         doc(EVENTS + [1, "x", [2], None, True]), WARNS, "not events"),
    Case("args_not_an_object", "wrong shape: args",
         doc(EVENTS + [
             {"ph": "X", "cat": "cpu_op", "name": "list args", "pid": 10, "tid": 11,
              "ts": 140.0, "dur": 1.0, "args": [1, 2]},
             {"ph": "X", "cat": "cpu_op", "name": "string args", "pid": 10, "tid": 11,
              "ts": 141.0, "dur": 1.0, "args": "x"},
         ]), WARNS, "unexpected JSON types", _check_args_not_object),
    Case("fields_of_wrong_types", "events of the wrong types",
         doc(with_event(name=123, ts="141", pid=10.0, tid=[11], cat={"c": 1}, dur=True)),
         WARNS, "unexpected JSON types", _check_wrong_types),
    # missing or unusable fields
    Case("missing_ts", "missing ts / ph", doc(with_event(ts=_DROP)), WARNS, "no usable 'ts'"),
    Case("missing_ph", "missing ts / ph", doc(with_event(ph=_DROP)), WARNS, "no 'ph'"),
    Case("negative_dur", "negative / NaN durations", doc(with_event(dur=-5.0)), WARNS,
         "negative or non-finite"),
    Case("nan_dur_string", "negative / NaN durations", doc(with_event(dur="NaN")), WARNS,
         "negative or non-finite"),
    Case("ts_beyond_int64_ns", "negative / NaN durations", doc(with_event(ts=1e300)), WARNS,
         "no usable 'ts'"),
    Case("unpaired_begin_end", "missing ts / ph",
         doc(EVENTS + [{"ph": "B", "name": "open", "pid": 10, "tid": 12, "ts": 1.0},
                       {"ph": "E", "name": "close", "pid": 10, "tid": 13, "ts": 2.0}]),
         WARNS, "never ended"),
    # not quite JSON
    Case("nan_infinity_tokens", "NaN / Infinity tokens",
         _tokens(
             doc(EVENTS + [
                 {"ph": "X", "cat": "cpu_op", "name": "nan ts", "pid": 10, "tid": 11,
                  "ts": "@1", "dur": 1.0},
                 {"ph": "X", "cat": "cpu_op", "name": "inf dur", "pid": 10, "tid": 11,
                  "ts": 141.0, "dur": "@2"},
                 {"ph": "X", "cat": "cpu_op", "name": "nan arg", "pid": 10, "tid": 11,
                  "ts": 142.0, "dur": 1.0, "args": {"v": "@3"}},
             ], schemaVersion="@4"),
             {b'"@1"': b"NaN", b'"@2"': b"Infinity", b'"@3"': b"NaN", b'"@4"': b"-Infinity"}),
         WARNS, "NaN/Infinity", _check_nan_tokens),
    Case("flow_ids_not_numbers", "events of the wrong types",
         doc(EVENTS + [
             {"ph": "X", "cat": "kernel", "name": "unlinked", "pid": 0, "tid": 7, "ts": 160.0,
              "dur": 1.0},
             {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": "abc", "pid": 10, "tid": 11,
              "ts": 113.0},
             {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": "abc", "pid": 10, "tid": 11,
              "ts": 121.0},
             {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": "abc", "pid": 0, "tid": 7,
              "ts": 160.0, "bp": "e"},
         ]), LOADS),
    Case("int_above_2_53", "integers above 2^53 / 2^64",
         doc(with_event(name="big", pid=2**53 + 1, args={"correlation": 2**53 + 1})),
         LOADS, "", _check_big_ints),
    Case("int_above_2_64", "integers above 2^53 / 2^64",
         doc(with_event(name="huge", pid=2**64 + 1, args={"External id": 2**64 + 5})),
         LOADS, "", _check_huge_ints),
    Case("duplicate_keys_in_event", "duplicate keys", _DUP_KEYS, LOADS, "",
         _check_duplicate_keys),
    Case("duplicate_traceEvents", "duplicate keys",
         doc()[:-1] + b', "traceEvents": ' + array_doc() + b"}", WARNS,
         "more than one 'traceEvents'"),
    # encodings
    Case("invalid_utf8_in_a_name", "invalid UTF-8 / other encodings",
         replace_once(doc(), b'"aten::mm"', b'"aten\xff\xfemm"'), WARNS, "not UTF-8",
         _check_replacement_char),
    Case("latin1_file", "invalid UTF-8 / other encodings",
         json.dumps({"traceEvents": with_event(name="caf\u00e9")}, ensure_ascii=False)
         .encode("latin-1"), WARNS, "not UTF-8",
         _check_replacement_char),
    Case("utf8_bom", "invalid UTF-8 / other encodings", b"\xef\xbb\xbf" + doc(), LOADS),
    Case("utf16_with_bom", "invalid UTF-8 / other encodings", doc().decode().encode("utf-16"),
         ERROR, "UTF-16"),
    Case("utf16le_no_bom", "invalid UTF-8 / other encodings",
         doc().decode().encode("utf-16-le"), ERROR, "UTF-16LE"),
    Case("utf16be_no_bom", "invalid UTF-8 / other encodings",
         doc().decode().encode("utf-16-be"), ERROR, "UTF-16BE"),
    Case("utf32_with_bom", "invalid UTF-8 / other encodings", doc().decode().encode("utf-32"),
         ERROR, "UTF-32"),
    # gzip
    Case("gzip_cut_short", "gzip cut short / corrupt", gzip.compress(doc())[:-40], WARNS,
         "file cut short: kept every complete event", _check_cut),
    Case("gzip_cut_in_its_trailer", "gzip cut short / corrupt", gzip.compress(doc())[:-4],
         WARNS, "gzip stream cut short after the end of its JSON", _check_cut),
    Case("gzip_cut_in_its_header", "gzip cut short / corrupt", gzip.compress(doc())[:6], ERROR,
         "gzip stream ends early, before any of its data"),
    Case("gzip_corrupt", "gzip cut short / corrupt", gzip_corrupt(), ERROR,
         "gzip data is corrupt"),
    Case("gzip_trailing_garbage", "gzip cut short / corrupt", gzip.compress(doc()) + b"junk!",
         ERROR, "after the gzip stream"),
    Case("gzip_of_nothing", "gzip cut short / corrupt", gzip.compress(b""), ERROR,
         "gzip file holds no data"),
    Case("gzip_of_text", "gzip cut short / corrupt", gzip.compress(b"hello"), ERROR,
         "not JSON"),
    # cut short
    Case("cut_mid_event", "file cut mid-event", cut_inside_last_event(doc()), WARNS,
         "file cut short", _check_cut),
    Case("cut_between_events", "file cut mid-event",
         doc()[: doc().rindex(b"}, {") + 2], WARNS, "file cut short", _check_cut),
    Case("cut_mid_event_array_form", "file cut mid-event", cut_inside_last_event(array_doc()),
         WARNS, "file cut short", _check_cut),
    Case("array_without_closing_bracket", "file cut mid-event", array_doc()[:-1] + b",\n",
         WARNS, "no closing ']'"),
    Case("cut_before_first_event", "file cut mid-event", b'{"traceEvents": [', ERROR,
         "before its first complete event"),
    Case("cut_in_first_event_array_form", "file cut mid-event", array_doc()[:40], ERROR,
         "no complete event"),
    Case("cut_in_header", "file cut mid-event", b'{"schemaVersion": 1, "trace', ERROR,
         "before any 'traceEvents'"),
    Case("cut_after_a_brace_in_first_event", "file cut mid-event",  # a cut, not bad JSON
         doc()[: doc().index(b'"python3"}') + len(b'"python3"}')], ERROR,
         "file cut short and no complete event could be found"),
    Case("zero_padding_after_json", "file cut mid-event", doc() + b"\x00" * 4096, WARNS,
         "zeros"),
    # structure
    Case("nested_50000_deep", "deep nesting", deeply_nested(), ERROR, "nested too deeply"),
    Case("no_events", "empty / blank", doc([]), LOADS, "", _check_empty),
]
CASE = {c.name: c for c in CASES}
assert len(CASE) == len(CASES)


def fingerprint(path: Path) -> tuple[int, str]:
    return path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()


def assert_outcome(case: Case, path: Path) -> None:
    """load_trace gives the case's outcome; the file is untouched."""
    before = fingerprint(path)
    if case.outcome == ERROR:
        with pytest.raises(TraceError) as info:
            load_trace(path, use_cache=False)
        line = info.value.line()
        assert case.expect in line, line
        assert str(path) in line and "\n" not in line
    else:
        trace = load_trace(path, use_cache=False)
        warnings = " | ".join(trace.warnings)
        if case.outcome == LOADS:
            assert trace.warnings == [], warnings
        else:
            assert case.expect in warnings, warnings
        if case.check:
            case.check(trace)
    assert fingerprint(path) == before


@pytest.mark.parametrize("name", list(CASE))
def test_loader_outcome(tmp_path: Path, name: str):
    case = CASE[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(case.data)
    assert_outcome(case, path)


# ---- the same corpus through the command line, in subprocesses ----

COMMANDS = (("stats", "--json"), ("table", "--json"), ("kernels", "--json"), ("stats",))


def cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 60,
        prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    environment = dict(os.environ, NO_COLOR="1", TERM="dumb", COLUMNS="200")
    environment.pop("FORCE_COLOR", None)
    environment.update(env or {})
    return subprocess.run(
        [*prefix, sys.executable, "-m", "tui.cli", *argv],
        capture_output=True, cwd=REPO, env=environment, timeout=timeout,
    )


def assert_cli_ok_or_one_line(result: subprocess.CompletedProcess[bytes], path: Path,
                              json_out: bool) -> Any:
    """Exit 0 with valid JSON (returned), or exit 2 with one stderr line naming the path."""
    err = result.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in result.stderr, err
    assert b"\x1b" not in result.stdout
    if result.returncode == 0:
        return json.loads(result.stdout) if json_out else result.stdout.decode()
    assert result.returncode == 2, (result.returncode, err)
    assert result.stdout == b""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert str(path) in err, err
    return None


SUBPROCESS = ("stats", "--json")  # the rest run through tui.cli.main in this process


def cli_in_process(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """``tui.cli.main`` with stdout and stderr captured, shaped like a subprocess result."""
    from tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return subprocess.CompletedProcess(list(argv), code, out.getvalue().encode(),
                                       err.getvalue().encode())


@pytest.fixture(scope="module")
def corpus_cli(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case through every command (done once): ``stats --json`` as a real
    subprocess (four at a time), the other commands in-process."""
    folder = tmp_path_factory.mktemp("corpus")
    cache = tmp_path_factory.mktemp("cache")
    paths = {}
    for case in CASES:
        paths[case.name] = folder / f"{case.name}.json"
        paths[case.name].write_bytes(case.data)
    before = {name: fingerprint(p) for name, p in paths.items()}
    env = {"ATTN_TUI_CACHE_DIR": str(cache)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        spawned = dict(zip(paths, pool.map(
            lambda name: cli(SUBPROCESS[0], str(paths[name]), *SUBPROCESS[1:], env=env), paths),
            strict=True))
    results = {}
    for name, path in paths.items():
        for command in COMMANDS:
            results[(name, command)] = spawned[name] if command == SUBPROCESS else \
                cli_in_process(command[0], str(path), *command[1:], "--no-cache")
    return {"paths": paths, "before": before, "results": results}


@pytest.mark.parametrize("name", list(CASE))
def test_cli_outcome(corpus_cli: dict[str, Any], name: str):
    case = CASE[name]
    path = corpus_cli["paths"][name]
    outputs = {}
    for command in COMMANDS:
        result = corpus_cli["results"][(name, command)]
        outputs[command] = assert_cli_ok_or_one_line(result, path, "--json" in command)
        if case.outcome == ERROR:
            assert result.returncode == 2
            assert case.expect in result.stderr.decode("utf-8", "replace")
    if case.outcome != ERROR:
        stats = outputs[("stats", "--json")]
        table = outputs[("table", "--json")]
        assert stats is not None and table is not None, "stats and table load every loadable case"
        assert isinstance(table, list)
        warnings = " | ".join(stats["warnings"])
        assert case.expect in warnings  # the loader's warnings reach stats (with its own)
        assert outputs[("stats",)] is not None
    assert fingerprint(path) == corpus_cli["before"][name]


# ---- cases that are not file contents ----


def test_missing_file(tmp_path: Path):
    path = tmp_path / "missing.json"
    with pytest.raises(TraceError, match="no such file"):
        load_trace(path)
    assert_cli_ok_or_one_line(cli("stats", str(path), "--json"), path, True)
    assert not path.exists()


def test_directory(tmp_path: Path):
    with pytest.raises(TraceError, match="is a directory"):
        load_trace(tmp_path)
    result = cli("stats", str(tmp_path), "--json")
    assert result.returncode == 2 and b"is a directory" in result.stderr
    assert_cli_ok_or_one_line(result, tmp_path, True)


def test_symlink_loop(tmp_path: Path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(TraceError, match="cannot open"):
        load_trace(loop)
    result = cli("table", str(loop), "--json")
    assert result.returncode == 2
    assert_cli_ok_or_one_line(result, loop, True)


def test_fifo_is_refused_without_hanging(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    outcome: list[Any] = []

    def load() -> None:
        try:
            load_trace(fifo)
        except TraceError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # it blocked opening the pipe: free it, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("load_trace blocked on a FIFO")
    assert outcome and "not a regular file" in outcome[0].line()
    result = cli("stats", str(fifo), "--json", timeout=30)
    assert result.returncode == 2 and b"not a regular file" in result.stderr
    assert_cli_ok_or_one_line(result, fifo, True)


def _without_root_powers() -> tuple[str, ...] | None:
    """A command prefix under which file permissions apply (root ignores them)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    # Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH obeys the mode bits.
    probe = subprocess.run([setpriv, "--bounding-set=-all", "--inh-caps=-all", "true"],
                           capture_output=True)
    return (setpriv, "--bounding-set=-all", "--inh-caps=-all") if probe.returncode == 0 else None


def test_no_read_permission(tmp_path: Path):
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: root reads any file, so there is "
                    "no permission error to provoke")
    path = tmp_path / "secret.json"
    path.write_bytes(doc())
    path.chmod(0o000)
    before = path.stat().st_mtime_ns
    try:
        code = ("from profiling.trace import load_trace\n"
                "from profiling.errors import TraceError\n"
                f"try:\n    load_trace({str(path)!r})\n"
                "except TraceError as e:\n    print(e.line())\n")
        probe = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True,
                               cwd=REPO, timeout=60)
        assert probe.returncode == 0 and b"permission denied" in probe.stdout, probe
        result = cli("stats", str(path), "--json", prefix=prefix)
        assert result.returncode == 2 and b"permission denied" in result.stderr
        assert_cli_ok_or_one_line(result, path, True)
    finally:
        path.chmod(0o644)
    assert path.read_bytes() == doc() and path.stat().st_mtime_ns == before


def test_file_still_being_written(tmp_path: Path):
    """A profiler still writing: what is there loads, cut short, and nothing hangs."""
    path = tmp_path / "growing.json"
    head = b'{"schemaVersion": 1, "traceEvents": [' + b", ".join(
        json.dumps(e).encode() for e in EVENTS)
    path.write_bytes(head)
    written = [head]
    stop = threading.Event()

    def writer() -> None:
        k = 0
        with path.open("ab") as f:
            while not stop.is_set():
                event = dict(BODY[1], name=f"late {k}", ts=200.0 + k)
                piece = b", " + json.dumps(event).encode()
                for part in (piece[:25], piece[25:]):  # often stops mid-event
                    f.write(part)
                    f.flush()
                    written.append(part)
                    time.sleep(0.002)
                k += 1

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        time.sleep(0.05)
        trace = load_trace(path, use_cache=False)
        result = cli("stats", str(path), "--json")
    finally:
        stop.set()
        thread.join(5)
    text = " | ".join(trace.warnings)
    assert "cut short" in text, text
    assert len(_rows(trace, "attn_fwd")) == 1
    stats = assert_cli_ok_or_one_line(result, path, True)
    assert stats is not None and any("cut short" in w for w in stats["warnings"])
    assert path.read_bytes() == b"".join(written)  # only the writer wrote


def test_args_after_the_file_changed_are_empty_not_wrong(tmp_path: Path):
    """Lazy args are read back from the file; once it changed they read as {}."""
    path = tmp_path / "t.json"
    path.write_bytes(doc())
    trace = load_trace(path, use_cache=False)
    (mm,) = _rows(trace, "aten::mm")
    path.write_bytes(doc(EVENTS[:3]))  # rewritten in place, shorter (truncated)
    assert trace.args(mm) == {}
    fresh = load_trace(path, use_cache=False)
    assert len(fresh) == 0


def test_args_of_a_gzip_trace_survive_the_file_changing(tmp_path: Path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(doc()))
    trace = load_trace(path, use_cache=False)
    (mm,) = _rows(trace, "aten::mm")
    path.write_bytes(b"")
    assert trace.args(mm)["Input Dims"] == [[2, 3], [3, 4]]  # the text read at load


def test_nan_args_are_read_back_from_the_file(tmp_path: Path):
    path = tmp_path / "t.json"
    path.write_bytes(CASE["nan_infinity_tokens"].data)
    trace = load_trace(path, use_cache=False)
    (mm,) = _rows(trace, "aten::mm")
    assert trace.args(mm)["Input Dims"] == [[2, 3], [3, 4]]
    assert trace.metadata["schemaVersion"] == float("-inf")
