"""What a new user meets in the first hour on the command line (issue 12, items 1-7, 18-20).

Each test reproduces one rough edge: capture without torch, brackets eaten as
Rich markup, ``--debug`` after the subcommand, capture folders and their oracles
and manifest given as PATHs, ``open`` with nothing that loads, options without
help, torch's native log lines during a capture, packaging pins and log folders.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from profiling.errors import AttnTuiError
from tests.conftest import REAL_TRACES, REPO, SAMPLE_TRACES, real_trace_files
from tests.test_analysis_links import call, gpu, op
from tui import inputs
from tui.cli import build_parser, main

INSTALL_HINT = "pip install 'attn-tui[capture]'"
HIDE_TORCH = "import sys; sys.modules['torch'] = None; "  # `import torch` now fails


def cli_without_torch(*argv: str) -> subprocess.CompletedProcess[str]:
    """``attn-tui ARGV`` in a fresh interpreter where ``import torch`` fails."""
    code = HIDE_TORCH + f"from tui.cli import main; sys.exit(main({list(argv)!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def events() -> list[dict[str, Any]]:
    return [
        op("ProfilerStep#1", 0, 500, ext=1, cat="user_annotation"),
        op("attn_fwd", 10, 300, ext=2, cat="user_annotation"),
        op("aten::mm", 20, 100, ext=3),
        call("cudaLaunchKernel", 30, 5, corr=40, ext=3),
        gpu("gemm_kernel", 400, 20, corr=40, ext=3),
    ]


def write_json(path: Path, doc: Any, *, gz: bool = False) -> Path:
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


ORACLE_ROWS = [{"key": "aten::mm", "device_type": "CPU", "count": 3,
                "self_cpu_time_total": 1.0, "cpu_time_total": 2.0,
                "self_device_time_total": 0.0, "device_time_total": 0.0}]


@pytest.fixture
def capture_folder(tmp_path: Path) -> Path:
    """What ``capture --out`` writes: traces, their oracles, a manifest, in a folder
    whose manifest order (zeta, alpha) differs from name order."""
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("alpha", "zeta"):
        write_json(folder / f"{name}.json", {"traceEvents": events()})
        write_json(folder / f"{name}.key_averages.json", ORACLE_ROWS)
    write_json(folder / "manifest.json", {
        "tool": "attn-tui capture", "manifest_version": 1, "device": "cpu",
        "variants": {
            "zeta": {"status": "ok", "trace": "zeta.json"},
            "skipped_one": {"status": "skipped", "trace": None},
            "alpha": {"status": "ok", "trace": "alpha.json"},
        },
    })
    (folder / "CAPTURE.txt").write_text("variant status\n")
    return folder


# ---- 1, 2: no torch ----


@pytest.mark.parametrize("argv", [
    ["--all", "--device", "cpu"],
    ["--variant", "naive", "--device", "cpu"],
    ["--device", "auto"],
    ["--device", "cuda"],
])
def test_capture_without_torch_says_what_to_install(tmp_path: Path, argv: list[str]) -> None:
    result = cli_without_torch("capture", "--out", str(tmp_path / "out"), *argv)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert INSTALL_HINT in result.stderr
    assert "capture: capture:" not in result.stderr and "internal error" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_variants_without_torch_keeps_the_brackets() -> None:
    result = cli_without_torch("variants")
    assert result.returncode == 0, result.stderr
    assert INSTALL_HINT in " ".join(result.stdout.split())  # Rich may wrap the line


def _render(*renderables: Any) -> str:
    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    for r in renderables:
        console.print(r)
    console.file.close()
    return console.export_text()


class _Result:
    def __init__(self, name: str, status: str, reason: str | None = None) -> None:
        self.name, self.status, self.reason = name, status, reason
        self.ms_per_forward = 1.5 if status == "ok" else None
        self.tflops = 2.0 if status == "ok" else None
        self.kernels_per_forward = self.memcpy_per_forward = None
        self.notes: dict[str, Any] = {}


def test_capture_messages_print_brackets_literally() -> None:
    from rich.progress import Progress

    from tui.commands.capture import RichReporter, summary_notes, summary_table

    reason = "needs [bold]CUDA[/]: pip install 'attn-tui[capture]'"
    results = [_Result("naive", "ok"), _Result("[red]x[/]", "skipped", reason)]
    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    with Progress(console=console, transient=True) as progress:
        reporter = RichReporter(progress, len(results))
        for r in results:
            reporter.finished(r)
    console.file.close()
    lines = console.export_text()
    assert reason in lines and "[red]x[/]" in lines

    class Report:
        manifest = {"shape": {"batch": 1, "heads": 2, "seq": 3, "head_dim": 4},
                    "gpu": "GPU [v2]", "torch": "2.13", "dtype": "fp32", "environment": {},
                    "device": "cuda", "config": {"timed_iters": 7}}

    Report.results = results  # type: ignore[attr-defined]
    text = _render(summary_table(Report), summary_notes(Report))
    assert "GPU [v2]" in text and "[red]x[/]" in text and reason in text


def test_capture_table_names_its_time_base() -> None:
    from tui.commands.capture import time_base

    cuda = time_base({"device": "cuda", "config": {"timed_iters": 20}})
    assert "wall time per forward" in cuda and "CUDA events" in cuda and "20" in cuda
    assert "compare" in cuda  # says why compare's TFLOP/s differ
    assert "perf_counter" in time_base({"device": "cpu", "config": {"timed_iters": 5}})


# ---- 3: --debug anywhere ----


def test_debug_is_accepted_before_and_after_the_subcommand(tmp_path: Path, capsys) -> None:
    missing = str(tmp_path / "missing.json")
    assert main(["stats", missing]) == 2
    assert "no such file" in capsys.readouterr().err
    for argv in (["--debug", "stats", missing], ["stats", missing, "--debug"],
                 ["stats", "--debug", missing]):
        with pytest.raises(AttnTuiError, match="no such file"):
            main(argv)


def _positionals(p: argparse.ArgumentParser) -> list[str]:
    """Placeholder values for a subcommand's positional arguments."""
    out: list[str] = []
    for action in p._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            out += ["x", "y"] if action.nargs == "+" else ["x"]
    return out


