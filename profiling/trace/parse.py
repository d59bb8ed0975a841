"""The parse of a first open: the trace's text -> chunks of whole events -> decoded
(on every core for big files) -> merged into columns.

``loader.load_trace`` imports this module only when it has no index to map, so a
reopen never imports the decoders (msgspec structs, the lenient reader, the event
list scanner, the process pool): their imports cost a reopen's command more time
than its work.  The job count and the size from which to decode in parallel stay
in ``loader`` (``--jobs``, ``prestart`` and ``job_index`` read them without
importing this), which hands them to ``parse``.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from profiling.errors import TraceError
from profiling.trace import shared_columns
from profiling.trace.args import ChunkedArgs
from profiling.trace.columns import build_trace
from profiling.trace.decode import Chunk, decode_chunk
from profiling.trace.model import Trace
from profiling.trace.pool import (
    Job,
    SharedText,
    SourceMoved,
    TextRef,
    discard_pool,
    get_pool,
    submit_all,
    warm,
)
from profiling.trace.reader import Source, TextSpans, open_source, release_pages
from profiling.trace.split import CHUNK_BYTES, EventsSpan, chunk_bounds, find_events, reopened
from profiling.trace.times import looks_exact_only

Progress = Callable[[str, float], None]
"""``loader.Progress`` (called with stage, fraction done in 0..1), not imported from
the loader: it imports this module when it parses (tests/test_trace_imports.py)."""


def parse(
    path: str | os.PathLike[str], report: Progress, workers: int, parallel_min_bytes: int
) -> tuple[Trace, list[tuple[int, int]], list[int], bytes | None]:
    """Parse the file itself: the model, plus where its chunks lie (for args and cache)."""
    source = open_source(path)
    try:
        parsed = _parse_source(source, report, workers, parallel_min_bytes)
    except RecursionError:
        raise TraceError(
            "JSON nested too deeply to read (about a thousand levels or more)",
            source.path,
            "profiler traces nest a few levels; this file is damaged or not a trace",
        ) from None
    _warn_if_changed(source, parsed[0].warnings)
    return parsed


def _warn_if_changed(source: Source, warnings: list[str]) -> None:
    """A file that changed while it was read (still being written?) is worth a line."""
    try:
        st = os.stat(source.path)
    except OSError:
        warnings.append("the file was removed or moved while it was read")
        return
    if (st.st_size, st.st_mtime_ns) != (source.size, source.mtime_ns):
        warnings.append(
            "the file changed while it was read (still being written?): "
            "this is what it held when reading began"
        )


def _parse_source(
    source: Source, report: Progress, workers: int, parallel_min_bytes: int
) -> tuple[Trace, list[tuple[int, int]], list[int], bytes | None]:
    if workers > 1 and len(source.text) >= parallel_min_bytes:
        warm(workers)  # likely to decode in parallel: start the workers during the scan
    span = find_events(source.text, source.start, source.path)
    if not span.quick:
        release_pages(source.text, 0, len(source.text))  # the scan touched every page
    try:
        return _decode_span(source, span, report, workers, parallel_min_bytes)
    except TraceError:
        if not span.quick:
            raise
    # The list found from its edges did not decode: the whole text decides (its error
    # for a malformed file, the same span, or the one a masked copy shows).
    span = find_events(source.text, source.start, source.path, quick=False)
    release_pages(source.text, 0, len(source.text))
    return _decode_span(source, span, report, workers, parallel_min_bytes)


def _decode_span(
    source: Source, span: EventsSpan, report: Progress, workers: int, parallel_min_bytes: int
) -> tuple[Trace, list[tuple[int, int]], list[int], bytes | None]:
    parallel = workers > 1 and span.end - span.begin >= parallel_min_bytes
    size = chunk_bytes(span.end - span.begin, workers if parallel else 1)
    bounds = chunk_bounds(source.text, span, size)
    report("decode", 0.05)
    try:
        chunks = _decode_all(source, span, bounds, workers, report, parallel_min_bytes)
    except TraceError as first:
        if not span.closed_by_guess:
            raise
        # A bare array cut short inside a list value also ends in ']': read it as open.
        span = reopened(span)
        bounds = chunk_bounds(source.text, span, size)
        try:
            chunks = _decode_all(source, span, bounds, workers, report, parallel_min_bytes)
        except TraceError:
            raise first from None
    return _build(source, span, bounds, chunks, report)


def chunk_bytes(span_bytes: int, workers: int) -> int:
    """The size to cut the event list into: ``CHUNK_BYTES`` at most (a chunk's
    columns and text are what a decoder holds at once), and for a parallel decode
    a whole number of chunks per worker.

    WHY: the decode ends when the last worker does.  62 chunks of 16 MB on 16
    workers are four rounds for 14 of them and three for 2, and the parse waits a
    fourth round for the 14 while 2 cores idle; 64 chunks of 15.6 MB are four
    rounds for every worker."""
    if workers <= 1 or span_bytes <= 0:
        return CHUNK_BYTES
    rounds = -(-span_bytes // (workers * CHUNK_BYTES))
    return max(min(CHUNK_BYTES, _MIN_CHUNK_BYTES), -(-span_bytes // (rounds * workers)))


_MIN_CHUNK_BYTES = 1 << 20  # smaller chunks cost more in overhead than they balance


def _build(
    source: Source, span: EventsSpan, bounds: list[int], chunks: list[Chunk], report: Progress
) -> tuple[Trace, list[tuple[int, int]], list[int], bytes | None]:
    entries = sum(c.n_entries for c in chunks)
    if not entries and not span.closed:
        raise TraceError(
            "file ends early, before its first complete event",
            source.path,
            "the profiler stopped while writing; capture the trace again",
        )
    if entries and sum(c.skipped for c in chunks) == entries:
        raise TraceError(
            f"JSON, but not a trace: none of its {entries} entries is an event object",
            source.path,
            "expected a Chrome trace from torch.profiler (export_chrome_trace / on_trace_ready)",
        )
    entry_starts = [0]
    for chunk in chunks[:-1]:
        entry_starts.append(entry_starts[-1] + chunk.n_entries)
    spans = [(bounds[i], chunks[i].end) for i in range(len(chunks))]
    report("build", 0.85)
    trace = build_trace(
        chunks,
        entry_starts,
        span.metadata,
        span.warnings,
        source.path,
        ChunkedArgs(_spans_of(source), spans, entry_starts),
    )
    if not span.closed and not any("cut short" in w for w in trace.warnings):
        trace.warnings.append(
            "file cut short after a complete event: every event was read"
            if span.cut_short
            else "the event list has no closing ']' (allowed by the Trace Event Format); "
            "every event was read"
        )
    if source.gzip_cut_short and not any("cut short" in w for w in trace.warnings):
        trace.warnings.append(  # only the gzip trailer (checksum and size) is missing
            "gzip stream cut short after the end of its JSON: every event was read"
        )
    gzip_text = source.text if source.gzipped and isinstance(source.text, bytes) else None
    return trace, spans, entry_starts, gzip_text


def _spans_of(source: Source) -> TextSpans:
    """Where lazy args come from: the file read again (never kept mapped), or the
    decompressed text of a gzip file."""
    text = source.text if source.gzipped and isinstance(source.text, bytes) else None
    return TextSpans(source.path, source.size, source.mtime_ns, text, source.gzipped)


def _decode_all(
    source: Source,
    span: EventsSpan,
    bounds: list[int],
    workers: int,
    report: Progress,
    parallel_min_bytes: int,
) -> list[Chunk]:
    n = len(bounds) - 1
    # Epoch-sized decimal times are read from their text; a sample says whether to
    # start that way (each chunk still checks its own numbers and falls back).
    exact = looks_exact_only(bytes(source.text[span.begin : span.begin + _SNIFF_BYTES]))
    jobs = [Job(bounds[i], bounds[i + 1], i == n - 1, not span.closed, exact) for i in range(n)]
    big = span.end - span.begin >= parallel_min_bytes
    try:
        if workers > 1 and big and n > 1:
            chunks = _decode_parallel(source, jobs, workers, report)
            if chunks is not None:
                return chunks
        return _decode_serial(source, jobs, report)
    except TraceError:
        if n == 1 or span.quick:  # a quick span is checked against the whole text first
            raise
    # A cut landed inside a string (or the file is malformed): decode as one chunk.
    return [decode_chunk(source.text, bounds[0], bounds[-1], True, source.path, not span.closed,
                         exact)]


_SNIFF_BYTES = 1 << 18


def _decode_serial(source: Source, jobs: list[Job], report: Progress) -> list[Chunk]:
    chunks = []
    exact = jobs[0].exact if jobs else False
    for k, job in enumerate(jobs):
        chunk = decode_chunk(source.text, job.lo, job.hi, job.last, source.path, job.open_end,
                             exact)
        exact = exact or chunk.exact_times  # the next chunks are likely alike
        chunks.append(chunk)
        release_pages(source.text, job.lo, job.hi)
        report("decode", 0.05 + 0.8 * (k + 1) / len(jobs))
    return chunks


def _decode_parallel(
    source: Source, jobs: list[Job], workers: int, report: Progress
) -> list[Chunk] | None:
    """Decode on the process's pool (see ``pool``); None when the workers cannot
    (the file changed under them, no room for a gzip text, a worker died): the
    caller then decodes here.  A ``TraceError`` from a chunk is raised as it is."""
    try:
        with contextlib.ExitStack() as stack:
            if isinstance(source.text, mmap.mmap):
                ref = TextRef(source.path, source.size, source.mtime_ns, source.path)
            else:  # gzip: the decompressed text, where the workers can map it
                ref = stack.enter_context(SharedText(source.text, source.path)).ref
            shared_columns.sweep()  # files of loads that were killed
            return _run_on_pool(get_pool(workers), ref, jobs, report)
    except (SourceMoved, OSError):
        return None


def _run_on_pool(
    pool: ProcessPoolExecutor, ref: TextRef, jobs: list[Job], report: Progress
) -> list[Chunk] | None:
    futures: list[Future[Chunk]] = []
    chunks: list[Chunk] = []
    try:
        futures = submit_all(pool, ref, jobs)
        for k, future in enumerate(futures):
            chunks.append(shared_columns.attach(future.result()))
            report("decode", 0.05 + 0.8 * (k + 1) / len(jobs))
        return chunks
    except BrokenProcessPool:  # a worker died (killed, out of memory): a new pool next time
        discard_pool(pool)
        return None
    finally:
        for future in futures[len(chunks) :]:  # after an error: the rest of this load's jobs
            if not future.cancel():
                future.add_done_callback(_discard_result)  # now, or once it is decoded


def _discard_result(future: Future[Chunk]) -> None:
    """Remove the memory file of a chunk decoded for a load that stopped."""
    with contextlib.suppress(Exception):  # its own error, or cancelled: no file
        shared_columns.discard(future.result())
