"""The folder that holds every trace's index: where it is, its cap, what is in it.

Each index is one folder ``<digest>.attn-tui-cache`` in the user cache folder,
named after the trace's identity (see ``cache.identity``).  Its ``entry.json``
says which trace it indexes; that file's mtime is the access stamp, touched on
every open, so the folder can be kept under a size cap by removing whole
entries, least recently used first.  An entry is removed by renaming it aside
first (one atomic step) and deleting it after, so a reader never sees half of
one; a process that has an entry's columns mapped keeps reading them (POSIX
keeps a deleted file's pages), and the entry just written is never the one
removed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import msgspec
import platformdirs

SUFFIX = ".attn-tui-cache"
ENTRY_FILE = "entry.json"
TMP_PREFIX = ".attn-tui-tmp-"
OLD_PREFIX = ".attn-tui-old-"
DEFAULT_CAP_BYTES = 10 << 30
"""10 GiB: a few 1 GB traces' indexes (each at most ~0.3x its text) and many small ones."""

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class EntryInfo(msgspec.Struct):
    """What ``entry.json`` records: the trace an index belongs to, as it was when indexed."""

    trace: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Entry:
    """One index folder as found on disk (for eviction and ``attn-tui cache --info``)."""

    folder: Path
    trace: str | None
    bytes: int
    last_used: float


_warned: set[str] = set()
"""The settings already warned about in this process (one line each, not one per load)."""


def _warn_once(var: str, value: str, accepted: str, using: str) -> None:
    """A setting that cannot be used says so once on stderr: silently ignoring a typo
    leaves the user believing it took effect; failing every load for it is worse."""
    if var in _warned:
        return
    _warned.add(var)
    sys.stderr.write(f"attn-tui: {var}={value!r} ignored ({accepted}); using {using}\n")


def default_root() -> Path:
    """The platform's user cache folder for attn-tui."""
    return Path(platformdirs.user_cache_dir("attn-tui", appauthor=False))


def dir_setting_problem() -> str | None:
    """``ATTN_TUI_CACHE_DIR`` when it names something that exists and is not a folder."""
    root = os.environ.get("ATTN_TUI_CACHE_DIR")
    return root if root and os.path.exists(root) and not os.path.isdir(root) else None


def cache_root() -> Path:
    """``ATTN_TUI_CACHE_DIR`` (tests and CI set it), else the platform's user cache
    folder for attn-tui (``$XDG_CACHE_HOME/attn-tui`` or ``~/.cache/attn-tui`` on
    Linux, ``~/Library/Caches/attn-tui`` on macOS, the local app data on Windows).
    A setting naming a file warns once and the default folder is used."""
    root = os.environ.get("ATTN_TUI_CACHE_DIR")
    bad = dir_setting_problem()
    if bad is not None:
        _warn_once("ATTN_TUI_CACHE_DIR", bad, "it is a file; it takes a folder",
                   str(default_root()))
    elif root:
        return Path(root)
    return default_root()


def beside_wanted() -> bool:
    """True when ``ATTN_TUI_CACHE=beside`` asks for indexes next to the traces."""
    value = os.environ.get("ATTN_TUI_CACHE", "")
    mode = value.strip().lower()
    if mode not in ("", "beside"):
        _warn_once("ATTN_TUI_CACHE", value, "accepted: beside, or unset",
                   "the user cache folder")
    return mode == "beside"