def test_every_subcommand_takes_debug() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"open", "stats", "table", "kernels", "compare", "findings", "capture",
            "variants"} <= set(sub.choices)
    for name, p in sub.choices.items():
        rest = _positionals(p)
        assert parser.parse_args([name, *rest, "--debug"]).debug is True, name
        assert parser.parse_args(["--debug", name, *rest]).debug is True, name
        assert parser.parse_args([name, *rest]).debug is False, name


# ---- 4: folders, oracles, manifests ----


def test_capture_folder_gives_its_traces_in_manifest_order(capture_folder: Path) -> None:
    said: list[str] = []
    got = inputs.resolve_paths([str(capture_folder)], said.append)
    assert [Path(p).name for p in got] == ["zeta.json", "alpha.json"]
    assert said == []  # the folder's oracles and manifest are expected there: no noise


def test_plain_folder_gives_its_traces_in_natural_name_order(tmp_path: Path) -> None:
    for n in (10, 2, 1):
        write_json(tmp_path / f"worker{n}.json", {"traceEvents": events()})
    write_json(tmp_path / "worker3.json.gz", {"traceEvents": events()}, gz=True)
    (tmp_path / "README.md").write_text("# not a trace\n")
    (tmp_path / "sub").mkdir()
    write_json(tmp_path / "sub" / "deeper.json", {"traceEvents": events()})
    got = [Path(p).name for p in inputs.resolve_paths([str(tmp_path)], print)]
    assert got == ["worker1.json", "worker2.json", "worker3.json.gz", "worker10.json"]


def test_globbed_capture_folder_skips_oracles_and_manifest_with_one_line_each(
    capture_folder: Path,
) -> None:
    said: list[str] = []
    paths = sorted(str(p) for p in capture_folder.glob("*.json"))
    got = inputs.resolve_paths(paths, said.append)
    assert [Path(p).name for p in got] == ["alpha.json", "zeta.json"]  # the order given
    assert len(said) == 3
    assert sum("key_averages output, not a trace" in s for s in said) == 2
    assert sum("capture manifest, not a trace" in s for s in said) == 1


def test_oracles_and_manifests_are_told_by_content_not_name(tmp_path: Path) -> None:
    oracle = write_json(tmp_path / "rows.json", ORACLE_ROWS)
    gz_oracle = write_json(tmp_path / "rows.json.gz", ORACLE_ROWS, gz=True)
    trace_named_like_oracle = write_json(tmp_path / "t.key_averages.json", events())
    manifest = write_json(tmp_path / "m.json", {"manifest_version": 1, "variants": {}})
    not_manifest = write_json(tmp_path / "manifest.json", {"traceEvents": events()})
    assert inputs.kind_of(str(oracle)) == inputs.ORACLE
    assert inputs.kind_of(str(gz_oracle)) == inputs.ORACLE
    assert inputs.kind_of(str(trace_named_like_oracle)) == inputs.TRACE
    assert inputs.kind_of(str(manifest)) == inputs.MANIFEST
    assert inputs.kind_of(str(not_manifest)) == inputs.TRACE


