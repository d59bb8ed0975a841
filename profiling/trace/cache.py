"""A sidecar index that the next open maps instead of parsing the trace again.

After a first load, the columns are written as ``.npy`` files (plus one JSON file
for strings, lanes, metadata and warnings) into a folder in the user cache folder
(``cache_store.cache_root``), named after the trace's identity: its resolved
path, size, mtime, inode and device, and ``LOADER_VERSION``.  A touched or
rewritten trace gets a new entry (the old one is dropped when it is written);
the folder is kept under a size cap, least recently used entries first.  Nothing
is written beside the user's file unless ``ATTN_TUI_CACHE=beside`` asks for it
(then a ``FILE.attn-tui-cache`` folder beside the trace is read and written
first, and the user cache folder is the fallback for a read-only folder).
Reopening maps the columns (``np.load(mmap_mode="r")``): nothing is parsed and
pages are read only when touched.

Inside an entry, ``meta.json``'s key also hashes the first and last MiB: a file
changed without changing its size or mtime never reads a stale index.  A cache
that cannot be read is reported, ignored and rebuilt; one that cannot be
written is skipped quietly.  Writes are atomic (temp folder, then rename), and
of two processes writing one entry at once, one wins and the other's is dropped.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, cast

import msgspec
import numpy as np

from profiling.trace.cache_store import (
    ENTRY_FILE,
    SUFFIX,
    TMP_PREFIX,
    EntryInfo,
    beside_wanted,
    cache_root,
    cap_bytes,
    evict,
    folder_bytes,
    remove_entry,
    touch,
)
from profiling.trace.index_checks import (
    COLUMN_DTYPES,
    bounds_fit,
    check_layout,
    check_ranges,
    check_tables,
)
from profiling.trace.model import Group, Lane, Trace
from profiling.trace.textblocks import write_blocks

LOADER_VERSION = 17  # 8: exact (lane, ts, dur) ties by External id; 9: thread/stream split;
# 10: op_input (the input dtypes of compute and cast ops, read while decoding);
# 11: xpu_driver / privateuse1_driver calls are runtime calls (they launch kernels);
# 12: in an exact (lane, ts, dur) tie a runtime call goes after the op (row order);
# 13: a GPU event with no stream arg takes its lane's tid as its stream;
# 14: correlation, external_id, stream, source_index as int32, name_id and cat_id as
# int16, where every value of the trace fits; a gzip trace's text blocks at zlib level 3;
# 15: an old trace's record_function ranges (category Operator) are user annotations;
# 16: 2021 Kineto's GPU user annotations (category User, tid "stream N user") are
# gpu annotations on a GPU lane, not other events on a lane of their own;
# 17: the trace's bounds (first start, last start, last end) in meta.json
"""Bump when the model or the loader changes what it produces."""

MIN_CACHE_BYTES = 4 << 20
"""Smaller traces load faster than the cache is checked; they are not cached."""

__all__ = ["COLUMN_DTYPES", "GZIP_TEXT", "LOADER_VERSION", "MIN_CACHE_BYTES", "SUFFIX",
           "cache_dirs", "cache_key", "check_layout", "check_tables", "identity", "index_of",
           "read_cache", "stamp", "write_cache"]

_HEAD_TAIL = 1 << 20


class _Meta(msgspec.Struct):
    key: str
    n_entries: int
    strings: list[str]
    lanes: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    metadata: dict[str, Any]
    warnings: list[str]
    chunk_spans: list[tuple[int, int]]
    entry_starts: list[int]
    gzipped: bool
    bounds: dict[str, int] = {}
    """``Trace.all_bounds()``: none in an index written before they were kept (then a
    reopen computes them when asked, as before)."""


def cache_key(path: Path) -> str:
    """Identity of the file's current contents, cheap to compute on any size: its
    ``stamp``, and its first and last MiB."""
    st = path.stat()
    h = hashlib.sha256()
    h.update(f"v{LOADER_VERSION}:{st.st_size}:{stamp(st)}".encode())
    with path.open("rb") as f:
        h.update(f.read(_HEAD_TAIL))
        if st.st_size > _HEAD_TAIL:
            f.seek(max(_HEAD_TAIL, st.st_size - _HEAD_TAIL))
            h.update(f.read(_HEAD_TAIL))
    return h.hexdigest()


def identity(path: Path) -> str:
    """The name of ``path``'s entry: a hash of what makes it this file, as it is now
    (resolved path, size, mtime, inode, device) and of ``LOADER_VERSION``.  Cheap: one
    stat.  Raises OSError when the file cannot be stat'ed."""
    resolved = path.resolve()
    st = resolved.stat()
    text = (f"v{LOADER_VERSION}\0{resolved}\0{st.st_size}\0{stamp(st)}"
            f"\0{st.st_ino}\0{st.st_dev}")
    return f"{path_prefix(resolved)}-{_sha(text)[:24]}"


