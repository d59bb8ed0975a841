"""A decoding pool first made inside a running Textual app (pool.start_tracker).

Textual replaces ``sys.stderr`` with a print capture whose ``fileno()`` is -1;
multiprocessing's resource tracker passes that number to its process and its start
failed with "bad value(s) in fds_to_keep", so a trace first parsed after the app had
started (a reload, a late pool) could not be opened.  Each test starts a tracker of
its own, so that whether this process's tracker already runs does not matter."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from multiprocessing import resource_tracker

import pytest

from profiling.trace import pool


class _Capture(io.TextIOBase):
    """Like Textual's print capture: a stream without a descriptor of its own."""

    def fileno(self) -> int:
        return -1


@pytest.fixture
def fresh_tracker(monkeypatch: pytest.MonkeyPatch) -> Iterator[resource_tracker.ResourceTracker]:
    tracker = resource_tracker.ResourceTracker()
    monkeypatch.setattr(resource_tracker, "ensure_running", tracker.ensure_running)
    yield tracker
    fd, pid = getattr(tracker, "_fd", None), getattr(tracker, "_pid", None)
    if fd is not None and pid is not None:  # its process ends when its pipe closes
        os.close(fd)
        os.waitpid(pid, 0)


def test_the_tracker_starts_while_stderr_is_captured(fresh_tracker, monkeypatch) -> None:  # noqa: ANN001
    captured = _Capture()
    monkeypatch.setattr(sys, "stderr", captured)  # here: pytest sets its own before a test
    pool.start_tracker()
    assert getattr(fresh_tracker, "_pid", None) is not None  # started
    assert sys.stderr is captured  # the app's capture is back in place


def test_without_it_the_start_fails(fresh_tracker, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(sys, "stderr", _Capture())
    with pytest.raises(ValueError, match="fds_to_keep"):
        fresh_tracker.ensure_running()  # what a pool's first queue did inside the app
