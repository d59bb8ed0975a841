"""Shared fixtures: where the real traces are, and a writer for tiny handmade traces."""

from __future__ import annotations

import atexit
import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# A bug in the app fails the test that meets it (tui.guard would otherwise turn it
# into a notification); tests/test_tui_faults.py switches this off where it tests that.
os.environ.setdefault("ATTN_TUI_STRICT_ERRORS", "1")
# Indexes go to the user cache folder: a private one, so tests never fill the user's own.
if not os.environ.get("ATTN_TUI_CACHE_DIR"):
    os.environ["ATTN_TUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-tui-test-cache-")
    atexit.register(shutil.rmtree, os.environ["ATTN_TUI_CACHE_DIR"], True)

if os.environ.get("ATTN_TUI_CACHED_TESTS") == "1":
    # Run the suite against traces reopened from the sidecar index: every load
    # parses once (writing the index) and returns the second, mapped load.  CI
    # runs the trace-engine tests both ways (.ci/run).
    import profiling.trace
    import profiling.trace.loader as _loader

    _parse_and_cache = _loader.load_trace

    def _load_from_cache(path: Any, **kwargs: Any) -> Any:
        kwargs.pop("min_cache_bytes", None)
        if kwargs.get("use_cache") is False:
            return _parse_and_cache(path, **kwargs)
        _parse_and_cache(path, min_cache_bytes=0, **kwargs)
        return _parse_and_cache(path, min_cache_bytes=0, **kwargs)

    profiling.trace.load_trace = _load_from_cache  # type: ignore[assignment]
    _loader.load_trace = _load_from_cache  # type: ignore[assignment]

REPO = Path(__file__).resolve().parent.parent
REAL_TRACES = REPO.parent / "shared" / "real_traces"
SAMPLE_TRACES = REPO / "sample_traces"


def real_trace_files() -> list[Path]:
    """Every trace under ../shared/real_traces (empty when the folder is absent)."""
    if not REAL_TRACES.is_dir():
        return []
    return sorted(
        p for p in REAL_TRACES.rglob("*") if p.is_file() and p.name.endswith((".json", ".json.gz"))
    )


needs_real_traces = pytest.mark.skipif(
    not REAL_TRACES.is_dir(), reason="../shared/real_traces is absent (fresh clone)"
)


@pytest.fixture
def write_trace(tmp_path: Path) -> Callable[..., Path]:
    """Write events (and optional top-level keys) as a trace file; returns its path."""

    def write(
        events: list[dict[str, Any]] | None = None,
        *,
        name: str = "trace.json",
        gz: bool = False,
        raw: bytes | None = None,
        **top: Any,
    ) -> Path:
        path = tmp_path / name
        if raw is None:
            doc: Any = {"traceEvents": events or [], **top}
            raw = json.dumps(doc).encode()
        if gz:
            raw = gzip.compress(raw)
        path.write_bytes(raw)
        return path

    return write


def cli_json(*argv: str) -> Any:
    """``attn-tui ARGV --json --no-cache`` run in this process: its exit code must be 0;
    its stdout, parsed."""
    from contextlib import redirect_stdout
    from io import StringIO

    from tui.cli import main

    out = StringIO()
    with redirect_stdout(out):
        assert main([*argv, "--json", "--no-cache"]) == 0
    return json.loads(out.getvalue())
