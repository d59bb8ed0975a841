"""``malloc_tuning``: glibc's thresholds set once a headless command has reopened a trace
from its index, never on a first open, and never over the user's own settings."""

from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path

import pytest

from profiling.trace import loader
from tests.conftest import SAMPLE_TRACES
from tui import loading, malloc_tuning


@pytest.fixture
def no_user_settings(monkeypatch):
    for name in [n for n in os.environ if n.startswith("MALLOC_")]:
        monkeypatch.delenv(name)


class FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

        def mallopt(param: int, value: int) -> int:
            self.calls.append((param, value))
            return 1

        self.mallopt = mallopt


def test_the_two_thresholds_are_set(monkeypatch, no_user_settings):
    libc = FakeLibc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    assert malloc_tuning.keep_freed_memory()
    assert libc.calls == [(malloc_tuning.M_MMAP_THRESHOLD, 32 << 20),
                          (malloc_tuning.M_TRIM_THRESHOLD, 256 << 20)]


def test_the_users_own_setting_wins(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    assert not malloc_tuning.keep_freed_memory()
    assert libc.calls == []


def test_no_mallopt_no_change(monkeypatch, no_user_settings):
    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())  # a C library without it
    assert not malloc_tuning.keep_freed_memory()


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallopt"), reason="no mallopt here")
def test_the_real_mallopt_takes_them(no_user_settings):
    assert malloc_tuning.keep_freed_memory()  # glibc refuses values out of its bounds


def test_only_a_reopen_sets_them(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[int] = []
    monkeypatch.setattr(malloc_tuning, "keep_freed_memory", lambda: calls.append(1) or True)
    monkeypatch.setattr(loading, "load_trace",  # a sample is under the size an index needs
                        lambda path, **kw: loader.load_trace(path, min_cache_bytes=0, **kw))
    trace = tmp_path / "naive.json.gz"
    shutil.copy(SAMPLE_TRACES / "naive.json.gz", trace)

    class NoCache:
        no_cache = True

    loading.load_for_command(str(trace), NoCache())  # no index at all
    assert calls == []
    loading.load_for_command(str(trace))  # the first open writes the index
    assert calls == []
    loading.load_for_command(str(trace))  # a reopen maps it
    assert calls == [1]
