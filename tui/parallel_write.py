"""A long listing's parts made side by side by forked workers, written in order.

WHY: a reopened ``kernels --json`` of a 1 GB trace writes 162 MB of text, and
making it (Python joins of NumPy-picked pieces, one core) was half of the
command: on the 16-core H200 0.12-0.19 s of about 0.3 s; with 8 workers it is
0.05 s.  The parts are independent once the listing's columns are made, and the
columns are mapped or computed before the fork, so each worker reads them
without a copy.

Round robin: worker ``k`` of ``W`` makes parts ``k``, ``k + W``, ... and writes
each when the one before it is written, a byte handed
around a ring of pipes saying so.  At most one part per worker is held at once,
and the text reaches stdout as it comes (a ``| head`` sees it early, a pipe is
never overtaken).  A worker that dies closes its end of the ring: the next one
reads end-of-file and gives up, and so on round the ring, so nobody waits forever
and the parent, which reaps every child, reports it.

A part is text, or its bytes already where the stream writes UTF-8 (``utf8_errors``
says so): the text listing makes its parts as bytes, piece by piece, cheaper than
encoding each part's text whole.

Only where forking is safe and cheap: Linux, no thread but the main one (a fork
copies no other thread; a lock one of them held would stay held in the child),
and a real file descriptor for stdout.  Elsewhere the parts are made and written
one after the other, the same text.
"""

from __future__ import annotations

import codecs
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TextIO

MAX_WORKERS = 12
"""On the 16-core H200 (``bench/kernels_workers.py`` on a 1 GB trace, medians of 4,
2026-12-03): ``kernels --json`` 72.6 ms with 4 workers, 56.5 with
8, 53.9 with 12, 58.7 with 16; as text 101, 73.8, 66.5 and 71.1 ms.  The parts are
written one after the other, so each worker added buys less, and each fork costs a
little."""

_BROKEN_PIPE = 3
_PREDECESSOR_GONE = 4
_FAILED = 1


Part = Callable[[], str | bytes]
"""A part's maker: its text, or that text already encoded as ``out`` would encode it
(``utf8_errors``: the parts are UTF-8 bytes only where ``out`` writes UTF-8)."""


def write_parts(parts: Sequence[Part], jobs: int, out: TextIO | None = None) -> None:
    """Write each part's text to ``out`` (stdout), in order; with ``jobs`` > 1 and
    more than one part, made by up to ``jobs`` processes (``MAX_WORKERS`` at most).
    Raises ``BrokenPipeError`` when the reader of ``out`` went away."""
    out = sys.stdout if out is None else out
    workers = min(jobs, len(parts), MAX_WORKERS)
    fd = _fork_target(out) if workers > 1 else None
    if fd is None:
        for part in parts:
            data = part()
            if isinstance(data, bytes):  # what the text before it says comes first
                out.flush()
                out.buffer.write(data)
            else:
                out.write(data)
        return
    out.flush()  # what the parent wrote before must come first, and only once
    _Ring(parts, workers, fd, out.encoding, out.errors or "strict").run()


def utf8_errors(out: TextIO | None = None) -> str | None:
    """``out``'s (stdout's) error handler when its parts may come as UTF-8 bytes: it
    writes UTF-8 to a binary buffer beneath.  None otherwise (a ``StringIO``, another
    encoding: the parts stay text and ``out`` encodes them)."""
    out = sys.stdout if out is None else out
    try:  # "UTF8", "utf_8", "u8" ...; not "utf-8-sig": each part would get a BOM
        utf8 = codecs.lookup(getattr(out, "encoding", None) or "").name == "utf-8"
    except LookupError:
        utf8 = False
    if not utf8 or not hasattr(out, "buffer"):
        return None
    return getattr(out, "errors", None) or "strict"


