"""Files written whole or not at all: a temp file beside the target, then ``os.replace``.

Capture's traces and manifests and ``export``'s Parquet files all go through here,
so a crash or Ctrl+C never leaves half a file under the user's name, and a finished
file gets a normal file's mode (``mkstemp`` makes 0600).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write_with(path: Path | str, write: Callable[[str], None]) -> None:
    """Let ``write(tmp)`` fill a temp file beside ``path``, then rename it to ``path``;
    on any failure the temp file is removed and ``path`` is left as it was."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole, synced to disk before the rename."""

    def write(tmp: str) -> None:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    atomic_write_with(path, write)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
