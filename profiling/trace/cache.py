"""A sidecar index that the next open maps instead of parsing the trace again.

After a first load, the columns are written as ``.npy`` files (plus one JSON file
for strings, lanes, metadata and warnings) into a folder beside the trace, or
into the user's cache folder when the trace's folder is not writable.  Reopening
maps the columns (``np.load(mmap_mode="r")``): nothing is parsed and pages are
read only when touched.

The key is the file's size, mtime and a hash of its first and last MiB, plus
``LOADER_VERSION``: a changed file, or a loader that builds the model
differently, never reads a stale index.  A cache that cannot be read is
reported, ignored and rebuilt; one that cannot be written is skipped quietly.
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

from profiling.trace.model import Group, Lane, Trace

LOADER_VERSION = 3
"""Bump when the model or the loader changes what it produces."""

MIN_CACHE_BYTES = 4 << 20
"""Smaller traces load faster than the cache is checked; they are not cached."""

SUFFIX = ".attn-tui-cache"
_COLUMNS = (
    "ts_ns", "dur_ns", "name_id", "cat_id", "kind", "ph", "lane", "depth",
    "correlation", "external_id", "stream", "source_index", "lane_start",
)
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


def cache_key(path: Path) -> str:
    """Identity of the file's current contents, cheap to compute on any size."""
    st = path.stat()
    h = hashlib.sha256()
    h.update(f"v{LOADER_VERSION}:{st.st_size}:{st.st_mtime_ns}".encode())
    with path.open("rb") as f:
        h.update(f.read(_HEAD_TAIL))
        if st.st_size > _HEAD_TAIL:
            f.seek(max(_HEAD_TAIL, st.st_size - _HEAD_TAIL))
            h.update(f.read(_HEAD_TAIL))
    return h.hexdigest()


def cache_dirs(path: Path) -> list[Path]:
    """Where the index may live: beside the trace first, then the user cache folder.

    A folder without write permission bits is left alone even when the user
    could write it anyway (root): its owner meant it to stay as it is.
    """
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    user = _user_cache_root() / f"{digest}{SUFFIX}"
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


def _user_cache_root() -> Path:
    root = os.environ.get("ATTN_TUI_CACHE_DIR")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attn-tui"


def read_cache(path: Path, warnings: list[str]) -> tuple[Trace, _Meta] | None:
    """The cached model of ``path`` if a valid, current index exists; else None."""
    try:
        key = cache_key(path)
    except OSError:
        return None
    for folder in cache_dirs(path):
        meta_file = folder / "meta.json"
        if not meta_file.is_file():
            continue
        try:
            meta = msgspec.json.decode(meta_file.read_bytes(), type=_Meta)
            if meta.key != key:
                continue  # an index of an older version of the file: rebuilt below
            columns = {c: np.load(folder / f"{c}.npy", mmap_mode="r") for c in _COLUMNS}
            trace = _trace_from(path, meta, columns)
        except (OSError, ValueError, msgspec.DecodeError, KeyError, TypeError) as exc:
            warnings.append(f"ignored a damaged cache at {folder} ({type(exc).__name__}); rebuilt")
            continue
        return trace, meta
    return None


def _trace_from(path: Path, meta: _Meta, columns: dict[str, np.ndarray]) -> Trace:
    n = len(columns["ts_ns"])
    if any(len(columns[c]) != n for c in _COLUMNS if c != "lane_start"):
        raise ValueError("columns of different lengths")
    return Trace(
        path=str(path),
        n_entries=meta.n_entries,
        strings=meta.strings,
        lanes=[Lane(**lane) for lane in meta.lanes],
        groups=[Group(**group) for group in meta.groups],
        metadata=meta.metadata,
        warnings=list(meta.warnings),
        **cast(dict[str, Any], columns),
    )


def write_cache(trace: Trace, path: Path, spans: list[tuple[int, int]],
                entry_starts: list[int], gzipped: bool) -> Path | None:
    """Write the index atomically (temp folder, then rename); None if nowhere writable."""
    try:
        key = cache_key(path)
    except OSError:
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
    )
    for folder in cache_dirs(path):
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".attn-tui-tmp-", dir=folder.parent))
        except OSError:
            continue
        try:
            for column in _COLUMNS:
                np.save(tmp / f"{column}.npy", np.ascontiguousarray(getattr(trace, column)))
            (tmp / "meta.json").write_bytes(msgspec.json.encode(meta))
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
            os.replace(tmp, folder)
            return folder
        except (OSError, TypeError, ValueError, OverflowError, msgspec.EncodeError):
            shutil.rmtree(tmp, ignore_errors=True)
    return None
