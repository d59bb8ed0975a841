"""The parts of one long text made side by side in forked processes, written in order.

WHY: ``kernels --json`` of a reopened 1 GB trace is 160 MB of text that Python
makes from str objects (``kernels_json``): on the 16-core H200, 0.14-0.19 s of a
0.36 s command, on one core.  Its parts (chunks of instances) are independent,
but the work holds the GIL, so threads cannot share it.  Forked children can:
they start with everything already mapped and computed (the analysis, the
tables of texts), copy-on-write.  Each writes its share of the parts to an
anonymous in-memory file; the parent makes its own share meanwhile, then copies
the children's files to the output in order (``os.sendfile``: the text does not
pass through Python again).

Only where that is safe and pays; anything else makes every part here, one after
the other, and the text is the same:

- one thread in this process: a fork copies only the calling thread, so a lock
  another thread held would stay held in the child (Python 3.12 warns of it);
- ``os.fork`` and ``os.memfd_create`` (Linux);
- ``PIECES_MIN_CORES`` usable cores or more (``column_threads.pieces``), and at
  least ``MIN_PARTS_EACH`` parts per process: a fork costs milliseconds.

A child that fails leaves no trace in the output: the parent makes that share
itself, so the text is still whole, or the parent raises the child's error
itself (with its traceback under ``--debug``).  An interrupt or a closed
output kills the children before the error goes on.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import BinaryIO

from profiling.trace.column_threads import pieces

MIN_PARTS_EACH = 2
"""Fewer parts than this per process (the parent included) are not worth a fork."""

_BLOCK = 1 << 22
"""Bytes a copy reads at a time where ``os.sendfile`` cannot write to the output."""


def processes(parts: int) -> int:
    """How many processes make ``parts`` parts, this one included (1: no fork)."""
    if (not hasattr(os, "fork") or not hasattr(os, "memfd_create")
            or threading.active_count() != 1):
        return 1
    return max(1, min(pieces(), parts // MIN_PARTS_EACH))


def write_parts(make: Callable[[int], str], count: int, out: BinaryIO) -> None:
    """``out.write(make(i).encode())`` for each ``i`` in ``range(count)``, in that
    order, with shares of the parts made by forked children (``processes``).

    The first part is made before any fork, so the children inherit whatever
    it fills (cached tables of texts).  ``make`` must be a pure function of
    ``i`` and of data already in memory: a child's changes never reach the
    parent."""
    if count == 0:
        return
    out.write(make(0).encode())
    rest = range(1, count)
    n = processes(len(rest))
    if n < 2:
        for i in rest:
            out.write(make(i).encode())
        return
    cuts = [rest.start + len(rest) * k // n for k in range(n + 1)]
    shares = [range(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    out.flush()  # nothing buffered here may be written again by a child
    children: list[tuple[int, int]] = []
    try:
        for share in shares[1:]:
            children.append(_fork(make, share))
        for i in shares[0]:
            out.write(make(i).encode())
        for k, (pid, fd) in enumerate(children):
            _, status = os.waitpid(pid, 0)
            children[k] = (0, fd)  # reaped
            if os.waitstatus_to_exitcode(status) != 0:
                for i in shares[k + 1]:  # the same text, or the error itself, here
                    out.write(make(i).encode())
            else:
                out.flush()
                _copy(fd, os.lseek(fd, 0, os.SEEK_END), out)
    finally:
        _end(children)


def _fork(make: Callable[[int], str], share: Sequence[int]) -> tuple[int, int]:
    """A child that writes the parts of ``share`` to a new in-memory file, and exits:
    its pid and the file."""
    fd = os.memfd_create("attn-tui-part", os.MFD_CLOEXEC)
    try:
        pid = os.fork()
    except BaseException:
        os.close(fd)
        raise
    if pid == 0:  # the child: never returns, never runs the parent's exit handlers
        code = 1
        try:
            for i in share:
                data = memoryview(make(i).encode())
                while data:
                    data = data[os.write(fd, data):]
            code = 0
        except BaseException:  # the parent makes the share itself
            pass
        finally:
            os._exit(code)
    return pid, fd


def _copy(fd: int, size: int, out: BinaryIO) -> None:
    """The first ``size`` bytes of file ``fd`` to ``out``: by ``os.sendfile`` where the
    output is a file, a pipe or a device, else read and written in blocks."""
    done = 0
    try:
        target = out.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        target = -1
    while target >= 0 and done < size:
        try:
            done += os.sendfile(target, fd, done, size - done)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise  # a closed pipe, a full disk: the output's own error
            target = -1
    while done < size:
        block = os.pread(fd, min(_BLOCK, size - done), done)
        out.write(block)
        done += len(block)


def _end(children: list[tuple[int, int]]) -> None:
    """Every child that is still running killed and reaped, and every file closed."""
    for pid, fd in children:
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        os.close(fd)
