"""A merged job kept as an index of its own, so a reopen maps one index instead of
loading every rank and merging them again.

A job's first open parses its ranks (``job_index``) and merges them
(``job_merge``): on eight 1 GB ranks the merge alone copies ~2 GB of columns, and
every reopen did it again after mapping eight rank indexes.  Once merged, the job's
columns, lanes, groups, strings and each rank's place are written here, as one
entry of the user cache folder (``profiling.trace.cache_store``: the same folder,
cap, ``entry.json`` stamp and least-recently-used eviction as a trace's index;
the folder's name starts with ``job-`` so it never meets a trace's).  The next open
of the same ranks with the same alignment maps its columns (``mmap_mode="r"``):
nothing is parsed, copied or re-interned.

Never stale: the entry's name hashes each rank's identity (resolved path, size,
mtime, inode, device), the alignment and the versions (``LOADER_VERSION``,
``JOB_INDEX_VERSION``), and its ``meta.json`` holds a key that also hashes each
rank's first and last MiB (``cache.cache_key``, as a trace's index does); any
difference and the entry is ignored and rewritten.  Never fatal: an entry that
cannot be read is removed and the job merged as before; one that cannot be
written is skipped.  Atomic: written in a temp folder, then renamed.

``args`` are not copied: each rank's are read on first use through the rank's own
index (``load_trace``, a map of it), as the merged trace of a first open does.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from profiling.analysis.job_merge import (
    JOB_ATTR,
    Job,
    JobArgs,
    JobRank,
    JobTrace,
    on_threads,
)
from profiling.trace.cache import LOADER_VERSION, MIN_CACHE_BYTES, cache_key, stamp
from profiling.trace.cache_store import (
    ENTRY_FILE,
    SUFFIX,
    TMP_PREFIX,
    EntryInfo,
    cap_bytes,
    evict,
    remove_entry,
    touch,
)
from profiling.trace.cache_store import cache_root as _cache_root
from profiling.trace.index_checks import (
    COLUMN_DTYPES,
    check_layout,
    check_ranges,
    check_tables,
)
from profiling.trace.model import Group, Lane, Trace

JOB_INDEX_VERSION = 4
"""Bump when the merge (``job_merge``) or this store changes what a job holds."""

PREFIX = "job-"
MIN_JOB_BYTES = MIN_CACHE_BYTES
"""Jobs whose rank files are smaller in all merge faster than an entry is checked."""
COLUMNS = COLUMN_DTYPES
"""The merged trace's columns and their dtypes (a trace index's), each one ``.npy`` file."""


class _Meta(msgspec.Struct):
    key: str
    n_entries: int
    strings: list[str]
    lanes: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    metadata: dict[str, Any]
    warnings: list[str]
    ranks: list[dict[str, Any]]
    alignment: str
    alignment_note: str
    world_size: int | None
    backend: str
    bounds: tuple[int, int]
    drawn_depths: list[int] | None = None  # JobTrace.drawn_depths; None: not stored


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def job_prefix(paths: Sequence[str], alignment: str) -> str:
    """The part of an entry's name that depends on the ranks' paths and the alignment
    alone: an older entry of the same job (a rank rewritten since) shares it."""
    names = "\0".join([alignment, *(str(Path(p).resolve()) for p in paths)])
    return f"{PREFIX}{_sha(names)[:16]}-"


def job_folder(paths: Sequence[str], alignment: str) -> Path:
    """Where the job of ``paths`` (in rank order) aligned on ``alignment`` is kept.
    One stat per rank.  Raises OSError when a rank cannot be stat'ed."""
    parts = [f"v{LOADER_VERSION}.{JOB_INDEX_VERSION}", alignment]
    for p in (Path(p).resolve() for p in paths):
        st = p.stat()
        parts.append(f"{p}\0{st.st_size}\0{stamp(st)}\0{st.st_ino}\0{st.st_dev}")
    name = f"{job_prefix(paths, alignment)}{_sha(chr(1).join(parts))[:24]}{SUFFIX}"
    return _cache_root() / name