def test_sample_capture_folder_is_recognised() -> None:
    kinds = {p.name: inputs.kind_of(str(p)) for p in SAMPLE_TRACES.iterdir()}
    assert kinds["manifest.json"] == inputs.MANIFEST
    assert {k for n, k in kinds.items() if n.endswith(".key_averages.json")} == {inputs.ORACLE}
    assert {k for n, k in kinds.items() if n.endswith(".json.gz")} == {inputs.TRACE}
    manifest = json.loads((SAMPLE_TRACES / "manifest.json").read_text())
    expected = [v["trace"] for v in manifest["variants"].values() if v.get("trace")]
    assert [Path(p).name for p in inputs.folder_traces(str(SAMPLE_TRACES))] == expected


@pytest.mark.skipif(not REAL_TRACES.is_dir(), reason="../shared/real_traces is absent")
def test_no_real_trace_is_taken_for_an_oracle_or_manifest() -> None:
    for path in real_trace_files():
        assert inputs.kind_of(str(path)) == inputs.TRACE, path


@pytest.mark.parametrize("command", ["open", "stats", "table", "kernels", "compare", "findings"])
def test_oracle_or_manifest_named_alone_is_a_clear_error(
    capture_folder: Path, command: str, capsys
) -> None:
    oracle = capture_folder / "alpha.key_averages.json"
    assert main([command, str(oracle)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is torch's key_averages output, not a trace" in err
    assert str(capture_folder / "alpha.json") in err  # the trace it came from
    assert main([command, str(capture_folder / "manifest.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a capture manifest, not a trace" in err


@pytest.mark.parametrize("command", ["open", "stats", "compare"])
def test_folder_without_a_trace_is_an_error(tmp_path: Path, command: str, capsys) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    write_json(tmp_path / "x.key_averages.json", ORACLE_ROWS)
    assert main([command, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no trace in it" in err


def test_single_trace_commands_take_a_folder_of_one_and_refuse_several(
    tmp_path: Path, capture_folder: Path, capsys
) -> None:
    one = tmp_path / "one"
    one.mkdir()
    write_json(one / "only.json", {"traceEvents": events()})
    write_json(one / "only.key_averages.json", ORACLE_ROWS)
    assert main(["table", str(one), "--json"]) == 0
    assert any(r["key"] == "aten::mm" for r in json.loads(capsys.readouterr().out))
    assert main(["table", str(capture_folder), "--json"]) == 2
    err = capsys.readouterr().err
    assert "holds 2 traces" in err and "zeta.json" in err


# ---- 5: open with nothing that loads ----


def test_open_with_nothing_that_loads_prints_the_error_and_exits_2(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("this is not a trace\n")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    result = subprocess.run(
        [sys.executable, "-m", "tui.cli", "open", str(text), str(empty)],
        cwd=REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and str(text) in lines[0] and "file is empty" in lines[1]
    assert result.stdout == ""  # the app never started


def test_preloads_report_failures_only_when_no_file_loads() -> None:
    from tui.preload import Preloads

    def load(path: str, progress: Any = None, *, no_cache: bool = False) -> Any:
        if path.startswith("bad"):
            raise AttnTuiError("not a trace", path)
        return object()

    both = Preloads(["bad1", "good"], load=load)
    both.settle(30.0)
    assert both.failures() is None  # one file loads: the app opens with it
    bad = Preloads(["bad1", "bad2"], load=load)
    bad.settle(30.0)
    assert bad.failures() == ["bad1: not a trace", "bad2: not a trace"]
    with pytest.raises(AttnTuiError):
        bad.loader("bad1")
    assert bad.failures() is not None


def test_preloads_settle_does_not_wait_for_a_load_under_way() -> None:
    from tui.preload import Preloads

    release = threading.Event()

    def slow(path: str, progress: Any = None, *, no_cache: bool = False) -> Any:
        progress("decode", 0.05)  # past the first checks
        release.wait(30)
        return object()

    loads = Preloads(["big"], load=slow)
    loads.settle(30.0)  # returns once the load is under way, not when it ends
    assert loads.failures() is None
    release.set()
    assert loads.loader("big") is not None


# ---- 6: help ----


def test_every_option_of_every_subcommand_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in [("attn-tui", parser), *sub.choices.items()]:
        for action in p._actions:
            assert action.help and action.help.strip(), (name, action.dest)


def test_sort_help_lists_the_keys_table_accepts() -> None:
    from profiling.analysis.key_averages import SORT_KEYS
    from tui import cli

    assert tuple(cli.SORT_KEYS) == tuple(SORT_KEYS)
    text = build_parser().parse_args(["table", "x"])  # the parser builds
    assert text.sort == "self_device_time_total"
    for key in SORT_KEYS:
        assert key in cli.SORT_HELP


def test_help_defaults_match_capture_config() -> None:
    from profiling.capture.config import CPU_DEFAULTS, GPU_DEFAULTS, VARIANT_NAMES
    from tui import cli

    for key, (gpu_default, cpu_default) in cli.SHAPE_DEFAULTS.items():
        assert (GPU_DEFAULTS[key], CPU_DEFAULTS[key]) == (gpu_default, cpu_default), key
    assert tuple(cli.VARIANTS) == tuple(VARIANT_NAMES)


# ---- 7: torch's native log lines ----


def test_native_profiler_lines_are_dropped_and_other_native_output_kept(capfd) -> None:
    from tui.commands.capture import native_stderr_filtered

    with native_stderr_filtered():
        os.write(2, b"USDT:2026-12-01 06:12:52 7628:7628 SyncActivityProfilerHandler.cpp:52]"
                    b" profiler_start\n")
        os.write(2, b"STAGE:2026-12-01 06:13:07 7898:7898 X.cpp:51] Completed Stage: Warm Up\n")
        os.write(2, b"W1201 a native warning worth seeing\n")
    err = capfd.readouterr().err
    assert "profiler_start" not in err and "Completed Stage" not in err
    assert "a native warning worth seeing" in err


def test_native_output_comes_back_when_the_capture_fails(capfd) -> None:
    from tui.commands.capture import native_stderr_filtered

    with pytest.raises(RuntimeError), native_stderr_filtered():
        os.write(2, b"native detail before the failure\n")
        raise RuntimeError("boom")
    assert "native detail before the failure" in capfd.readouterr().err


# ---- 18-20: packaging ----


def _readme_test_command() -> list[str]:
    """The lines .ci/run runs: between the test-command markers, inside the fence."""
    text = (REPO / "README.md").read_text()
    block = text.split("<!-- test-command -->", 1)[1].split("<!-- /test-command -->", 1)[0]
    return [ln for ln in block.strip().splitlines() if not ln.startswith("```")]


def test_textual_is_a_range_at_run_time_and_pinned_for_the_tests_only() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    textual = [d for d in project["dependencies"] if d.startswith("textual")]
    assert len(textual) == 1 and "==" not in textual[0] and "<" in textual[0]
    test_extra = project["optional-dependencies"]["test"]
    assert not any("==" in d.split(";")[0] for d in project["dependencies"] + test_extra)
    pins = dict(
        ln.split("==") for ln in (REPO / "tests" / "constraints.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    )
    assert "textual" in pins and "pytest-textual-snapshot" in pins
    (command,) = _readme_test_command()  # one line: .ci/run runs it with bash -c
    assert "-c tests/constraints.txt" in command
    assert "pip install torch==2.13.0" in command  # CI installs torch as before


def test_readme_says_how_to_test_without_the_cuda_torch() -> None:
    text = " ".join((REPO / "README.md").read_text().split())
    assert "CPU-only wheel" in text
    assert "with a torch already in the environment, skip the torch step" in text


def test_error_logs_go_to_the_platform_log_folder(tmp_path: Path, monkeypatch) -> None:
    import platformdirs

    from tui.error_log import LOG_DIR_ENV, log_dirs

    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "mine"))
    assert log_dirs() == [tmp_path / "mine"]
    monkeypatch.delenv(LOG_DIR_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    first = log_dirs()[0]
    assert first == Path(platformdirs.user_log_dir("attn-tui", appauthor=False))
    if sys.platform.startswith("linux"):
        assert first.is_relative_to(tmp_path / "state")


def test_settle_waits_for_a_small_files_first_checks_but_not_a_big_ones(tmp_path: Path) -> None:
    from tui.preload import BIG_BYTES, _Load

    small = tmp_path / "small.json"
    small.write_text("{}")
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(BIG_BYTES)
    release = threading.Event()

    def stuck(path: str, progress: Any = None, *, no_cache: bool = False) -> Any:
        progress("read", 0.0)  # still in its first checks
        release.wait(30)
        return object()

    loads = [_Load(str(small), False, stuck), _Load(str(big), False, stuck)]
    try:
        assert loads[0].decided() is False  # settle waits for it: it may fail at once
        assert loads[1].decided() is True  # a big file's first scan is not waited for
    finally:
        release.set()
    for load in loads:
        assert load.wait(None) is not None
        assert load.decided()
