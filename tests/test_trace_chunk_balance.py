"""A parallel decode cuts the event list into a whole number of chunks per worker.

The decode ends when its last worker does: 62 chunks on 16 workers left 14 of them
a fourth round while 2 idled.  ``parse.chunk_bytes`` sizes chunks so that every
worker gets as many, never above ``CHUNK_BYTES``; the cut points stay at event
starts (``chunk_bounds``), so the count is checked on a real cut of a trace text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import profiling.trace.parse as parse
from profiling.trace.reader import open_source
from profiling.trace.split import chunk_bounds, find_events
from tests.test_trace_parallel import write_synthetic


@pytest.mark.parametrize("workers", [2, 3, 4, 16])
def test_every_worker_gets_as_many_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(parse, "_MIN_CHUNK_BYTES", 4 << 10)
    source = open_source(write_synthetic(tmp_path / "t.json", seed=3, events=40_000))
    span = find_events(source.text, source.start, source.path)
    size = parse.chunk_bytes(span.end - span.begin, workers)
    assert size <= parse.CHUNK_BYTES
    chunks = len(chunk_bounds(source.text, span, size)) - 1
    assert chunks % workers == 0, (chunks, workers)
    # one chunk of CHUNK_BYTES each time would not have been a whole number of rounds
    assert (span.end - span.begin) > workers * parse.CHUNK_BYTES


def test_a_serial_decode_keeps_the_largest_chunks() -> None:
    assert parse.chunk_bytes(10**9, 1) == parse.CHUNK_BYTES