def stamp(st: os.stat_result) -> str:
    """A file's modification time and its status-change time (ctime).

    WHY both: a rewrite in place that keeps the size and puts the old mtime back
    (``cp -p`` over the file, ``touch -r``, a script's ``os.utime``) changed
    bytes between the first and last MiB unseen, and the old index was read as
    the new file's.  No program can set the ctime: every write moves it, as does a
    chmod or chown (whose only cost is one rebuild).  Git's index checks it too."""
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}"


def path_prefix(resolved: Path) -> str:
    """The part of an entry's name that depends on the path alone: the entries of
    one trace share it, so a rewritten trace's old entries are found by name."""
    return _sha(str(resolved))[:16]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def cache_dirs(path: Path) -> list[Path]:
    """Where the index may live, in the order it is looked for and written.

    By default only the user cache folder's entry for the file's identity.  With
    ``ATTN_TUI_CACHE=beside``, ``FILE.attn-tui-cache`` beside the trace first
    (when its folder is writable by intent, or the index is already there), then
    the user cache folder.  A folder without write permission bits is left alone
    even when the user could write it anyway (root): its owner meant it to stay
    as it is.  Raises OSError when the file cannot be stat'ed.
    """
    user = cache_root() / f"{identity(path)}{SUFFIX}"
    if not beside_wanted():
        return [user]
    beside = path.with_name(path.name + SUFFIX)
    if _writable_by_intent(path.parent) or beside.is_dir():
        return [beside, user]
    return [user]


def _writable_by_intent(folder: Path) -> bool:
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return bool(mode & stat.S_IWUSR) and os.access(folder, os.W_OK)


GZIP_TEXT = "text.blocks"
"""For a gzip trace, the index keeps its decompressed text as compressed 1 MiB blocks
(``textblocks``): lazy ``args`` decompress only the blocks they read, instead of the
whole file on the first click, and the copy is about the gzip's size, not the text's."""


def read_cache(path: Path, warnings: list[str]) -> tuple[Trace, _Meta, Path] | None:
    """The cached model of ``path`` if a valid, current index exists; else None.

    Also returns the index's folder (where a gzip trace's text is kept).
    """
    try:
        key = cache_key(path)
        folders = cache_dirs(path)
    except OSError:
        return None
    for folder in folders:
        meta_file = folder / "meta.json"
        if not meta_file.is_file():
            continue
        try:
            meta = msgspec.json.decode(meta_file.read_bytes(), type=_Meta)
            if meta.key != key:
                continue  # an index of an older version of the file: rebuilt below
            columns = {c: np.load(folder / f"{c}.npy", mmap_mode="r") for c in COLUMN_DTYPES}
            trace = _trace_from(path, meta, columns)
        except Exception as exc:  # numpy's header parser alone raises half a dozen types
            warnings.append(f"ignored a damaged cache at {folder} ({type(exc).__name__}); rebuilt")
            remove_entry(folder)  # out of the way of the rebuilt one (which would keep it)
            continue
        if bounds_fit(meta.bounds, trace):
            trace.know_bounds(meta.bounds)
        touch(folder)
        _set_index(trace, folder, meta.key)
        return trace, meta, folder
    return None


def index_of(trace: Trace) -> tuple[Path, str] | None:
    """The index folder a loaded trace was read from or written to, and its key; None
    for a trace with no index (small, ``--no-cache``, built in memory).  The analysis
    keeps its results there (``profiling.analysis.analysis_store``)."""
    return cast("tuple[Path, str] | None", getattr(trace, "_index_entry", None))


def is_new_index(trace: Trace) -> bool:
    """Whether ``trace``'s index was written by the load that made it (a first open),
    rather than read: its analysis results are not stored yet."""
    return bool(getattr(trace, "_index_new", False))


def _set_index(trace: Trace, folder: Path, key: str, new: bool = False) -> None:
    object.__setattr__(trace, "_index_entry", (folder, key))
    object.__setattr__(trace, "_index_new", new)


def _check(meta: _Meta, columns: dict[str, np.ndarray], lanes: list[Lane],
           groups: list[Group]) -> None:
    """ValueError unless the index is internally consistent: a damaged index (a bad
    disk, a bit flip) must be rebuilt, not crash whatever reads the model later."""
    n = check_layout(columns, lanes)
    if n:
        check_ranges(columns, len(lanes), len(meta.strings), meta.n_entries)
    check_tables(lanes, groups)
    spans, entry_starts = meta.chunk_spans, meta.entry_starts
    if len(spans) != len(entry_starts) or (entry_starts and entry_starts[0] != 0) or any(
            lo > hi for lo, hi in spans) or entry_starts != sorted(entry_starts):
        raise ValueError("chunk table damaged")


