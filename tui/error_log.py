"""Unexpected errors, written where a user can find them for a bug report (pure).

An error inside the app must not end the user's session (the app says what
happened and goes on), and it must not vanish either: its traceback, with the
versions and the files that were open, goes to a log file under the user's
state folder, and the notification names that file.  One file per distinct
error (same type, message and place); repeats are counted in it, not rewritten.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

LOG_DIR_ENV = "ATTN_TUI_LOG_DIR"
"""Overrides where error logs go (tests; a user who wants them elsewhere)."""

MAX_REPEATS_LOGGED = 50
_PACKAGES = ("attn-tui", "textual", "rich", "numpy", "msgspec")


def log_dirs() -> list[Path]:
    """Where logs may go, best first: ``$ATTN_TUI_LOG_DIR``, else the platform's user
    log folder (platformdirs: ``~/.local/state/attn-tui/log`` on Linux, honouring
    ``$XDG_STATE_HOME``; ``~/Library/Logs/attn-tui`` on macOS; ``%LOCALAPPDATA%``
    on Windows), else the temp folder (a home that cannot be written)."""
    root = os.environ.get(LOG_DIR_ENV)
    if root:
        return [Path(root)]
    from platformdirs import user_log_dir

    user = getattr(os, "getuid", lambda: "user")()
    fallback = Path(tempfile.gettempdir()) / f"attn-tui-logs-{user}"
    return [Path(user_log_dir("attn-tui", appauthor=False)), fallback]


def signature(exc: BaseException, where: str) -> str:
    """What makes two errors the same one: type, message, place and the raising line."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}|{str(exc)[:200]}|{where}|{last}"


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"Python {platform.python_version()}", platform.platform()]
    for name in _PACKAGES:
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name} (not installed)")
    return " · ".join(parts)


def report_text(exc: BaseException, where: str, context: dict[str, str]) -> str:
    """The log's text: what, where, versions, the app's context, the traceback."""
    lines = [
        "attn-tui error report (attach this file to a bug report)",
        f"when: {time.strftime('%Y-%m-%d %H:%M:%S %z')}",
        f"where: {where}",
        f"error: {type(exc).__name__}: {exc}",
        f"versions: {_versions()}",
        f"command: {' '.join(sys.argv)}",
    ]
    lines += [f"{key}: {value}" for key, value in context.items()]
    lines += ["", "traceback:"]
    lines += traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "\n".join(line.rstrip("\n") for line in lines) + "\n"


class ErrorLog:
    """Writes one log file per distinct error; says where it went."""

    def __init__(self, context: Callable[[], dict[str, str]] | None = None) -> None:
        self._context = context or dict
        self._files: dict[str, Path | None] = {}
        self._repeats: dict[str, int] = {}

    def record(self, exc: BaseException, where: str) -> tuple[Path | None, bool]:
        """Log ``exc``; returns (the log file or None if none could be written,
        whether this error is new: repeats are counted, not notified again)."""
        key = signature(exc, where)
        if key in self._files:
            self._repeats[key] = count = self._repeats.get(key, 0) + 1
            path = self._files[key]
            if path is not None and count <= MAX_REPEATS_LOGGED:
                _append(path, f"repeated ({count}) at {time.strftime('%H:%M:%S')}\n")
            return path, False
        try:
            context = self._context()
        except Exception as ctx_exc:  # noqa: BLE001 - the report matters more than its context
            context = {"context": f"unavailable ({type(ctx_exc).__name__}: {ctx_exc})"}
        path = _write(report_text(exc, where, context))
        self._files[key] = path
        return path, True


def _write(text: str) -> Path | None:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in log_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(
                prefix=f"error-{stamp}-{os.getpid()}-", suffix=".log", dir=folder
            )
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
            return Path(name)
        except OSError:
            continue
    return None


def _append(path: Path, text: str) -> None:
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        pass