def parse_size(text: str) -> int:
    """Bytes from ``10G``, ``500M``, ``64k``, ``1.5GiB`` or a plain number; ValueError else."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([kmgt]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (expected e.g. 10G, 500M or a number of bytes)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def cap_bytes() -> int:
    """The folder's size cap: ``ATTN_TUI_CACHE_MAX`` (e.g. ``2G``), else 10 GiB.
    A value that cannot be read warns once and falls back to the default rather than
    failing a load."""
    text = os.environ.get("ATTN_TUI_CACHE_MAX")
    if text:
        try:
            return parse_size(text)
        except ValueError:
            _warn_once("ATTN_TUI_CACHE_MAX", text,
                       "accepted: a size such as 10G, 500M, 1.5GiB or a number of bytes",
                       "10G")
    return DEFAULT_CAP_BYTES


def touch(folder: Path) -> None:
    """Stamp an entry as used now (its place in the least-recently-used order)."""
    try:
        os.utime(folder / ENTRY_FILE)
    except OSError:
        pass  # a read-only cache still serves reads


def folder_bytes(folder: Path, depth: int = 1) -> int:
    """Bytes of the files in ``folder`` and in its subfolders ``depth`` levels down
    (an index keeps its analysis results one level down, ``analysis_store``)."""
    total = 0
    try:
        with os.scandir(folder) as it:
            for item in it:
                try:
                    if depth > 0 and item.is_dir(follow_symlinks=False):
                        total += folder_bytes(Path(item.path), depth - 1)
                    else:
                        total += item.stat(follow_symlinks=False).st_size
                except OSError:
                    pass
    except OSError:
        pass
    return total


def list_entries(root: Path | None = None) -> list[Entry]:
    """Every index in the cache folder, least recently used first."""
    root = cache_root() if root is None else root
    found: list[Entry] = []
    try:
        folders = [p for p in root.iterdir() if p.name.endswith(SUFFIX) and p.is_dir()]
    except OSError:
        return []
    for folder in folders:
        trace: str | None = None
        try:
            stamp = folder / ENTRY_FILE
            last_used = stamp.stat().st_mtime
            trace = msgspec.json.decode(stamp.read_bytes(), type=EntryInfo).trace
        except (OSError, msgspec.DecodeError):
            try:
                last_used = folder.stat().st_mtime
            except OSError:
                continue  # removed meanwhile by another process
        found.append(Entry(folder, trace, folder_bytes(folder), last_used))
    found.sort(key=lambda e: (e.last_used, e.folder.name))
    return found


def remove_entry(folder: Path) -> bool:
    """Rename the entry aside, then delete it: readers see all of it or none."""
    aside = folder.with_name(f"{OLD_PREFIX}{uuid.uuid4().hex}")
    try:
        os.rename(folder, aside)
    except OSError:
        return False  # gone already (another process), or not ours to remove
    shutil.rmtree(aside, ignore_errors=True)
    return True


def evict(keep: Path, same_trace: str, cap: int | None = None) -> list[Path]:
    """After writing ``keep``: drop the other entries whose name starts with
    ``same_trace`` (older indexes of a trace that changed since: never read
    again), then the least recently used entries until the folder is under the
    cap.  ``keep`` itself is never removed.  Returns the folders removed."""
    cap = cap_bytes() if cap is None else cap
    root = keep.parent
    entries = list_entries(root)
    removed: list[Path] = []
    total = sum(e.bytes for e in entries)
    for entry in entries:
        if entry.folder == keep:
            continue
        if not entry.folder.name.startswith(same_trace) and total <= cap:
            continue
        if remove_entry(entry.folder):
            removed.append(entry.folder)
            total -= entry.bytes
    _sweep_leftovers(root)
    return removed


def _sweep_leftovers(root: Path, older_than_s: float = 3600.0) -> None:
    """Temp and aside folders a killed process left behind (an hour old: a slow
    writer's temp folder is still in use)."""
    now = time.time()
    try:
        leftovers = [p for p in root.iterdir() if p.name.startswith((TMP_PREFIX, OLD_PREFIX))]
    except OSError:
        return
    for p in leftovers:
        try:
            if now - p.stat().st_mtime > older_than_s:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def clear(root: Path | None = None) -> tuple[int, int]:
    """Remove every index (and leftover temp folders); returns (entries, bytes) removed."""
    root = cache_root() if root is None else root
    count = size = 0
    for entry in list_entries(root):
        if remove_entry(entry.folder):
            count += 1
            size += entry.bytes
    _sweep_leftovers(root, older_than_s=0.0)
    return count, size
