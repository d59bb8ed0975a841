"""Has the file on disk changed since it was loaded? (pure; one ``stat`` per look)

The app shows what it loaded and never re-reads a trace behind the user's back:
a profiler writing the file again, or a user deleting it, only changes what the
app *says* (a notification once, a mark on the status line) and what it can
still read lazily (``args`` come back empty, with a note).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

POLL_SECONDS = 2.0
"""How often an open tab looks at its file (a ``stat``: nothing is read)."""


@dataclass(frozen=True)
class FileState:
    """What identifies the loaded file's contents without reading them."""

    size: int
    mtime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, path: str) -> FileState | None:
        """The file's state now; None when there is no regular file at ``path``."""
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def change(loaded: FileState | None, now: FileState | None) -> str:
    """'' (same file), 'vanished' (no file there now) or 'changed' (other contents,
    or the file was replaced by another one)."""
    if loaded is None:
        return ""  # nothing known about what was loaded: nothing to compare
    if now is None:
        return "vanished"
    return "" if now == loaded else "changed"


def change_message(name: str, what: str) -> str:
    """The notification for a change, saying what still works."""
    if what == "vanished":
        return (
            f"{name} was deleted or moved. The app keeps showing what it loaded; "
            "event args it had not read yet are no longer available."
        )
    return (
        f"{name} changed on disk since it was loaded. The app keeps showing what it "
        "loaded (args it had not read yet are no longer available); open the file "
        "again to see the new contents."
    )
