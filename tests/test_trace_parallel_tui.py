"""``attn-tui open a.json b.json c.json d.json``: four traces load at once, one thread
each, all on the parallel decoding path, inside the running app; each pane shows its own
file's columns, exactly as a serial load reads them (see test_trace_parallel.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import profiling.trace.loader as loader
from tui.app import AttnTuiApp
from tui.preload import Preloads

from .test_trace_parallel import assert_same, small_parallel_path, write_synthetic
from .test_tui_pilot import wait_loaded

__all__ = ["small_parallel_path"]  # the fixture, used by name below


async def test_four_traces_open_at_once_in_the_tui_match_serial_loads(
    tmp_path: Path, small_parallel_path: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [str(write_synthetic(tmp_path / f"t{i}.json", seed=i + 5, events=12_000 + 500 * i))
             for i in range(4)]
    serial = {p: loader.load_trace(p, use_cache=False, workers=1) for p in paths}
    monkeypatch.setattr(loader, "_DEFAULT_JOBS", 2)  # parallel even on a one-core machine
    preloads = Preloads(paths, no_cache=True)  # as `attn-tui open`: a thread per file
    app = AttnTuiApp(paths, no_cache=True, loader=preloads.loader, theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot, timeout=120)
        sessions = {p.session.path: p.session for p in app.panes if p.session is not None}
        assert sorted(sessions) == sorted(paths)
        for path in paths:
            assert_same(sessions[path].trace, serial[path])
    assert len(small_parallel_path) == len(paths), "every load took the parallel path"
