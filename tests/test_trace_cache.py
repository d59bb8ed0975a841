"""The sidecar index: same model when reopened, never stale, rebuilt when damaged."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from profiling.trace.cache import GZIP_TEXT, SUFFIX, cache_dirs
from profiling.trace.loader import load_trace
from tests.test_trace_loader import EVENTS

# Under ATTN_TUI_CACHED_TESTS every load already goes through the cache twice,
# so tests about when the cache is written or damaged cannot hold there.
cache_itself = pytest.mark.skipif(
    os.environ.get("ATTN_TUI_CACHED_TESTS") == "1",
    reason="tests the cache itself; the cached-loads run wraps every load in it",
)

COLUMNS = ("ts_ns", "dur_ns", "name_id", "cat_id", "kind", "ph", "lane", "depth",
           "correlation", "external_id", "stream", "source_index", "lane_start", "device_type")


def many_events(copies: int) -> list[dict]:
    body = [e for e in EVENTS if e["ph"] != "M"]
    out = [e for e in EVENTS if e["ph"] == "M"]
    for k in range(copies):
        for e in body:
            shifted = dict(e, ts=e["ts"] + k * 1000.0)
            out.append(shifted)
    return out


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def beside(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ask for the index beside the trace (ATTN_TUI_CACHE=beside), not the default."""
    monkeypatch.setenv("ATTN_TUI_CACHE", "beside")


def assert_same(a, b) -> None:
    for column in COLUMNS:
        assert np.array_equal(getattr(a, column), getattr(b, column)), column
    assert a.strings == b.strings and a.n_entries == b.n_entries
    assert [vars(x) for x in a.lanes] == [vars(x) for x in b.lanes]
    assert [vars(x) for x in a.groups] == [vars(x) for x in b.groups]
    assert a.metadata == b.metadata and a.warnings == b.warnings
    for row in range(0, len(a), max(1, len(a) // 17)):
        assert a.args(row) == b.args(row)


def test_reopen_maps_the_same_model(write_trace, user_cache):
    path = write_trace(many_events(50), schemaVersion=1)
    first = load_trace(path, min_cache_bytes=0)
    assert (cache_dirs(path)[0] / "meta.json").is_file()
    assert cache_dirs(path)[0].parent == user_cache
    second = load_trace(path, min_cache_bytes=0)
    assert isinstance(second.ts_ns, np.memmap)  # mapped, not parsed
    assert_same(first, second)
    assert_same(first, load_trace(path, use_cache=False))


def test_a_changed_file_is_never_read_stale(write_trace, user_cache):
    path = write_trace(many_events(5))
    load_trace(path, min_cache_bytes=0)
    doc = json.loads(path.read_text())
    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "added", "pid": 10,
                               "tid": 11, "ts": 99999.0, "dur": 1.0})
    path.write_text(json.dumps(doc))
    os.utime(path, ns=(1, 1))  # even with an old mtime the content hash differs
    trace = load_trace(path, min_cache_bytes=0)
    assert "added" in trace.strings