def _trace_from(path: Path, meta: _Meta, columns: dict[str, np.ndarray]) -> Trace:
    lanes = [Lane(**lane) for lane in meta.lanes]
    groups = [Group(**group) for group in meta.groups]
    _check(meta, columns, lanes, groups)
    return Trace(
        path=str(path),
        n_entries=meta.n_entries,
        strings=meta.strings,
        lanes=lanes,
        groups=groups,
        metadata=meta.metadata,
        warnings=list(meta.warnings),
        **cast(dict[str, Any], columns),
    )


def write_cache(trace: Trace, path: Path, spans: list[tuple[int, int]],
                entry_starts: list[int], gzipped: bool,
                gzip_text: bytes | None = None) -> Path | None:
    """Write the index atomically (temp folder, then rename); None if nowhere writable
    or if the index alone would be over the cache folder's size cap.  Then keeps
    the user cache folder under its cap (the entry just written is never removed)."""
    try:
        key = cache_key(path)
        folders = cache_dirs(path)
        st = path.stat()
    except OSError:
        return None
    size = sum(getattr(trace, c).nbytes for c in COLUMN_DTYPES) + len(gzip_text or b"")
    if size > cap_bytes():
        return None
    meta = _Meta(
        key=key,
        n_entries=trace.n_entries,
        strings=trace.strings,
        lanes=[dict(vars(lane)) for lane in trace.lanes],
        groups=[dict(vars(group)) for group in trace.groups],
        metadata=trace.metadata,
        warnings=trace.warnings,
        chunk_spans=spans,
        entry_starts=entry_starts,
        gzipped=gzipped,
        bounds=trace.all_bounds(),  # on columns still in memory: a reopen's would fault them in
    )
    info = EntryInfo(trace=str(path.resolve()), size=st.st_size, mtime_ns=st.st_mtime_ns)
    for folder in folders:
        written = _write_folder(folder, trace, meta, info, gzip_text)
        if written is None:
            continue
        _set_index(trace, written, key, new=True)
        if folder.parent == cache_root():
            evict(folder, path_prefix(Path(info.trace)) + "-")
        return written
    return None


def _write_folder(folder: Path, trace: Trace, meta: _Meta, info: EntryInfo,
                  gzip_text: bytes | None) -> Path | None:
    """One index folder, complete or not at all.  The rename fails when the folder
    exists: a valid index with the same key there (another process got there first)
    is kept; anything else is renamed aside and replaced."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=folder.parent))
    except OSError:
        return None
    try:
        for column in COLUMN_DTYPES:
            np.save(tmp / f"{column}.npy", np.ascontiguousarray(getattr(trace, column)))
        if gzip_text is not None:
            write_blocks(tmp / GZIP_TEXT, gzip_text)
            if folder_bytes(tmp) > cap_bytes():
                raise ValueError("the index alone is over the cache folder's cap")
        (tmp / "meta.json").write_bytes(msgspec.json.encode(meta))
        (tmp / ENTRY_FILE).write_bytes(msgspec.json.encode(info))
        if _rename_into_place(tmp, folder, meta.key):
            return folder
    except (OSError, TypeError, ValueError, OverflowError, msgspec.EncodeError):
        pass
    shutil.rmtree(tmp, ignore_errors=True)
    return None


def _rename_into_place(tmp: Path, folder: Path, key: str) -> bool:
    """Move ``tmp`` to ``folder``; True when ``folder`` then holds a current index."""
    for _attempt in range(3):
        try:
            os.rename(tmp, folder)  # atomic; fails on an existing, non-empty folder
            return True
        except OSError:
            if _holds_key(folder, key):
                shutil.rmtree(tmp, ignore_errors=True)
                touch(folder)
                return True  # written by another process meanwhile: the same index
            if not folder.exists():
                continue  # removed meanwhile: try again
            if folder.is_symlink() or not folder.is_dir():
                return False  # not an index: not ours to move
        aside = folder.with_name(f"{TMP_PREFIX}old-{os.getpid()}-{tmp.name}")
        try:
            os.rename(folder, aside)  # a stale or damaged index: out of the way
        except OSError:
            pass  # someone else moved it: try again
        else:
            shutil.rmtree(aside, ignore_errors=True)
    return False


def _holds_key(folder: Path, key: str) -> bool:
    try:
        return bool(msgspec.json.decode((folder / "meta.json").read_bytes(), type=_Meta).key == key)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return False
