"""Start loading the files before the app exists (no Textual here).

Importing Textual and starting the app takes about half a second; loading a big
trace takes seconds and runs mostly in worker processes.  ``attn-tui open``
therefore starts every load first and gives the app a loader that waits for
the one already running, so start-up and loading overlap and the first frame
comes as soon as the columns exist.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from tui.session import Progress, Session, error_line, load_session

THREAD_PREFIX = "attn-tui load "
"""As ``tui.commands.open.LOADER_THREAD_PREFIX``: quitting does not wait for these threads."""

BIG_BYTES = 4 << 20
"""From this size on, ``Preloads.settle`` does not wait for a file's first scan."""


class _Load:
    """One file's load on its own thread, replaying progress to whoever waits."""

    def __init__(self, path: str, no_cache: bool, load: Callable[..., Session]) -> None:
        self.path = path
        self.done = threading.Event()
        self.session: Session | None = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._last: tuple[str, float] | None = None
        self._listener: Progress | None = None
        try:
            self.big = os.stat(path).st_size >= BIG_BYTES
        except OSError:
            self.big = False  # the load says what is wrong, at once
        name = f"{THREAD_PREFIX}(early) {path}"
        self._thread = threading.Thread(
            target=self._run, args=(load, no_cache), name=name, daemon=True
        )
        self._thread.start()

    def _run(self, load: Callable[..., Session], no_cache: bool) -> None:
        try:
            self.session = load(self.path, self._progress, no_cache=no_cache)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting pane
            self.error = exc
        finally:
            self.done.set()

    def _progress(self, stage: str, fraction: float) -> None:
        with self._lock:
            self._last = (stage, fraction)
            listener = self._listener
        if listener is not None:
            listener(stage, fraction)

    def decided(self) -> bool:
        """Done, past the first checks (its first scan found the events), or big: the
        app is worth starting for such a file, and should not wait for a big one's
        first scan (a second on a GB).  If a big file fails after all, the app shows
        the error and ``open`` still exits 2 when nothing loaded."""
        with self._lock:
            last = self._last
        return self.big or self.done.is_set() or (last is not None and last != ("read", 0.0))

    def wait(self, progress: Progress | None) -> Session:
        """The session (or the load's exception), reporting progress meanwhile."""
        with self._lock:
            self._listener = progress
            last = self._last
        if progress is not None and last is not None:
            progress(*last)
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.session is not None
        return self.session


class Preloads:
    """Loads started early, one per path; ``loader`` hands each to the app once.

    A path asked for a second time (or with another cache choice) loads afresh.
    Every load's outcome is kept, so ``attn-tui open`` can tell when no file loaded
    at all: then it prints the errors and exits 2 instead of showing only errors."""

    def __init__(
        self,
        paths: list[str],
        *,
        no_cache: bool = False,
        load: Callable[..., Session] = load_session,
    ) -> None:
        self._load = load
        self._no_cache = no_cache
        self._paths = [os.fspath(p) for p in paths]
        self._started = time.monotonic()
        self._pending = {p: _Load(p, no_cache, load) for p in self._paths}
        self._early = list(self._pending.values())
        self._lock = threading.Lock()
        self._loaded: set[str] = set()
        self._failed: dict[str, str] = {}

    def loader(
        self, path: str, progress: Progress | None = None, *, no_cache: bool = False, **_: Any
    ) -> Session:
        """A ``Loader`` for the app: the early load of ``path`` if there is one."""
        with self._lock:
            early = self._pending.pop(path, None) if no_cache == self._no_cache else None
        try:
            if early is None:
                session = self._load(path, progress, no_cache=no_cache)
            else:
                session = early.wait(progress)
        except BaseException as exc:
            with self._lock:
                self._failed[path] = error_line(exc)
            raise
        with self._lock:
            self._loaded.add(path)
            self._failed.pop(path, None)
        return session

    def settle(self, within_s: float) -> None:
        """Wait (at most ``within_s`` from the start of the loads) until every early
        load is done or past its first checks: files that fail at once (a text file,
        a missing one) have failed by then, and a good file's load is on its way."""
        deadline = self._started + within_s
        while not all(load.decided() for load in self._early):
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)

    def failures(self) -> list[str] | None:
        """Every path's error line when no path loaded and every one failed, else None."""
        with self._lock:
            if self._loaded:
                return None
            lines = dict(self._failed)
        for load in self._early:
            if load.done.is_set() and load.error is not None:
                lines.setdefault(load.path, error_line(load.error))
        if any(p not in lines for p in self._paths):
            return None
        return [lines[p] for p in self._paths]
