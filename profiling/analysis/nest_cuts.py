"""Where a run of events sorted for ``nesting`` can be cut into pieces that nest
independently (``cuts``), so that ``nest`` and ``parents`` take a piece a thread."""

from __future__ import annotations

import numpy as np

from profiling.trace.column_threads import pieces

PIECE_MIN = 1 << 17
"""Events per piece, at least, when ``nest`` and ``parents`` cut their input (``cuts``)."""


def cuts(s: np.ndarray, e: np.ndarray, new_run: np.ndarray) -> list[int]:
    """Boundaries ``[0, ..., n]`` of pieces that nest independently, a piece a thread.

    The jumping's rounds are serial (each event's top-level ancestors chain back
    through the whole run), but a place where nothing earlier in the run is still
    open -- a new run, or an event starting at or after every end before it --
    no event crosses: everything before it ends by the time anything from it on
    starts, so fails all of it, and the walk pops it all there (that is also
    where it closes it: ``stop``).  Up to ``pieces()`` pieces, each cut at the
    first such place from an even share of the events on; none under
    ``2 * PIECE_MIN`` events or where no thread is free to take one."""
    n = s.shape[0]
    wanted = min(pieces(), n // PIECE_MIN)
    if wanted < 2:
        return [0, n]
    runs = np.append(np.flatnonzero(new_run), n)
    reaches: dict[int, np.ndarray] = {}  # per run: the latest end up to each event
    bounds = [0]
    for k in range(1, wanted):
        target = max(k * n // wanted, bounds[-1] + 1)
        if target >= n:
            break
        run = int(np.searchsorted(runs, target, side="right")) - 1
        lo, hi = int(runs[run]), int(runs[run + 1])
        cut = target
        if target > lo:  # else a new run: a cut already
            if run not in reaches:
                reaches[run] = np.maximum.accumulate(e[lo:hi])
            free = np.flatnonzero(s[target:hi] >= reaches[run][target - lo - 1 : hi - lo - 1])
            cut = target + int(free[0]) if free.shape[0] else hi
        if bounds[-1] < cut < n:
            bounds.append(cut)
    bounds.append(n)
    return bounds
