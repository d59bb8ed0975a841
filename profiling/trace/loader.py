"""``load_trace``: the one entry point from a trace file to a ``Trace``.

A trace with an index is mapped from it (``cache``); any other is parsed
(``parse``): open (map or gunzip) -> find the event list -> cut it into chunks
of whole events -> decode chunks (on every core for big files) -> merge into
columns.  Chunks bound the memory of decoding; a chunk that cannot be cut
cleanly only costs a retry as one chunk.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from profiling.cores import usable_cores
from profiling.trace.args import ChunkedArgs
from profiling.trace.cache import GZIP_TEXT, MIN_CACHE_BYTES, read_cache, write_cache
from profiling.trace.model import Trace
from profiling.trace.reader import GZIP_MAGIC, TextSpans, check_path

Progress = Callable[[str, float], None]
"""Called with (stage, fraction done in 0..1) while loading."""

PARALLEL_MIN_BYTES = 48 << 20
"""Below this, starting worker processes costs more than it saves."""


def load_trace(
    path: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    use_cache: bool = True,
    min_cache_bytes: int = MIN_CACHE_BYTES,
) -> Trace:
    """Load a Chrome/Kineto trace (.json or gzip, object or bare-array form).

    Raises ``TraceError`` (one line: what, where, what to do) for anything that
    is not a readable trace.  Repairs it made (a file cut short, events of the
    wrong types) are listed in ``Trace.warnings``.  The file is never written;
    traces whose JSON text is ``min_cache_bytes`` or more get a sidecar index
    (see ``cache``) that the next load maps instead of parsing, unless
    ``use_cache`` is False.

    The text's size, not the file's: an 83 MB trace stored as a 3 MB gzip costs
    an 83 MB parse.  A gzip file's index is always looked for (a stat and a hash
    of at most 2 MiB of the file, less than decompressing it) and written once
    the parse knows the text's length; the gzip trailer's size field is no
    guide (modulo 4 GiB, of the last member only, absent when the file is cut).

    ``workers``: processes that decode a trace of ``PARALLEL_MIN_BYTES`` or more
    (default ``default_jobs()``: every core, or ``--jobs``); they come from one pool
    per process and map the text themselves, so loads may run in several threads.
    """
    report = progress or (lambda stage, fraction: None)
    report("read", 0.0)
    st = check_path(path)
    gzipped = _starts_with_gzip_magic(path)
    cacheable = use_cache and (gzipped or st.st_size >= min_cache_bytes)
    cache_warnings: list[str] = []
    if cacheable:
        hit = read_cache(Path(path), cache_warnings)
        if hit is not None:
            trace, meta, folder = hit
            text_file = folder / GZIP_TEXT if meta.gzipped else None
            trace.args_source = ChunkedArgs(
                TextSpans(str(path), st.st_size, st.st_mtime_ns, gzipped=meta.gzipped,
                          text_file=str(text_file) if text_file and text_file.is_file() else None),
                meta.chunk_spans,
                meta.entry_starts,
            )
            report("done", 1.0)
            return trace
    from profiling.trace.parse import parse  # here: a reopen (above) never parses

    workers = default_jobs() if workers is None else workers
    trace, spans, entry_starts, gzip_text = parse(path, report, workers, PARALLEL_MIN_BYTES)
    text_size = st.st_size if gzip_text is None else len(gzip_text)
    if cacheable and text_size >= min_cache_bytes:
        write_cache(trace, Path(path), spans, entry_starts, gzip_text is not None, gzip_text)
    trace.warnings.extend(cache_warnings)  # about this open only: not stored in the index
    report("done", 1.0)
    return trace


def _starts_with_gzip_magic(path: str | os.PathLike[str]) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError:
        return False  # the parse says why it cannot read the file


def set_default_jobs(jobs: int | None) -> None:
    """How many processes decode a big trace when ``load_trace`` is not told
    (``--jobs``); None: every core this process may use."""
    global _DEFAULT_JOBS
    _DEFAULT_JOBS = jobs


def default_jobs() -> int:
    """``set_default_jobs``'s value, else the cores this process may run on."""
    return _DEFAULT_JOBS if _DEFAULT_JOBS is not None else usable_cores()


_DEFAULT_JOBS: int | None = None