def test_a_rewrite_in_place_with_the_old_size_and_mtime_is_not_read_stale(
        write_trace, user_cache, monkeypatch):
    """Bytes changed between the first and last MiB (out of the content hash's
    reach), the size kept, the mtime put back: only the ctime tells."""
    monkeypatch.setattr("profiling.trace.cache._HEAD_TAIL", 64)  # the middle, unhashed
    path = write_trace(many_events(5))
    load_trace(path, min_cache_bytes=0)
    before = os.stat(path)
    data = path.read_bytes()
    assert data.count(b'"aten::mm"') >= 2
    at = data.index(b'"aten::mm"', len(data) // 3)
    time.sleep(0.05)  # file times come from a clock that ticks every few ms
    with path.open("r+b") as f:  # in place: same inode, same size
        f.seek(at)
        f.write(b'"aten::MM"')
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == \
        (before.st_size, before.st_mtime_ns, before.st_ino)
    assert after.st_ctime_ns != before.st_ctime_ns
    assert "aten::MM" in load_trace(path, min_cache_bytes=0).strings


@cache_itself
def test_damaged_cache_is_reported_ignored_and_rebuilt(write_trace, user_cache):
    path = write_trace(many_events(5))
    good = load_trace(path, min_cache_bytes=0)
    folder = cache_dirs(path)[0]
    (folder / "ts_ns.npy").write_bytes(b"not numpy")
    damaged = load_trace(path, min_cache_bytes=0)
    assert any("damaged cache" in w for w in damaged.warnings)
    assert np.array_equal(damaged.ts_ns, good.ts_ns)
    assert_same(good, load_trace(path, min_cache_bytes=0))  # rebuilt and valid again


def test_unwritable_place_beside_uses_the_user_cache(write_trace, user_cache, beside):
    path = write_trace(many_events(5))
    # A plain file where the sidecar folder would go: the folder cannot be made
    # there (as with a read-only folder, which root could write anyway).
    blocker = path.with_name(path.name + SUFFIX)
    blocker.write_text("in the way")
    first = load_trace(path, min_cache_bytes=0)
    assert blocker.read_text() == "in the way"
    assert (cache_dirs(path)[1] / "meta.json").is_file()
    assert_same(first, load_trace(path, min_cache_bytes=0))


def test_no_cache_writes_nothing(write_trace, user_cache):
    path = write_trace(many_events(5))
    load_trace(path, use_cache=False, min_cache_bytes=0)
    assert not any(d.exists() for d in cache_dirs(path))


@cache_itself
def test_small_traces_are_not_cached_by_default(write_trace, user_cache):
    path = write_trace(many_events(2))
    load_trace(path)
    assert not any(d.exists() for d in cache_dirs(path))


def test_gzip_trace_reopened_reads_args_lazily(write_trace, user_cache):
    path = write_trace(many_events(20), name="t.json.gz", gz=True)
    first = load_trace(path, min_cache_bytes=0)
    second = load_trace(path, min_cache_bytes=0)
    assert_same(first, second)


def test_read_only_folder_is_left_alone_even_for_root(write_trace, user_cache, beside):
    path = write_trace(many_events(5))
    os.chmod(path.parent, 0o555)
    try:
        load_trace(path, min_cache_bytes=0)
        assert not [p for p in path.parent.iterdir() if SUFFIX in p.name or "tmp" in p.name]
        assert (cache_dirs(path)[0] / "meta.json").is_file()
    finally:
        os.chmod(path.parent, 0o755)


def test_gzip_reopen_reads_args_without_decompressing(write_trace, user_cache, monkeypatch):
    import profiling.trace.reader as reader

    path = write_trace(many_events(20), name="z.json.gz", gz=True)
    first = load_trace(path, min_cache_bytes=0)
    assert (cache_dirs(path)[0] / GZIP_TEXT).is_file()

    def no_gunzip(*_: object) -> bytes:
        raise AssertionError("a reopened gzip trace must not decompress its file for args")

    monkeypatch.setattr(reader, "gunzip", no_gunzip)
    second = load_trace(path, min_cache_bytes=0)
    rows = range(0, len(first), 7)
    assert [second.args(r) for r in rows] == [first.args(r) for r in rows]


@cache_itself
def test_gzip_threshold_is_the_decompressed_size(write_trace, user_cache):
    """A gzip whose file is under the threshold but whose text is over it gets an
    index (parsing it costs its text's size); one whose text is under gets none."""
    big = write_trace(many_events(200), name="big.json.gz", gz=True)
    small = write_trace(many_events(2), name="small.json.gz", gz=True)
    text_size = len(gzip.decompress(big.read_bytes()))
    threshold = big.stat().st_size * 2
    assert text_size >= threshold > len(gzip.decompress(small.read_bytes()))
    first = load_trace(big, min_cache_bytes=threshold)
    assert (cache_dirs(big)[0] / "meta.json").is_file()
    second = load_trace(big, min_cache_bytes=threshold)
    assert isinstance(second.ts_ns, np.memmap)  # mapped from the index, not parsed
    assert_same(first, second)
    load_trace(small, min_cache_bytes=threshold)
    assert not any(d.exists() for d in cache_dirs(small))


def test_user_cache_folder_comes_from_platformdirs(tmp_path, monkeypatch):
    """Without the override, the index folder is platformdirs' user cache folder
    for attn-tui (which honours XDG_CACHE_HOME on Linux)."""
    import platformdirs

    monkeypatch.delenv("ATTN_TUI_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    trace = tmp_path / "ro" / "t.json"
    trace.parent.mkdir()
    trace.write_text("{}")
    expected = Path(platformdirs.user_cache_dir("attn-tui", appauthor=False))
    assert cache_dirs(trace)[-1].parent == expected
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "override"))
    assert cache_dirs(trace)[-1].parent == tmp_path / "override"




