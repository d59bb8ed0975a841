"""``tui.prestart``: the forkserver starts early only for a first open of a big trace.

It reads no ``profiling.trace`` module (to stay cheap and off the import cycle), so
its copies of the loader's threshold, the pool's preload and the cache's folder
names are held equal to the real ones here."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from profiling.trace import loader, pool
from profiling.trace.cache import cache_dirs, path_prefix
from profiling.trace.cache_store import SUFFIX, cache_root
from tui import prestart


def test_its_copies_of_the_loader_constants_are_the_loaders() -> None:
    assert prestart.MIN_BYTES == loader.PARALLEL_MIN_BYTES
    assert prestart.PRELOAD == pool.PRELOAD
    assert prestart.SUFFIX == SUFFIX


def test_its_cache_folder_is_the_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "t.json"
    trace.write_text("[]")
    assert prestart.cache_root() == cache_root()
    folder = cache_dirs(trace)[-1]
    assert folder.parent == prestart.cache_root()
    assert folder.name.startswith(path_prefix(trace.resolve()) + "-")
    assert not prestart.has_index(trace)
    folder.mkdir(parents=True)
    assert prestart.has_index(trace)
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert prestart.cache_root() == cache_root() == tmp_path / "elsewhere"
    assert not prestart.has_index(trace)
    monkeypatch.setenv("ATTN_TUI_CACHE", "beside")
    beside = cache_dirs(trace)[0]
    beside.mkdir()
    assert beside.parent == trace.parent and prestart.has_index(trace)


def _args(path: Path, **kw: object) -> argparse.Namespace:
    return argparse.Namespace(
        path=str(path), jobs=kw.get("jobs", 2), no_cache=kw.get("no_cache", False)
    )


def test_it_starts_the_server_only_for_a_big_trace_with_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[list[str]] = []
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver  # type: ignore[attr-defined]
    monkeypatch.setattr(
        forkserver, "ensure_running", lambda: started.append(list(server._preload_modules))
    )
    monkeypatch.setattr(prestart, "MIN_BYTES", 1000)
    small, big = tmp_path / "small.json", tmp_path / "big.json"
    small.write_bytes(b" " * 999)
    big.write_bytes(b" " * 1000)
    assert not prestart.prestart(_args(small))
    assert not prestart.prestart(_args(big, jobs=1))
    assert not prestart.prestart(argparse.Namespace(paths=[str(big), str(big)], jobs=2))
    assert not prestart.prestart(_args(tmp_path / "missing.json"))
    assert not prestart.prestart(_args(tmp_path))  # a folder: resolved later
    assert not started
    assert prestart.prestart(_args(big))
    assert started == [pool.PRELOAD]
    cache_dirs(big)[-1].mkdir(parents=True)  # indexed: a reopen starts nothing
    assert not prestart.prestart(_args(big))
    assert prestart.prestart(_args(big, no_cache=True))
    monkeypatch.setattr(prestart, "cores", lambda: 4)  # no --jobs: every core
    assert prestart.prestart(argparse.Namespace(paths=[str(big)], jobs=None, no_cache=True))
    assert len(started) == 3


def test_its_cores_are_the_loaders_default_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "_DEFAULT_JOBS", None)
    assert prestart.cores() == loader.default_jobs()
