"""The project's own error type: what went wrong, where, and what to do about it.

Every failure a user can cause (a bad path, a broken file, an unknown option)
is raised as ``AttnTuiError`` so the command line can print it as one line and
exit with status 2, without a traceback.
"""

from __future__ import annotations


class AttnTuiError(Exception):
    """A user-facing error: ``where: what (what to do)``."""

    exit_code = 2

    def __init__(self, what: str, where: str = "", hint: str = "") -> None:
        self.what = what
        self.where = where
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.hint:
            text += f" ({self.hint})"
        return text


class TraceError(AttnTuiError):
    """A trace file that cannot be read as a trace."""


class CaptureError(AttnTuiError):
    """A capture that cannot be made (bad options, unwritable output, ...)."""
