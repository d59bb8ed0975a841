"""glibc's allocator told to keep freed memory for the headless commands' next chunk.

WHY: glibc gives a freed block of 128 KiB or more back to the kernel at once
(later, only blocks above the largest freed so far), and trims the top of its
heap once more than twice that is free there.  A command that makes its output
chunk by chunk (``kernels --json``: 160 MB of text on a 1 GB trace, 8 MB a chunk,
joined and then encoded) frees two blocks of a chunk's size at the heap's top
each time, so every page of every chunk is faulted in afresh: on the reopened
1 GB trace (2-core VM) 48.7 k page faults, 17.4 k with the settings here, system
time 0.11-0.16 s -> 0.04-0.08 s; ``slices`` 19.3 k -> 15.1 k, ``compare`` 21 k -> 16 k.
(The H200's glibc showed no such churn for ``kernels``, 20.6 k -> 18.9 k; ``stats``
17.5 k -> 10.4 k and ``slices`` 23.8 k -> 15.5 k there.)

The settings: blocks below 32 MiB (glibc's own upper bound for the first) come
from the heap, and up to 256 MiB freed at its top stay there for the next
allocation.  Only once a headless command has reopened a trace from its index
(``tui.loading``): on a first open they raised the peak memory by 12 % (621 -> 700
MB, 1 GB trace, 2-core VM) for no time saved, and the TUI is a long-lived process.
A setting of the user's own (any ``MALLOC_*`` variable) wins; nothing happens
where the C library has no ``mallopt`` (macOS's has none, musl's does nothing).
"""

from __future__ import annotations

import os

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
"""``mallopt``'s parameter numbers (glibc's ``malloc.h``)."""

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def keep_freed_memory() -> bool:
    """Apply the settings, unless the user has their own; whether they were."""
    if any(name.startswith("MALLOC_") for name in os.environ):
        return False
    try:
        import ctypes  # NumPy imports it anyway

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library to ask, or one without mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