def content_key(paths: Sequence[str], alignment: str, parallel: bool = True) -> str:
    """The key ``meta.json`` must hold: every rank's ``cache_key`` (its size, mtime,
    first and last MiB and ``LOADER_VERSION``), the alignment and this version.
    ``parallel``: hash on threads (hashlib frees the GIL); never from the writer,
    which may run on after the interpreter began to shut down, when no thread pool
    takes work any more."""
    if parallel:
        keys = on_threads(lambda p: cache_key(Path(p)), list(paths))
    else:
        keys = [cache_key(Path(p)) for p in paths]
    return _sha("\1".join([f"job{JOB_INDEX_VERSION}", alignment, *keys]))


class LazyRankArgs:
    """One rank's ``args``, read through its own index on first use (a map of it; a
    parse only if that index has been evicted meanwhile)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._source: Any = None
        self._failed = False

    def _get(self) -> Any:
        with self._lock:
            if self._source is None and not self._failed:
                from profiling.trace import load_trace

                try:
                    self._source = load_trace(self.path).args_source
                except Exception:  # noqa: BLE001 - args are shown as empty, not fatal
                    self._failed = True
            return self._source

    def args(self, entry: int) -> dict[str, Any]:
        source = self._get()
        return source.args(entry) if source is not None else {}

    def args_many(self, entries: list[int]) -> list[dict[str, Any]]:
        source = self._get()
        return source.args_many(entries) if source is not None else [{} for _ in entries]


def read_job(paths: Sequence[str], alignment: str, key: str) -> Job | None:
    """The stored job of ``paths`` (rank order) on ``alignment``, its trace named
    ``key``; None when there is no current entry (a damaged one is removed)."""
    try:
        folder = job_folder(paths, alignment)
        meta_bytes = (folder / "meta.json").read_bytes()
    except OSError:
        return None
    try:
        meta = msgspec.json.decode(meta_bytes, type=_Meta)
        if meta.key != content_key(paths, alignment):
            return None
        columns = {c: np.load(folder / f"{c}.npy", mmap_mode="r") for c in COLUMNS}
        job = _job_from(meta, columns, paths, key)
    except OSError:
        return None
    except Exception:  # noqa: BLE001 - numpy's header parser alone raises half a dozen types
        remove_entry(folder)
        return None
    touch(folder)
    object.__setattr__(job.trace, "_index_entry", (folder, meta.key))  # analysis_store
    return job


def _job_from(meta: _Meta, columns: dict[str, np.ndarray], paths: Sequence[str],
              key: str) -> Job:
    lanes = [Lane(**lane) for lane in meta.lanes]
    groups = [Group(**group) for group in meta.groups]
    ranks = [JobRank(r["rank"], r["path"], r["offset_ns"], tuple(r["rows"]), tuple(r["lanes"]),
                     tuple(r["groups"]), tuple(r["entries"]), r["metadata"])
             for r in meta.ranks]
    check(meta, columns, lanes, groups, ranks)
    sources = [LazyRankArgs(r.path) for r in ranks]
    trace = JobTrace(path=key, n_entries=meta.n_entries, strings=meta.strings, lanes=lanes,
                  groups=groups, metadata=meta.metadata, warnings=list(meta.warnings),
                  args_source=JobArgs(sources, [r.entries[0] for r in ranks]),
                  **columns)  # type: ignore[arg-type]
    trace.set_bounds(meta.bounds)
    depths = meta.drawn_depths
    if depths is not None and len(depths) == len(lanes) and all(d >= 1 for d in depths):
        trace.set_drawn_depths(depths)  # else computed when asked
    job = Job(trace, ranks, meta.alignment, meta.alignment_note, meta.world_size, meta.backend)
    object.__setattr__(trace, JOB_ATTR, job)
    return job


def check(meta: _Meta, columns: dict[str, np.ndarray], lanes: list[Lane], groups: list[Group],
          ranks: list[JobRank]) -> None:
    """ValueError unless the entry is consistent (a bad disk must mean a re-merge, not
    a crash later).  The passes over the columns run on threads (numpy releases the
    GIL), so 25 M rows cost about what one rank's index check costs."""
    n = check_layout(columns, lanes)
    ends = [r.rows[1] for r in ranks]
    if not ranks or ends[-1] != n or [r.rows[0] for r in ranks] != [0, *ends[:-1]]:
        raise ValueError("ranks do not cover the rows")
    check_ranges(columns, len(lanes), len(meta.strings), meta.n_entries)
    check_tables(lanes, groups)


