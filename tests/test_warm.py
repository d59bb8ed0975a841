"""A first open stores what the next commands ask for (``profiling.analysis.warm``),
beside the command's own work, and changes no command's output.

The commands index only traces of 4 MiB or more, and keep launches and kernel
columns only for regions of 64 instances or more; here every trace is indexed and
every region's results kept, so the samples stand in for big traces.
"""

from __future__ import annotations

import functools
import io
import threading
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import analysed as analysed_module
from profiling.analysis import (
    analysis_store,
    findings,
    instance_kernels,
    key_averages,
    rank_breakdown,
)
from profiling.analysis import compare as compare_module
from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import loader
from profiling.trace.cache import is_new_index
from tests.conftest import SAMPLE_TRACES, real_trace_files
from tui import loading
from tui.cli import main

TRACES = [SAMPLE_TRACES / "naive.json.gz", SAMPLE_TRACES / "sdpa_flash.json.gz"] + [
    p for p in real_trace_files() if "resnet50" in p.name or "mi300" in p.name
]
"""Attention regions (the samples), and profiler steps only (two real traces)."""

COMMANDS = (
    ["compare", "--json"],
    ["kernels", "--json"],
    ["findings", "--json"],
    ["table", "--json"],
    ["stats", "--json"],
    ["slices", "--json"],
    ["diff", "--json"],  # the trace against itself: its median instance, read from the
                         # region's kernel columns the warm-up kept
    ["ranks", "--json"],  # its GPU figures as a one-trace job
)


def paths(command: list[str], path: object) -> list[str]:
    """The trace, given twice to ``diff``."""
    return [str(path)] * (2 if command[0] == "diff" else 1)


@pytest.fixture(params=["one thread", "two threads"])
def index_all(request: pytest.FixtureRequest, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every trace gets an index, in a cache folder of this test's own; the warm-up
    runs its halves one after the other, or side by side (as with 4 cores or more)."""
    import profiling.analysis.warm as warm_module

    monkeypatch.setattr(warm_module, "SPLIT_MIN_CORES",
                        1 if request.param == "two threads" else 1 << 20)
    cache = tmp_path / "cache"
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(cache))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    monkeypatch.setattr(
        loading, "load_trace", functools.partial(loader.load_trace, min_cache_bytes=0)
    )
    monkeypatch.setattr(analysed_module, "STORED_BATCH", 1)  # the samples' 3 instances too
    return cache


def run(argv: list[str]) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def refuse_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every builder that ``warm`` should have made unnecessary fail loudly."""

    def refused(name: str):
        def fail(*_args: object, **_kwargs: object) -> object:
            raise AssertionError(f"{name} recomputed after a first open")

        return fail

    for module, name in (
        (compare_module, "region_implementation"),
        (instance_kernels, "_kernel_columns"),
        (findings, "_trace_findings"),
        (rank_breakdown, "gpu_breakdown"),
    ):
        monkeypatch.setattr(module, name, refused(name))
    monkeypatch.setattr(key_averages, "key_averages", refused("key_averages"))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_first_open_stores_what_the_next_commands_read(
    path: Path, index_all: Path, monkeypatch: pytest.MonkeyPatch
):
    want = {tuple(c): run([*c, "--no-cache", *paths(c, path)]) for c in COMMANDS}
    assert run(["stats", "--json", str(path)]) == want[("stats", "--json")]  # the first open
    assert not loading._WARMING, "the warm-up outlived its command"
    refuse_builds(monkeypatch)
    for c in COMMANDS:
        assert run([*c, *paths(c, path)]) == want[tuple(c)], c


@pytest.mark.parametrize("command", [c[0] for c in COMMANDS])
def test_each_command_as_first_open_gives_its_output(command: str, index_all: Path):
    """The warm-up runs beside the command: what they share is computed once and the
    command's output is the one a trace with no index gives."""
    path = str(SAMPLE_TRACES / "naive.json.gz")
    both = paths([command], path)
    want = run([command, "--json", "--no-cache", *both])
    assert run([command, "--json", *both]) == want
    assert run([command, "--json", *both]) == want  # the reopen, from what was stored


def test_only_a_first_open_warms(index_all: Path, monkeypatch: pytest.MonkeyPatch):
    path = str(SAMPLE_TRACES / "naive.json.gz")
    started: list[AnalysedTrace] = []
    monkeypatch.setattr(loading, "warm_quietly", started.append)
    first = loading.analysed_for_command(path)
    loading.finish_warming()
    assert is_new_index(first.trace) and started == [first]
    again = loading.analysed_for_command(path)
    assert not is_new_index(again.trace) and started == [first]
    monkeypatch.setenv("ATTN_TUI_NO_ANALYSIS_STORE", "1")
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(index_all.parent / "other"))
    unstored = loading.analysed_for_command(path)  # indexed, with no results kept
    assert is_new_index(unstored.trace) and started == [first]


