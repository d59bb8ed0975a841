"""The cores this process may run on: standard library only, so ``tui.prestart``
can ask before anything heavy is imported, and the loader asks the same way."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """``os.process_cpu_count`` (Python 3.13), else the affinity mask, else the CPU count."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return int(count() or 1)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1
