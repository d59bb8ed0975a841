"""``attn-tui cache [--info | --clear]``: the folder of trace indexes in the user cache.

``--info`` (the default) says where the folder is, how much it holds against its
cap, and per entry which trace it indexes, its size and when it was last used;
``--clear`` removes every entry.  Indexes written beside traces
(``ATTN_TUI_CACHE=beside``) are not in this folder and are left alone.  Plain
``print``, no Rich: trace paths are data and are shown through ``visible``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from profiling.trace.cache_store import (
    cache_root,
    cap_bytes,
    clear,
    dir_setting_problem,
    list_entries,
)


def run(args: argparse.Namespace) -> int:
    from profiling.errors import AttnTuiError

    bad = dir_setting_problem()
    if bad is not None:  # not the default folder in its place: that is not what was asked
        raise AttnTuiError("ATTN_TUI_CACHE_DIR names a file, not a folder", bad,
                           "point ATTN_TUI_CACHE_DIR at a folder, or unset it for "
                           "the user cache folder")
    root = cache_root()
    if args.clear:
        count, size = clear(root)
        if args.json:
            _print_json({"folder": str(root), "removed": count, "bytes": size})
        else:
            print(f"removed {count} {_plural(count)} ({_size(size)}) from {_visible(str(root))}")
        return 0
    entries = list_entries(root)
    entries.reverse()  # most recently used first
    total = sum(e.bytes for e in entries)
    cap = cap_bytes()
    if args.json:
        _print_json({
            "folder": str(root), "entries": len(entries), "bytes": total, "cap_bytes": cap,
            "items": [{"trace": e.trace, "folder": str(e.folder), "bytes": e.bytes,
                       "last_used": _iso(e.last_used)} for e in entries],
        })
        return 0
    print(f"index folder: {_visible(str(root))}")
    print(f"{len(entries)} {_plural(len(entries))}, {_size(total)} of a {_size(cap)} cap "
          "(ATTN_TUI_CACHE_MAX changes it)")
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.last_used))
        trace = _visible(e.trace) if e.trace is not None else "(unknown trace)"
        print(f"  {when}  {_size(e.bytes):>9}  {trace}")
    return 0


def _print_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, indent=1))
    sys.stdout.write("\n")


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _plural(n: int) -> str:
    return "entry" if n == 1 else "entries"


def _size(n: int) -> str:
    """Bytes in binary units, three significant digits (``1.5 GiB``, ``640 KiB``)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            break
        value /= 1024
    if unit == "B":
        return f"{n} B"
    return f"{value:.3g} {unit}"


def _visible(text: str) -> str:
    from tui.names import visible

    return visible(text)
