"""Where the index lives: the user cache folder, one entry per file identity, under a
size cap with least-recently-used eviction, safe with concurrent writers, and the
``attn-tui cache`` command that shows and clears it."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from profiling.trace.cache import GZIP_TEXT, SUFFIX, cache_dirs, read_cache
from profiling.trace.cache_store import (
    DEFAULT_CAP_BYTES,
    cap_bytes,
    folder_bytes,
    list_entries,
    parse_size,
)
from profiling.trace.loader import load_trace
from profiling.trace.textblocks import XZ_MAGIC, ZLIB_MAGIC, read_blocks, write_blocks
from tests.conftest import REPO
from tests.test_trace_cache import assert_same, many_events


@pytest.fixture
def user_cache(tmp_path_factory: pytest.TempPathFactory,
               monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder away from the traces' folder (to see nothing lands there)."""
    folder = tmp_path_factory.mktemp("user-cache") / "attn-tui"
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(folder))
    monkeypatch.delenv("ATTN_TUI_CACHE", raising=False)
    monkeypatch.delenv("ATTN_TUI_CACHE_MAX", raising=False)
    return folder


def entry_names(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.name.endswith(SUFFIX)}


def test_default_index_is_in_the_cache_dir_and_nothing_beside(write_trace, user_cache):
    path = write_trace(many_events(20), name="t.json.gz", gz=True)
    before = sorted(os.listdir(path.parent))
    first = load_trace(path, min_cache_bytes=0)
    assert sorted(os.listdir(path.parent)) == before  # nothing written beside the trace
    (entry,) = list_entries(user_cache)
    assert entry.trace == str(path.resolve())
    assert (entry.folder / "meta.json").is_file()
    assert_same(first, load_trace(path, min_cache_bytes=0))


def test_default_root_is_platformdirs_user_cache(write_trace, tmp_path, monkeypatch):
    monkeypatch.delenv("ATTN_TUI_CACHE_DIR", raising=False)
    monkeypatch.delenv("ATTN_TUI_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = write_trace(many_events(5))
    load_trace(path, min_cache_bytes=0)
    assert len(entry_names(tmp_path / "xdg" / "attn-tui")) == 1
    assert not path.with_name(path.name + SUFFIX).exists()


def test_beside_only_when_asked(write_trace, user_cache, monkeypatch):
    monkeypatch.setenv("ATTN_TUI_CACHE", "beside")
    path = write_trace(many_events(5))
    first = load_trace(path, min_cache_bytes=0)
    assert (path.with_name(path.name + SUFFIX) / "meta.json").is_file()
    assert not user_cache.exists() or not entry_names(user_cache)
    # Without the setting, the index beside the trace is neither read nor written.
    monkeypatch.delenv("ATTN_TUI_CACHE")
    assert cache_dirs(path) == [next(iter(cache_dirs(path)))]
    assert cache_dirs(path)[0].parent == user_cache
    assert_same(first, load_trace(path, min_cache_bytes=0))
    assert len(entry_names(user_cache)) == 1


def test_touched_or_changed_file_gets_a_new_entry_and_drops_the_old(write_trace, user_cache):
    path = write_trace(many_events(5))
    load_trace(path, min_cache_bytes=0)
    (old,) = entry_names(user_cache)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched, same bytes
    assert cache_dirs(path)[0].name != old
    load_trace(path, min_cache_bytes=0)
    (touched,) = entry_names(user_cache)  # the old identity's entry was dropped
    assert touched != old
    doc = json.loads(path.read_text())
    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "added", "pid": 10,
                               "tid": 11, "ts": 99999.0, "dur": 1.0})
    path.write_text(json.dumps(doc))
    trace = load_trace(path, min_cache_bytes=0)
    assert "added" in trace.strings
    (changed,) = entry_names(user_cache)
    assert changed not in (old, touched)


