"""A big trace's first open warms in the decoding pool's processes, not on threads.

On threads the warm-up's halves share the GIL with the command's own analysis;
with a pool already started by the decode and cores to spare, each half runs in a
worker on the trace mapped from the index just written (``warm_in_processes``).
The sample stands in for a big trace here (the row and core thresholds lowered);
what must hold is what the thread path gives: the next commands read the stored
op table and findings instead of computing them, with the same output.
"""

from __future__ import annotations

import functools
import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import profiling.analysis.warm as warm_module
from profiling.analysis import analysed as analysed_module
from profiling.analysis import findings, key_averages
from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import loader, pool
from profiling.trace.cache import index_of
from tests.conftest import SAMPLE_TRACES
from tui import loading
from tui.cli import main

PATH = str(SAMPLE_TRACES / "naive.json.gz")


def run(argv: list[str]) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


@pytest.fixture
def big_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    monkeypatch.setattr(
        loading, "load_trace", functools.partial(loader.load_trace, min_cache_bytes=0)
    )
    monkeypatch.setattr(warm_module, "SPLIT_MIN_CORES", 1)
    monkeypatch.setattr(warm_module, "PROCESS_MIN_ROWS", 0)
    pool.get_pool(2)  # the pool a big trace's decode starts


def refuse(monkeypatch: pytest.MonkeyPatch, *targets: tuple[object, str]) -> None:
    def refused(*_a: object, **_k: object) -> object:
        raise AssertionError("computed in the loading process")

    for module, name in targets:
        monkeypatch.setattr(module, name, refused)


def test_the_halves_run_in_the_pool_and_the_next_commands_read_them(
    big_enough: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = {c: run([c, "--json", "--no-cache", PATH]) for c in ("table", "findings", "stats")}
    # the thread path must not run: the halves are the pool's
    refuse(monkeypatch, (loading, "_warm_quietly"))
    assert run(["stats", "--json", PATH]) == want["stats"]
    assert not loading._WARMING, "the warm-up outlived its command"
    refuse(monkeypatch, (key_averages, "key_averages"), (findings, "_trace_findings"),
           (analysed_module, "key_averages"))
    assert run(["table", "--json", PATH]) == want["table"]
    assert run(["findings", "--json", PATH]) == want["findings"]


def test_the_workers_store_where_this_process_says(
    big_enough: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told not to store the analysis, the workers store nothing either, whatever the
    environment the pool started with."""
    monkeypatch.setenv("ATTN_TUI_NO_ANALYSIS_STORE", "1")
    found = index_of(loader.load_trace(PATH, min_cache_bytes=0))
    assert found is not None
    assert warm_module.warm_part(PATH, str(found[0]), "op table",
                                 {"ATTN_TUI_NO_ANALYSIS_STORE": "1"})
    assert not [p for p in found[0].iterdir() if p.name.startswith("analysis-")]


def test_without_a_pool_or_cores_the_warm_up_takes_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    trace = loader.load_trace(PATH, min_cache_bytes=0)
    monkeypatch.setattr(warm_module, "SPLIT_MIN_CORES", 1)
    monkeypatch.setattr(warm_module, "PROCESS_MIN_ROWS", len(trace) + 1)
    assert warm_module.warm_in_processes(AnalysedTrace(trace)) is None  # too small
    monkeypatch.setattr(warm_module, "PROCESS_MIN_ROWS", 0)
    monkeypatch.setattr(warm_module, "existing_pool", lambda: None)
    assert warm_module.warm_in_processes(AnalysedTrace(trace)) is None  # no pool started