def _fork_target(out: TextIO) -> int | None:
    """``out``'s file descriptor when the parts may be made by forked workers."""
    if not sys.platform.startswith("linux"):
        return None
    from profiling.trace.column_threads import close_pool

    close_pool()  # the analysis' idle threads: none may be copied into a child
    if threading.active_count() > 1:  # another thread at work: nothing is forked
        return None
    try:
        return out.fileno()
    except (AttributeError, OSError, ValueError):  # io.StringIO, a closed stream
        return None


class _Ring:
    """The workers of one listing: ``pipes[k]`` carries worker ``k``'s "written"
    to worker ``k + 1`` (mod ``workers``)."""

    def __init__(self, parts: Sequence[Part], workers: int, fd: int,
                 encoding: str, errors: str) -> None:
        self.parts, self.workers, self.fd = parts, workers, fd
        self.encoding, self.errors = encoding, errors
        self.pipes = [os.pipe() for _ in range(workers)]
        self.open = {end for pipe in self.pipes for end in pipe}

    def run(self) -> None:
        """Fork workers ``0 .. W-2``, work as the last one, reap every child; raise
        what went wrong.

        WHY the parent last: each fork copies the parent's page tables (2.5-3.5 ms
        on a reopened 1 GB trace, 2-core VM), one after the other.  Worker ``k``
        starts on part ``k`` as soon as it is forked, so the first parts are made
        while the parent is still forking; a parent that made part 0 itself would
        start it only after its last fork, and every part waits for part 0."""
        children: dict[int, int] = {}
        last = self.workers - 1
        try:
            for k in range(last):
                pid = os.fork()
                if pid == 0:
                    os._exit(self._child(k))
                children[pid] = k
            own = self._work_as(last)
        finally:
            self._close(*self.open)  # a child waiting on the parent reads EOF and stops
            codes = _reap(children)
        if own == _BROKEN_PIPE or _BROKEN_PIPE in codes.values():
            raise BrokenPipeError
        failed = [k for k, code in sorted(codes.items()) if code not in (0, _PREDECESSOR_GONE)]
        if failed:  # (the workers after a failed one stop with _PREDECESSOR_GONE)
            raise RuntimeError(f"worker {failed[0]} making the listing failed (exit status "
                               f"{codes[failed[0]]}); with --jobs 1 it is made in this "
                               "process, where --debug shows why")

    def _child(self, k: int) -> int:
        """Worker ``k``'s exit status (never returns into the parent's code)."""
        try:
            return self._work_as(k)
        except BaseException:  # noqa: BLE001 - a child must reach os._exit, whatever happens
            return _FAILED

    def _work_as(self, k: int) -> int:
        """Make and write worker ``k``'s parts in turn; 0, or why it stopped.  Every
        end of the ring but its own two is closed first, so that when a worker dies,
        the one after it reads end-of-file instead of waiting."""
        before = self.pipes[(k - 1) % self.workers][0]
        after = self.pipes[k][1]
        self._close(*(self.open - {before, after}))
        n = len(self.parts)
        for i in range(k, n, self.workers):
            made = self.parts[i]()
            data = made.encode(self.encoding, self.errors) if isinstance(made, str) else made
            if i > 0 and os.read(before, 1) == b"":
                return _PREDECESSOR_GONE
            try:
                _write_all(self.fd, data)
            except BrokenPipeError:
                return _BROKEN_PIPE
            if i + 1 < n:
                try:
                    os.write(after, b".")
                except BrokenPipeError:  # the next worker is gone: it says why
                    return _PREDECESSOR_GONE
        return 0

    def _close(self, *ends: int) -> None:
        for end in ends:
            self.open.discard(end)
            os.close(end)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _reap(children: dict[int, int]) -> dict[int, int]:
    """Wait for every child; each worker's exit status by worker number."""
    codes = {}
    for pid, k in children.items():
        _, status = os.waitpid(pid, 0)
        codes[k] = os.waitstatus_to_exitcode(status)
    return codes
