"""The time ruler's text (pure): tick marks and labels with real units."""

from __future__ import annotations

import math

from tui.fmt import fmt_ns, fmt_tick, nice_step
from tui.viewport import Viewport


def ruler_text(vp: Viewport, zero: float = 0.0) -> str:
    """``vp.width`` characters: ``┊`` at each tick followed by its time since
    ``zero`` (the trace start, or the marked range's start): ``0 ms``, ``2.5 ms``...,
    ticks 1/2/5 x 10^k ns apart, counted from ``zero`` so that it gets a tick."""
    width = vp.width
    buf = [" "] * width
    step = nice_step(vp.span, width, min_cells=12)
    t = zero + math.ceil((vp.start - zero) / step) * step
    guard = 0
    while t <= vp.end and guard < width:
        col = int(round(vp.col_at(t)))
        if 0 <= col < width:
            label = "┊" + fmt_tick(t - zero, step)
            for i, ch in enumerate(label):
                if col + i < width:
                    buf[col + i] = ch
        t += step
        guard += 1
    return "".join(buf)


def range_cells(vp: Viewport, rng: tuple[int, int] | None) -> tuple[int, int] | None:
    """The ruler cells ``[first, stop)`` the range covers (at least one cell when it
    is in the window); None without a range or when it is off screen."""
    if rng is None:
        return None
    lo, hi = rng
    if hi < vp.start or lo > vp.end:
        return None
    first = max(int(math.floor(vp.col_at(lo))), 0)
    stop = min(max(int(math.ceil(vp.col_at(hi))), first + 1), vp.width)
    return (first, stop) if first < stop else None


def span_text(vp: Viewport, rng: tuple[int, int] | None = None) -> str:
    """The ruler's left corner: the marked range's length, else the visible span."""
    if rng is not None:
        return f"range {fmt_ns(rng[1] - rng[0])}"
    return f"window {fmt_ns(vp.span)}"
