"""Keep the app usable when one of its parts raises: report, log, go on.

Textual ends the app on any unhandled exception, and the message loop of the
widget that raised stops for good.  For a viewer that people keep open on a
trace, one bad row or one odd event must not cost the session, so:

* ``ReportsErrors`` (a mixin for our widgets and the app) catches an exception
  while one message is handled (a key's action, a click, a custom message) or
  while the widget's lines are rendered, reports it, and carries on: the message
  is dropped, the lines show one line saying so.
* ``ReportingApp`` (a mixin for the app) turns every report, and the errors
  Textual would otherwise end the app for (compositor, timers, workers), into
  one notification naming a log file (``tui.error_log``) once the app is up.
  Errors during start-up still end the app: there is nothing usable to keep.

``ATTN_TUI_STRICT_ERRORS=1`` (set by the test suite's conftest) keeps Textual's
behaviour, so a bug in a test run still fails the test instead of becoming a
notification.

Two private Textual methods are overridden, ``MessagePump._dispatch_message``
and ``App._handle_exception``: Textual has no public hook that sees an exception
raised while a message is handled (``on_event`` sees events, not the other
messages our widgets handle) or that keeps the app from exiting on one.
They were recorded on Textual 8.2.8 (the version tests/constraints.txt pins);
tests/test_textual_compat.py fails, naming the method, the day a release changes
their signatures or stops routing errors through them, so moving the pin checks them.
Under another Textual whose methods do not look as recorded (the package allows any
8.x), the overrides are left out: bugs end the app as in plain Textual, rather than
every message failing on a changed signature.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import App
from textual.geometry import Region
from textual.message_pump import MessagePump
from textual.strip import Strip

from tui.error_log import ErrorLog

_BROKEN_STYLE = Style(color="red", bold=True)
BROKEN_NOTE = "⚠ could not draw this (logged); the app goes on"
STRICT_ENV = "ATTN_TUI_STRICT_ERRORS"


def strict() -> bool:
    """Errors end the app as in plain Textual (the test suite sets this)."""
    return os.environ.get(STRICT_ENV) == "1"


def _where(obj: Any, message: object | None = None) -> str:
    name = type(obj).__name__
    ident = getattr(obj, "id", None)
    place = f"{name}#{ident}" if ident else name
    return f"{place} handling {type(message).__name__}" if message is not None else place


def report(node: Any, exc: Exception, where: str) -> bool:
    """Hand ``exc`` to the app's ``report_error``; False when there is none to take it."""
    if strict():
        return False
    try:
        app = node.app
    except Exception:  # noqa: BLE001 - not attached to an app: nothing to report to
        return False
    reporter = getattr(app, "report_error", None)
    if reporter is None:
        return False
    reporter(exc, where)
    return True


class ReportsErrors:
    """Mixin (before the Textual class in the bases) for widgets and the app."""

    async def _dispatch_message(self, message: Any) -> None:
        try:
            await super()._dispatch_message(message)  # type: ignore[misc]
        except Exception as exc:
            if isinstance(message, (events.Compose, events.Mount)) and not _is_up(self):
                raise  # the app could not start: Textual's own report is the right one
            if not report(self, exc, _where(self, message)):
                raise

    def render_lines(self, crop: Region) -> list[Strip]:
        try:
            return super().render_lines(crop)  # type: ignore[misc]
        except Exception as exc:
            if not report(self, exc, f"{_where(self)} drawing"):
                raise
            note = Strip([Segment(BROKEN_NOTE, _BROKEN_STYLE)])
            lines = [note.crop(0, crop.width).extend_cell_length(crop.width)]
            lines += [Strip.blank(crop.width)] * (crop.height - 1)
            return lines[: crop.height]


def _is_up(node: Any) -> bool:
    try:
        return bool(getattr(node.app, "_attn_up", False))
    except Exception:  # noqa: BLE001
        return False


class ReportingApp(ReportsErrors):
    """Mixin for the App: ``report_error`` and a softer ``_handle_exception``."""

    _attn_up = False
    _error_log: ErrorLog | None = None

    async def _dispatch_message(self, message: Any) -> None:
        if isinstance(message, events.Ready):
            self._attn_up = True
        await super()._dispatch_message(message)

    def error_context(self) -> dict[str, str]:
        """What the log says about the session besides the traceback."""
        out: dict[str, str] = {}
        size = getattr(self, "size", None)
        if size is not None:
            out["terminal"] = f"{size.width}x{size.height}"
        for i, path in enumerate(getattr(self, "paths", [])):
            try:
                st = os.stat(path)
                out[f"file {i + 1}"] = f"{path} ({st.st_size} bytes, mtime {st.st_mtime_ns})"
            except OSError as exc:
                out[f"file {i + 1}"] = f"{path} ({exc.strerror or exc})"
        return out

    def report_error(self, exc: Exception, where: str) -> Path | None:
        """Log ``exc`` and, the first time it is seen, say so in a notification."""
        if self._error_log is None:
            self._error_log = ErrorLog(self.error_context)
        path, new = self._error_log.record(exc, where)
        if new:
            saved = f"details saved to {path}" if path else "no log could be written"
            self.notify(  # type: ignore[attr-defined]
                f"Unexpected error in {where}: {type(exc).__name__}: {exc}\n"
                f"The app goes on; {saved} (please attach it to a bug report).",
                title="attn-tui hit a bug",
                severity="error",
                timeout=12,
                markup=False,
            )
        return path

    def _handle_exception(self, error: Exception) -> None:
        if self._attn_up and getattr(self, "is_running", False) and not strict():
            self.report_error(error, "the app")
            return
        super()._handle_exception(error)  # type: ignore[misc]


def textual_hooks_match() -> bool:
    """Whether this Textual's overridden private methods look as they did in 8.2.8."""
    try:
        dispatch = inspect.signature(MessagePump._dispatch_message)
        handle = inspect.signature(App._handle_exception)
    except (AttributeError, TypeError, ValueError):
        return False
    return (
        list(dispatch.parameters) == ["self", "message"]
        and inspect.iscoroutinefunction(MessagePump._dispatch_message)
        and list(handle.parameters) == ["self", "error"]
        and not inspect.iscoroutinefunction(App._handle_exception)
    )


HOOKS_MATCH = textual_hooks_match()
if not HOOKS_MATCH:  # an unrecorded Textual: plain Textual behaviour (render_lines is public)
    del ReportsErrors._dispatch_message, ReportingApp._dispatch_message
    del ReportingApp._handle_exception