def test_another_trace_with_the_same_bytes_has_its_own_entry(write_trace, user_cache):
    a = write_trace(many_events(5), name="a.json")
    b = write_trace(many_events(5), name="b.json")
    load_trace(a, min_cache_bytes=0)
    load_trace(b, min_cache_bytes=0)
    assert {e.trace for e in list_entries(user_cache)} == {str(a.resolve()), str(b.resolve())}


def _stamp(folder: Path, t: float) -> None:
    os.utime(folder / "entry.json", (t, t))


def test_cap_evicts_least_recently_used_whole_entries(write_trace, user_cache, monkeypatch):
    paths = [write_trace(many_events(5 + k), name=f"t{k}.json") for k in range(4)]
    for p in paths[:3]:
        load_trace(p, min_cache_bytes=0)
    by_trace = {e.trace: e.folder for e in list_entries(user_cache)}
    folders = [by_trace[str(p.resolve())] for p in paths[:3]]
    for k, folder in enumerate(folders):
        _stamp(folder, 1_000_000 + k)  # t0 oldest, t2 newest
    # Reopening t0 makes it the most recently used: t1 is now the oldest.
    assert read_cache(paths[0], []) is not None
    sizes = [folder_bytes(f) for f in folders]
    fourth = cache_dirs(paths[3])[0]
    monkeypatch.setenv("ATTN_TUI_CACHE_MAX", str(sum(sizes) + max(sizes) - min(sizes[1:]) // 2))
    load_trace(paths[3], min_cache_bytes=0)
    left = {e.folder for e in list_entries(user_cache)}
    assert folders[1] not in left  # least recently used: evicted, as a whole
    assert {folders[0], folders[2], fourth} <= left
    assert not [p for p in user_cache.iterdir() if p.name.startswith(".attn-tui")]
    assert sum(folder_bytes(f) for f in left) <= cap_bytes()


def test_the_entry_just_written_is_never_evicted(write_trace, user_cache, monkeypatch):
    old = write_trace(many_events(5), name="old.json")
    load_trace(old, min_cache_bytes=0)
    new = write_trace(many_events(6), name="new.json")
    size = sum(folder_bytes(e.folder) for e in list_entries(user_cache))
    monkeypatch.setenv("ATTN_TUI_CACHE_MAX", str(size * 3 // 2))  # room for about one
    load_trace(new, min_cache_bytes=0)
    assert [e.trace for e in list_entries(user_cache)] == [str(new.resolve())]


def test_an_index_over_the_cap_is_not_written(write_trace, user_cache, monkeypatch):
    monkeypatch.setenv("ATTN_TUI_CACHE_MAX", "1k")
    path = write_trace(many_events(20))
    trace = load_trace(path, min_cache_bytes=0)
    assert len(trace) > 0
    assert not user_cache.exists() or not entry_names(user_cache)


def test_sizes_and_cap_setting():
    assert parse_size("10G") == 10 << 30 and parse_size("500m") == 500 << 20
    assert parse_size("1.5GiB") == 3 << 29 and parse_size("4096") == 4096
    with pytest.raises(ValueError):
        parse_size("lots")


def test_unreadable_cap_falls_back_to_default(monkeypatch, capsys):
    from profiling.trace import cache_store

    monkeypatch.setattr(cache_store, "_warned", set())
    monkeypatch.setenv("ATTN_TUI_CACHE_MAX", "lots")
    assert cap_bytes() == DEFAULT_CAP_BYTES
    assert cap_bytes() == DEFAULT_CAP_BYTES
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ATTN_TUI_CACHE_MAX" in err and "'lots'" in err
    assert "10G" in err  # what it takes


def test_unknown_cache_mode_warns_once_and_uses_the_user_folder(monkeypatch, capsys):
    from profiling.trace import cache_store

    monkeypatch.setattr(cache_store, "_warned", set())
    for value, beside in (("", False), ("beside", True), (" Beside ", True)):
        monkeypatch.setenv("ATTN_TUI_CACHE", value)
        assert cache_store.beside_wanted() is beside
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("ATTN_TUI_CACHE", "weird")
    assert cache_store.beside_wanted() is False and cache_store.beside_wanted() is False
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ATTN_TUI_CACHE=" in err and "'weird'" in err
    assert "beside" in err


def test_cache_dir_that_is_a_file(tmp_path, monkeypatch, capsys):
    from profiling.trace import cache_store

    monkeypatch.setattr(cache_store, "_warned", set())
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(a_file))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_store.cache_root() != a_file and cache_store.cache_root() != a_file
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ATTN_TUI_CACHE_DIR" in err and str(a_file) in err
    env = dict(os.environ, ATTN_TUI_CACHE_DIR=str(a_file))
    for argv in (("cache",), ("cache", "--info"), ("cache", "--info", "--json"),
                 ("cache", "--clear")):
        result = cli(*argv, env=env)
        assert result.returncode == 2 and result.stdout == "", (argv, result.stdout)
        assert result.stderr.count("\n") == 1 and str(a_file) in result.stderr
        assert "ATTN_TUI_CACHE_DIR" in result.stderr and "Traceback" not in result.stderr
    assert a_file.read_text() == "x"


def cli(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cache_command_info_and_clear(write_trace, user_cache):
    paths = [write_trace(many_events(5), name=f"c{k}.json") for k in range(2)]
    for p in paths:
        load_trace(p, min_cache_bytes=0)
    env = dict(os.environ, ATTN_TUI_CACHE_DIR=str(user_cache), ATTN_TUI_CACHE_MAX="3G")
    info = cli("cache", "--info", "--json", env=env)
    assert info.returncode == 0, info.stderr
    doc = json.loads(info.stdout)
    assert doc["folder"] == str(user_cache) and doc["entries"] == 2
    assert doc["cap_bytes"] == 3 << 30
    assert {item["trace"] for item in doc["items"]} == {str(p.resolve()) for p in paths}
    assert doc["bytes"] == sum(item["bytes"] for item in doc["items"]) > 0
    text = cli("cache", env=env)
    assert text.returncode == 0, text.stderr
    assert str(user_cache) in text.stdout and "2 entries" in text.stdout
    assert all(str(p.resolve()) in text.stdout for p in paths)
    cleared = cli("cache", "--clear", env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.startswith("removed 2 entries (") and cleared.stdout.count("\n") == 1
    assert not entry_names(user_cache)
    again = cli("cache", "--info", "--json", env=env)
    assert json.loads(again.stdout)["entries"] == 0


def test_cache_command_refuses_both_flags(user_cache):
    result = cli("cache", "--info", "--clear",
                 env=dict(os.environ, ATTN_TUI_CACHE_DIR=str(user_cache)))
    assert result.returncode == 2 and "not allowed with" in result.stderr


WRITER = """
import sys
from pathlib import Path
from profiling.trace.cache import read_cache, write_cache
from profiling.trace.parse import parse

path = Path(sys.argv[1])
trace, spans, starts, text = parse(path, lambda *a: None, 1, 1 << 62)
Path(sys.argv[2]).touch()
while not Path(sys.argv[3]).exists():
    pass
for _ in range(int(sys.argv[4])):
    warnings = []
    write_cache(trace, path, spans, starts, text is not None, text)
    hit = read_cache(path, warnings)
    assert hit is not None and not warnings, warnings
print("ok")
"""


@pytest.mark.parametrize("gz", [False, True])
def test_concurrent_writers_of_one_entry_never_corrupt_it(write_trace, user_cache, tmp_path,
                                                          gz):
    path = write_trace(many_events(30), name="w.json.gz" if gz else "w.json", gz=gz)
    go = tmp_path / "go"
    env = dict(os.environ, ATTN_TUI_CACHE_DIR=str(user_cache), PYTHONPATH=str(REPO))
    procs = []
    for k in range(3):
        ready = tmp_path / f"ready{k}"
        procs.append((ready, subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(ready), str(go), "5"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    while not all(ready.exists() or p.poll() is not None for ready, p in procs):
        pass
    go.touch()  # all start writing at once
    for _, p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    (entry,) = list_entries(user_cache)
    assert not [p for p in user_cache.iterdir() if p.name.startswith(".attn-tui")]
    warnings: list[str] = []
    hit = read_cache(path, warnings)
    assert hit is not None and not warnings
    reopened = load_trace(path, min_cache_bytes=0)
    assert isinstance(reopened.ts_ns, np.memmap) and not reopened.warnings
    assert_same(load_trace(path, use_cache=False), reopened)


def test_text_blocks_read_any_range(tmp_path):
    import random

    rng = random.Random(7)
    text = bytes(rng.choice(b'{"name": "aten::mm", "ts": 12.5},\n') for _ in range(25_000))
    path = tmp_path / "text.blocks"
    write_blocks(path, text, block=1000)
    for lo, hi in [(0, 0), (0, 1), (999, 1001), (0, len(text)), (24_500, 30_000), (-5, 10)]:
        assert read_blocks(str(path), lo, hi) == text[max(0, lo):hi]
    for _ in range(200):
        lo = rng.randrange(len(text))
        hi = lo + rng.randrange(5000)
        assert read_blocks(str(path), lo, hi) == text[lo:hi]


def test_damaged_text_blocks_raise_oserror(tmp_path):
    path = tmp_path / "text.blocks"
    write_blocks(path, b"0123456789" * 500, block=1000)
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF  # inside the last block
    path.write_bytes(bytes(data))
    with pytest.raises(OSError):
        read_blocks(str(path), 4500, 5000)
    path.write_bytes(b"not blocks")
    with pytest.raises(OSError):
        read_blocks(str(path), 0, 10)


def test_text_blocks_are_xz_and_a_changed_byte_in_one_is_found(tmp_path):
    text = b'{"name": "aten::mm", "ts": 12.5, "args": {"External id": 7}},\n' * 400
    path = tmp_path / "text.blocks"
    write_blocks(path, text, block=4096)
    data = bytearray(path.read_bytes())
    assert data.startswith(XZ_MAGIC)
    assert read_blocks(str(path), 5000, 9000) == text[5000:9000]
    header = len(XZ_MAGIC) + 24 + 8 * (-(-len(text) // 4096) + 1)
    data[header + 40] ^= 0x01  # inside the first block's compressed data
    path.write_bytes(bytes(data))
    with pytest.raises(OSError, match="damaged block"):
        read_blocks(str(path), 0, 100)
    assert read_blocks(str(path), 5000, 9000) == text[5000:9000]  # the other blocks read


def test_a_python_without_lzma_writes_zlib_blocks_that_any_reads(tmp_path, monkeypatch):
    text = bytes(range(256)) * 40 + b"trace text " * 900
    path = tmp_path / "text.blocks"
    monkeypatch.setitem(sys.modules, "lzma", None)  # import lzma raises ImportError
    write_blocks(path, text, block=1000)
    assert path.read_bytes().startswith(ZLIB_MAGIC)
    assert read_blocks(str(path), 990, 3010) == text[990:3010]
    monkeypatch.delitem(sys.modules, "lzma")
    assert read_blocks(str(path), 0, len(text)) == text  # read where lzma is present
    write_blocks(tmp_path / "xz.blocks", text, block=1000)
    monkeypatch.setitem(sys.modules, "lzma", None)
    with pytest.raises(OSError, match="no lzma module"):
        read_blocks(str(tmp_path / "xz.blocks"), 0, 10)


def test_gzip_index_keeps_compressed_blocks_not_the_text(write_trace, user_cache):
    path = write_trace(many_events(200), name="big.json.gz", gz=True)
    text_size = len(gzip.decompress(path.read_bytes()))
    first = load_trace(path, min_cache_bytes=0)
    folder = cache_dirs(path)[0]
    assert (folder / GZIP_TEXT).stat().st_size <= 0.3 * text_size
    assert not [p for p in folder.iterdir() if p.stat().st_size >= text_size]
    second = load_trace(path, min_cache_bytes=0)
    assert isinstance(second.ts_ns, np.memmap)
    assert_same(first, second)  # args read back through the blocks
