"""``load_trace``: the one entry point from a trace file to a ``Trace``."""

from __future__ import annotations

import os
from collections.abc import Callable

from profiling.trace.columns import build_trace
from profiling.trace.decode import decode_trace
from profiling.trace.model import Trace
from profiling.trace.reader import read_trace_bytes

Progress = Callable[[str, float], None]
"""Called with (stage, fraction done) as loading proceeds; stages: read, decode, build."""


def load_trace(path: str | os.PathLike[str], *, progress: Progress | None = None) -> Trace:
    """Load a Chrome/Kineto trace (.json or gzip, object or bare-array form).

    Raises ``TraceError`` (one line: what, where, what to do) for anything that
    is not a readable trace.  Repairs it can make (a file cut short, events of
    the wrong types) are kept in ``Trace.warnings``.  The file is never written.
    """
    report = progress or (lambda stage, fraction: None)
    where = os.fspath(path)
    report("read", 0.0)
    data, _size, warnings = read_trace_bytes(path)
    report("decode", 0.2)
    decoded = decode_trace(data, where)
    del data
    decoded.warnings[:0] = warnings
    report("build", 0.7)
    trace = build_trace(decoded, where)
    report("done", 1.0)
    return trace