def test_slices_first_open_warms_and_a_reopen_reads_the_trace_alone(
    index_all: Path, monkeypatch: pytest.MonkeyPatch
):
    """``slices`` needs no analysis itself (``trace_for_command``), but as a first open
    it still starts the warm-up the next commands read."""
    path = str(SAMPLE_TRACES / "naive.json.gz")
    started: list[AnalysedTrace] = []
    monkeypatch.setattr(loading, "warm_quietly", started.append)
    want = run(["slices", "--json", "--no-cache", path])
    assert started == []  # no index written: nothing to keep results in
    assert run(["slices", "--json", path]) == want
    assert len(started) == 1 and is_new_index(started[0].trace)
    assert run(["slices", "--json", path]) == want
    assert len(started) == 1


def test_a_failed_warm_up_is_silent(index_all: Path, monkeypatch: pytest.MonkeyPatch):
    """Best effort: the command computes what the warm-up did not store."""
    import profiling.analysis.warm as warm_module

    def broken(_a: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(warm_module, "warm", broken)
    path = str(SAMPLE_TRACES / "naive.json.gz")
    want = run(["findings", "--json", "--no-cache", path])
    assert run(["findings", "--json", path]) == want


def test_stored_results_are_built_once_across_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Two threads asking for one stored result: the second waits and reads the
    first one's copy (a first open's warm-up and its command share the work)."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    a = AnalysedTrace(loader.load_trace(SAMPLE_TRACES / "naive.json.gz", min_cache_bytes=0))
    assert analysis_store.available(a.trace)
    inside, release = threading.Event(), threading.Event()
    builds: list[int] = []

    def build() -> np.ndarray:
        builds.append(1)
        inside.set()
        assert release.wait(30)
        return np.arange(5)

    got: list[np.ndarray] = []

    def ask() -> None:
        got.append(
            a.stored(
                "test:once",
                build,
                lambda v: ({"v": v}, None),
                lambda arrays, _doc: np.asarray(arrays["v"]),
            )
        )

    first = threading.Thread(target=ask)
    first.start()
    assert inside.wait(30)
    second = threading.Thread(target=ask)
    second.start()
    second.join(0.2)
    assert second.is_alive(), "the second asker did not wait for the first"
    release.set()
    first.join(30)
    second.join(30)
    assert builds == [1] and [v.tolist() for v in got] == [[0, 1, 2, 3, 4]] * 2


def test_side_by_side_a_failed_half_is_raised_after_both_end(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch):
    import profiling.analysis.warm as warm_module

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    monkeypatch.setattr(warm_module, "SPLIT_MIN_CORES", 1)

    def broken(_a: object) -> None:
        raise RuntimeError("the kernels part")

    monkeypatch.setattr(warm_module, "_kernels", broken)
    a = AnalysedTrace(loader.load_trace(SAMPLE_TRACES / "naive.json.gz", min_cache_bytes=0))
    with pytest.raises(RuntimeError, match="the kernels part"):
        warm_module.warm(a)
    assert analysis_store.load(a.trace, "key_averages") is not None  # the other parts ended
    assert analysis_store.load(a.trace, "findings") is not None


def test_one_instance_of_many_gpu_events_is_kept_with_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """An annotation around a whole run: one instance, every GPU event.  Its kernel
    columns are stored by the first ``kernels --region`` of it and mapped after."""
    from tests.fixtures.synthetic import whole_run_doc, write_doc

    path = write_doc(tmp_path / "whole.json", whole_run_doc(6))
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    monkeypatch.setattr(
        loading, "load_trace", functools.partial(loader.load_trace, min_cache_bytes=0)
    )
    argv = ["kernels", "--json", "--region", "whole", str(path)]
    want = run([*argv, "--no-cache"])
    assert run(argv) == want  # the first open: one instance, too few events to keep
    monkeypatch.setattr(analysed_module, "STORED_EVENTS", 20)
    assert run(argv) == want  # kept now
    refuse_builds(monkeypatch)
    assert run(argv) == want  # and mapped


def test_a_trace_named_twice_is_loaded_once(index_all: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``diff A A`` and ``compare A B A`` load and analyse A once, and print what two
    loads print."""
    a, b = str(SAMPLE_TRACES / "naive.json.gz"), str(SAMPLE_TRACES / "sdpa_flash.json.gz")
    want = run(["diff", "--json", "--no-cache", a, a])
    loads: list[str] = []
    real = loading.analysed_for_command

    def counted(path: str, args: object = None) -> AnalysedTrace:
        loads.append(path)
        return real(path, args)

    monkeypatch.setattr(loading, "analysed_for_command", counted)
    traces = loading.analysed_each([a, b, a])
    assert loads == [a, b] and traces[0] is traces[2] and traces[1] is not traces[0]
    loads.clear()
    assert run(["diff", "--json", a, a]) == want and loads == [a]