def test_reopen_takes_the_bounds_from_the_index(write_trace, user_cache):
    """The first start, last start and last end are kept in the index: a reopen
    knows them before anything asks (no pass over the rows), and they are the
    ones computed from the columns."""
    path = write_trace(many_events(20))
    load_trace(path, min_cache_bytes=0)
    reopened = load_trace(path, min_cache_bytes=0)
    fresh = load_trace(path, use_cache=False)
    want = {"start": fresh.start_ns, "end": fresh.end_ns_max, "last_start": fresh.last_start_ns}
    assert reopened.known_bounds() == want
    assert reopened.all_bounds() == want


@cache_itself
@pytest.mark.parametrize("change", ["start", "last_start", "end", "drop", "older index"])
def test_bounds_that_disagree_with_the_columns_are_not_taken(write_trace, user_cache, change):
    path = write_trace(many_events(20))
    load_trace(path, min_cache_bytes=0)
    meta_file = cache_dirs(path)[0] / "meta.json"
    meta = json.loads(meta_file.read_bytes())
    if change == "drop":
        del meta["bounds"]["end"]
    elif change == "older index":  # written before the bounds were kept
        del meta["bounds"]
    elif change == "end":
        meta["bounds"]["end"] = meta["bounds"]["last_start"] - 1  # before a lane's last end
    else:
        meta["bounds"][change] += 1
    meta_file.write_text(json.dumps(meta))
    reopened = load_trace(path, min_cache_bytes=0)
    assert isinstance(reopened.ts_ns, np.memmap)  # the index is still read
    assert reopened.known_bounds() == {}  # but its bounds are computed when asked
    fresh = load_trace(path, use_cache=False)
    assert reopened.all_bounds() == fresh.all_bounds()


@cache_itself
@pytest.mark.parametrize("threads", [False, True], ids=["inline", "threads"])
@pytest.mark.parametrize("column, value", [("name_id", "top"), ("kind", 200), ("dur_ns", -5),
                                           ("depth", -1), ("lane", "unsorted"),
                                           ("lane", "first below"), ("lane", "last above"),
                                           ("source_index", "top"), ("cat_id", -1)])
def test_a_column_out_of_range_is_rebuilt(write_trace, user_cache, monkeypatch, threads,
                                          column, value):
    """``cache._check``'s passes, inline and side by side on threads (as on a big
    trace): a value out of range in any column means a damaged index, rebuilt."""
    if threads:
        from profiling.trace import column_threads

        monkeypatch.setattr(column_threads, "MIN_ROWS", 0)
    path = write_trace(many_events(20))
    good = load_trace(path, min_cache_bytes=0)
    target = cache_dirs(path)[0] / f"{column}.npy"
    data = np.load(target)
    if value == "unsorted":
        data[0], data[-1] = data[-1], data[0]
    elif value == "first below":  # still in order: only its ends show it
        data[0] = -1
    elif value == "last above":
        data[-1] = len(good.lanes)
    elif value == "top":  # beyond the strings or the file's entries, in any width
        data[len(data) // 2] = np.iinfo(data.dtype).max
    else:
        data[len(data) // 2] = value
    np.save(target, data)
    damaged = load_trace(path, min_cache_bytes=0)
    assert any("damaged cache" in w for w in damaged.warnings)
    assert np.array_equal(getattr(damaged, column), getattr(good, column))  # from the file
    assert_same(good, load_trace(path, min_cache_bytes=0))  # rebuilt and valid again
