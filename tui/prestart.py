"""Start the decoding pool's server while the command is still importing its modules.

A first open of a big trace decodes on worker processes forked by a ``forkserver``
(``profiling.trace.pool``).  The server's start (a fresh interpreter importing
NumPy and the decoder: 0.3 s here, most of the 0.6 s pool start on 16 cores) came
only after the command had imported its own modules (another 0.3-0.5 s), because
``load_trace`` started it: the two ran one after the other.  ``prestart`` starts the
server as soon as the arguments are parsed (a fork and exec, no waiting), so its
imports run on another core beside the command's; the workers are then forked
from a server that is ready.

Only when the pool will likely be used: one trace file (``PATH``, or a lone
``PATHS``) of ``PARALLEL_MIN_BYTES`` or more, more than one job, and no index entry
of that path (a reopen maps the index and must not pay for a process it never
uses).  Standard library only, and no thread: importing ``profiling.trace`` here
would cost the time saved, and importing it on a thread while the main thread
imports it can fail (its package imports form a cycle: Python raised
``_DeadlockError`` in the main thread when this was tried).  On 2 busy cores the
server's imports slow the command's own, so the decode starts only a little
sooner there; the gain is for machines with idle cores.  The names of the cache folder are
those of ``profiling.trace.cache_store`` and ``cache.path_prefix`` (a test holds them
equal); when they disagree the only cost is the load starting the server itself.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

MIN_BYTES = 48 << 20
"""``profiling.trace.loader.PARALLEL_MIN_BYTES`` (a test holds them equal)."""

PRELOAD = ["profiling.trace.pool"]
"""What the server imports before forking workers: ``pool.get_pool``'s preload."""


def prestart(args: Any) -> bool:
    """Start the forkserver now if ``args`` (parsed command line) opens one big trace
    with no index; whether it did.  Never raises: the load starts it otherwise."""
    try:
        path = getattr(args, "path", None)
        paths = getattr(args, "paths", None)
        if path is None and isinstance(paths, list) and len(paths) == 1:
            path = paths[0]  # findings, open: one trace (not a job of several)
        if not isinstance(path, str) or (getattr(args, "jobs", None) or cores()) < 2:
            return False
        st = os.stat(path)
        if st.st_size < MIN_BYTES or not stat.S_ISREG(st.st_mode):
            return False
        if not getattr(args, "no_cache", False) and has_index(Path(path)):
            return False
        import multiprocessing
        from multiprocessing import forkserver

        if "forkserver" not in multiprocessing.get_all_start_methods():
            return False
        multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
        forkserver.ensure_running()
        return True
    except Exception:  # noqa: BLE001 - best effort, as above
        return False


def cores() -> int:
    """``loader.default_jobs()`` with no ``--jobs``: the cores this process may use."""
    from profiling.cores import usable_cores  # standard library only

    return usable_cores()


def has_index(path: Path) -> bool:
    """Whether an index entry of ``path`` (any version of the file) may exist."""
    beside = os.environ.get("ATTN_TUI_CACHE", "").strip().lower() == "beside"
    if beside and path.with_name(path.name + SUFFIX).is_dir():
        return True
    resolved = path.resolve()
    prefix = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    try:
        with os.scandir(cache_root()) as entries:
            return any(e.name.startswith(prefix + "-") for e in entries)
    except OSError:
        return False


SUFFIX = ".attn-tui-cache"


def cache_root() -> Path:
    """``cache_store.cache_root`` without its warning (the load gives it)."""
    root = os.environ.get("ATTN_TUI_CACHE_DIR")
    if root and not (os.path.exists(root) and not os.path.isdir(root)):
        return Path(root)
    import platformdirs

    return Path(platformdirs.user_cache_dir("attn-tui", appauthor=False))
