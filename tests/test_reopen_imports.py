"""A reopened trace's commands never import the decoders (issue 13).

A reopen maps the trace's index instead of parsing the file, so its commands spend
most of their time importing modules: the parse machinery (the event list scanner,
the msgspec event structs, the lenient reader, the process pool) cost a reopen of
``stats`` more than its work, and is imported only by ``loader.load_trace`` when
there is no index.  Each command runs here in a fresh interpreter on a trace whose
index exists, lists ``sys.modules`` and its threads when it is done, and prints
what a parse of the same trace prints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from profiling.trace.loader import load_trace
from tests.conftest import REPO, SAMPLE_TRACES
from tui.cli import main

DECODERS = (
    "profiling.trace.parse",
    "profiling.trace.decode",
    "profiling.trace.lenient",
    "profiling.trace.split",
    "profiling.trace.pool",
    "profiling.trace.columns",
    "profiling.trace.chunk",
    "profiling.trace.events",
    "profiling.trace.shared_columns",
    "multiprocessing",
    "profiling.analysis.job_index",
    "numpy.ma",
)
"""Modules only a first open (a parse) needs, and ``numpy.ma``: NumPy's ``unique``
asked for values alone imports it (20 ms); ``ranges.distinct`` does not."""

COMMANDS = {
    "stats": ["stats", "{t}", "--json"],
    "table": ["table", "{t}", "--json"],
    "kernels": ["kernels", "{t}", "--json"],
    "findings": ["findings", "{t}", "--json"],
    "compare": ["compare", "{t}", "{t}", "--json"],
    "slices": ["slices", "{t}", "--json"],
    "ranks": ["ranks", "{t}", "--json"],
    "diff": ["diff", "{t}", "{t}", "--json"],
}

RUN = """
import json, os, sys
from tui.cli import main
code = main(sys.argv[2:])
threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
with open(sys.argv[1], "w") as f:
    json.dump({"modules": sorted(sys.modules), "threads": threads,
               "blas": os.environ.get("OPENBLAS_NUM_THREADS")}, f)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A sample trace with its index (and the analysis stored in it), and the env
    whose cache folder holds that index."""
    folder = tmp_path_factory.mktemp("reopen")
    trace = folder / "naive.json.gz"
    shutil.copy(SAMPLE_TRACES / "naive.json.gz", trace)
    env = {**os.environ, "ATTN_TUI_CACHE_DIR": str(folder / "cache")}
    env.pop("OPENBLAS_NUM_THREADS", None)  # the command's own choice is tested
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTN_TUI_CACHE_DIR", env["ATTN_TUI_CACHE_DIR"])
    try:
        load_trace(trace, min_cache_bytes=0)  # the first open: writes the index
    finally:
        mp.undo()
    return trace, env


def _argv(name: str, trace: Path) -> list[str]:
    return [arg.replace("{t}", str(trace)) for arg in COMMANDS[name]]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_reopen_imports_no_decoder_and_prints_what_a_parse_prints(
    name: str, indexed: tuple[Path, dict[str, str]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    trace, env = indexed
    argv = _argv(name, trace)
    assert main([*argv, "--no-cache"]) == 0  # parsed, in this process
    parsed = capsys.readouterr().out

    def reopen() -> tuple[str, dict[str, Any]]:
        listing = tmp_path / "modules.json"
        done = subprocess.run([sys.executable, "-c", RUN, str(listing), *argv], env=env,
                              cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout, json.loads(listing.read_text())

    reopen()  # the first run on the index computes the analysis and stores it
    out, seen = reopen()
    assert out == parsed
    assert "profiling.trace.cache" in seen["modules"]  # it did read the index
    assert [m for m in seen["modules"]
            if any(m == d or m.startswith(d + ".") for d in DECODERS)] == []
    # NumPy's OpenBLAS started no thread pool (a thread per core, at import): tui.cli
    # asks for one BLAS thread, and a reopen of a trace this small starts none of its
    # own (the index's checks go to threads from column_threads.MIN_ROWS rows)
    assert seen["blas"] == "1"
    assert seen["threads"] in (None, 1)


def test_the_model_and_the_analysis_import_without_the_loader() -> None:
    code = ("import sys, profiling.trace, profiling.analysis.analysed\n"
            "print(sorted(m for m in sys.modules if m.startswith('profiling.trace.')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)
    loaded = done.stdout
    assert "profiling.trace.model" in loaded
    assert "profiling.trace.loader" not in loaded
    assert "profiling.trace.decode" not in loaded
