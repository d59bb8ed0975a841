"""Names are data: strings from a trace never act on the terminal or the format.

Event, process, thread, argument and even file names carry Rich markup, ANSI
and OSC escape sequences (colour, window title, the OSC 52 clipboard write),
C0/C1 control characters, pipes, backticks and a bidi override.  Every command
must show them literally or visibly escaped:

- Rich output (captured from a real subprocess): no ESC byte from the trace and
  no other control character reaches stdout; with colour forced, the only escape
  sequences are Rich's own SGR styling;
- ``--json``: valid JSON in which the exact name round-trips;
- ``--markdown``: table rows keep their column count (pipes escaped).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from profiling.trace import load_trace
from tests.fixtures.cli_run import cli

EVIL = ("[bold red]x[/] \x1b[31mRED\x1b[0m \x1b]0;owned\x07 \x1b]52;c;aGVsbG8=\x07 "
        "\r\n\t\x08\x7f\x9b2J|pipe| `tick` <b> :smile: \u202eevil")
REGION = "reg" + EVIL  # also given on the command line, so no NUL in it
OP, KERNEL, MEMCPY = "op\x00" + EVIL, "kern\x00" + EVIL, "Memcpy" + EVIL
PROCESS, THREAD, ARG = "proc" + EVIL, "thr" + EVIL, "k" + EVIL
FILE_NAME = "ev|il [bold]\x1b[31m`x`.json"

EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": PROCESS}},
    {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": THREAD}},
    {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU " + EVIL}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream " + EVIL}},
    {"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 10, "tid": 11,
     "ts": 100.0, "dur": 60.0},
    {"ph": "X", "cat": "user_annotation", "name": REGION, "pid": 10, "tid": 11, "ts": 100.0,
     "dur": 50.0},
    {"ph": "X", "cat": "cpu_op", "name": OP, "pid": 10, "tid": 11, "ts": 101.0,
     "dur": 40.0, "args": {ARG: "v" + EVIL, "Input type": ["c10::BFloat16" + EVIL],
                           "Input Dims": [[8, 16, 1024, 64]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 102.0, "dur": 3.0, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": KERNEL, "pid": 0, "tid": 7, "ts": 110.0, "dur": 20.0,
     "args": {"correlation": 1, "stream": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 11,
     "ts": 106.0, "dur": 3.0, "args": {"correlation": 2}},
    {"ph": "X", "cat": "gpu_memcpy", "name": MEMCPY, "pid": 0, "tid": 7, "ts": 131.0,
     "dur": 2.0, "args": {"correlation": 2, "stream": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": "pid" + EVIL, "tid": "tid" + EVIL,
     "ts": 300.0, "dur": 5.0},
    {"ph": "i", "cat": "cat" + EVIL, "name": "mark" + EVIL, "pid": 10, "tid": 11, "ts": 120.0,
     "s": "t"},
]


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("names")
    plain = folder / "evil.json"
    plain.write_text(json.dumps({"traceEvents": EVENTS,
                                 "deviceProperties": [{"id": 0, "name": "GPU" + EVIL}]}))
    odd = folder / FILE_NAME
    shutil.copyfile(plain, odd)
    return {"plain": plain, "odd": odd}


def test_the_loader_keeps_names_exactly(traces: dict[str, Path]):
    trace = load_trace(traces["plain"])
    names = {trace.name(r) for r in range(len(trace))}
    assert {REGION, OP, KERNEL, MEMCPY} <= names
    (row,) = [r for r in range(len(trace)) if trace.name(r) == OP]
    assert trace.args(row)[ARG] == "v" + EVIL
    (mark,) = [r for r in range(len(trace)) if trace.name(r) == "mark" + EVIL]
    assert trace.category(mark) == "cat" + EVIL
    labels = [lane.label for lane in trace.lanes] + [g.label for g in trace.groups]
    assert any(THREAD in label for label in labels) and any(PROCESS in label for label in labels)
    assert any(lane.pid == "pid" + EVIL for lane in trace.lanes)


RICH = {
    "stats": ("stats", "{plain}"),
    "table": ("table", "{plain}"),
    "kernels": ("kernels", "{plain}"),
    "kernels_evil_region": ("kernels", "{plain}", "--region", REGION),
    "findings": ("findings", "{plain}"),
    "compare": ("compare", "{plain}", "{odd}"),
    "compare_evil_region": ("compare", "{odd}", "{plain}", "--region", REGION),
    "stats_odd_file_name": ("stats", "{odd}"),
}

# What must show, visibly, in each: markup as text, escapes spelled out.
SHOWN = {"kernels_evil_region": ["[bold red]x[/]", "\\x1b[31mRED", "\\x1b]52;c;"],
         "table": ["op\\x00[bold red]x[/]", "\\x1b]0;owned\\x07"],
         "stats": ["reg[bold red]x[/]"],
         "findings": ["Memcpy[bold red]x[/]"]}

_SGR = re.compile(rb"\x1b\[[0-9;]*m")
# C0 (but newline), DEL, C1 and the bidi / line-separator controls, as UTF-8 text.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def argv_of(name: str, traces: dict[str, Path]) -> list[str]:
    return [a.format(plain=traces["plain"], odd=traces["odd"]) for a in RICH[name]]


def assert_inert(stdout: bytes, allow_sgr: bool) -> str:
    if allow_sgr:
        stdout = _SGR.sub(b"", stdout)
    assert b"\x1b" not in stdout
    text = stdout.decode("utf-8")
    assert not _CONTROL.findall(text), sorted(set(_CONTROL.findall(text)))
    return text


@pytest.mark.parametrize("name", list(RICH))
def test_rich_output_shows_names_without_obeying_them(traces: dict[str, Path], name: str):
    result = cli(*argv_of(name, traces), "--no-cache")
    assert result.returncode == 0, result.stderr
    text = assert_inert(result.stdout, allow_sgr=False)
    for shown in SHOWN.get(name, []):
        assert shown in text, (shown, text[:2000])


@pytest.mark.parametrize("name", ["table", "kernels_evil_region", "findings", "compare"])
def test_with_colour_forced_the_only_escapes_are_rich_styles(traces: dict[str, Path],
                                                               name: str):
    env = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "160"}
    result = cli(*argv_of(name, traces), "--no-cache", env=env)
    assert result.returncode == 0, result.stderr
    if name == "table":
        assert _SGR.search(result.stdout)  # colour really was on (bold headers)
    assert_inert(result.stdout, allow_sgr=True)


def test_error_lines_escape_names(traces: dict[str, Path]):
    """A region name that does not exist is echoed in the one-line error, escaped."""
    result = cli("kernels", str(traces["odd"]), "--region", "no" + EVIL, "--no-cache")
    assert result.returncode == 2
    err = assert_inert(result.stderr, allow_sgr=False)
    assert err.count("\n") == 1 and "no[bold red]x[/]" in err


def strings_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(k) | strings_in(v) for k, v in value.items()), set())
    if isinstance(value, list):
        return set().union(*(strings_in(v) for v in value), set())
    return set()


JSON_RUNS = {
    "stats": (("stats", "{plain}", "--json"), {REGION, MEMCPY, OP, "pid" + EVIL}),
    "table": (("table", "{plain}", "--json"), {OP, KERNEL, MEMCPY, REGION}),
    "kernels": (("kernels", "{plain}", "--region", REGION, "--json"), {REGION, KERNEL, OP}),
    "findings": (("findings", "{plain}", "--json"), {MEMCPY}),
    "compare": (("compare", "{plain}", "{odd}", "--region", REGION, "--json"),
                {REGION, "{odd}"}),
}


@pytest.mark.parametrize("name", list(JSON_RUNS))
def test_json_round_trips_the_exact_names(traces: dict[str, Path], name: str):
    argv, expected = JSON_RUNS[name]
    fill = {"plain": traces["plain"], "odd": traces["odd"]}
    result = cli(*[a.format(**fill) for a in argv], "--no-cache")
    assert result.returncode == 0, result.stderr
    assert b"\x1b" not in result.stdout  # JSON escapes control characters
    found = strings_in(json.loads(result.stdout))
    for want in expected:
        want = want.format(**fill)
        assert want in found or any(want in s for s in found), (want, sorted(found)[:20])
    if name == "stats":
        labels = [lane["label"] for lane in json.loads(result.stdout)["lanes"]]
        assert any(THREAD in label for label in labels)


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


@pytest.mark.parametrize("argv", [
    ("compare", "{odd}", "{plain}", "--markdown"),
    ("compare", "{odd}", "{plain}", "--region", REGION, "--markdown"),
    ("findings", "{odd}", "--markdown"),
])
def test_markdown_escapes_pipes_and_controls(traces: dict[str, Path], argv: tuple[str, ...]):
    fill = {"plain": traces["plain"], "odd": traces["odd"]}
    result = cli(*[a.format(**fill) for a in argv], "--no-cache")
    assert result.returncode == 0, result.stderr
    text = assert_inert(result.stdout, allow_sgr=False)
    table = [line for line in text.splitlines() if line.startswith("|")]
    if argv[0] == "compare":
        assert len(table) >= 4  # header, rule, two traces
        assert len({unescaped_pipes(line) for line in table}) == 1, table
        assert "ev\\|il" in text  # the file name's pipe, escaped
    else:
        assert "Memcpy" in text