def write_job(job: Job, paths: Sequence[str]) -> Path | None:
    """Write ``job`` (merged from ``paths``, in rank order) as an entry; None if it was
    not written (nowhere writable, over the cap, a rank changed meanwhile)."""
    trace = job.trace
    try:
        folder = job_folder(paths, job.alignment)
        key = content_key(paths, job.alignment, parallel=False)
        size = sum(int(getattr(trace, c).nbytes) for c in COLUMNS)
        total = sum(os.stat(p).st_size for p in paths)
        mtime = max(os.stat(p).st_mtime_ns for p in paths)
        if size > cap_bytes():
            return None
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=folder.parent))
    except OSError:
        return None
    meta = _Meta(key=key, n_entries=trace.n_entries, strings=trace.strings,
                 lanes=[dict(vars(lane)) for lane in trace.lanes],
                 groups=[dict(vars(group)) for group in trace.groups],
                 metadata=trace.metadata, warnings=trace.warnings,
                 ranks=[asdict(r) for r in job.ranks], alignment=job.alignment,
                 alignment_note=job.alignment_note, world_size=job.world_size,
                 backend=job.backend, bounds=_bounds(trace),
                 drawn_depths=trace.drawn_depths() if isinstance(trace, JobTrace) else None)
    try:
        for column in COLUMNS:
            np.save(tmp / f"{column}.npy", np.ascontiguousarray(getattr(trace, column)))
        (tmp / "meta.json").write_bytes(msgspec.json.encode(meta))
        info = EntryInfo(trace=os.path.abspath(trace.path), size=total, mtime_ns=mtime)
        (tmp / ENTRY_FILE).write_bytes(msgspec.json.encode(info))
        if content_key(paths, job.alignment, parallel=False) != key:  # a rank changed meanwhile
            raise ValueError("a rank changed")
        if folder.exists():
            remove_entry(folder)
        os.rename(tmp, folder)
    except (OSError, TypeError, ValueError, OverflowError, msgspec.EncodeError):
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    evict(folder, job_prefix(paths, job.alignment))
    # the trace just written is the entry's: analysis parts computed from now on (the
    # app's links and regions, after the first frame) are kept there for the reopen
    object.__setattr__(trace, "_index_entry", (folder, key))
    return folder


def _bounds(trace: Trace) -> tuple[int, int]:
    if isinstance(trace, JobTrace):
        return trace.bounds()
    return trace.start_ns, trace.end_ns_max


_writers: list[threading.Thread] = []


def write_in_background(job: Job, paths: Sequence[str]) -> threading.Thread | None:
    """``write_job`` on a thread of its own (not a daemon: a process that exits right
    after waits for the entry to be complete), so the first frame does not wait for
    ~2 GB of columns to be written.  None for a job under ``MIN_JOB_BYTES``."""
    try:
        if sum(os.stat(p).st_size for p in paths) < MIN_JOB_BYTES:
            return None
    except OSError:
        return None
    _bounds(job.trace)  # here, on threads: the writer may outlive the main thread
    if isinstance(job.trace, JobTrace):
        job.trace.drawn_depths()  # likewise (the timeline asks for them next anyway)
    thread = threading.Thread(target=write_job, args=(job, list(paths)),
                              name="attn-tui job index", daemon=False)
    thread.start()
    _writers.append(thread)
    return thread


def wait_for_writes() -> None:
    """Wait for every entry this process is writing (tests, the bench)."""
    while _writers:
        _writers.pop().join()
