"""The time ruler's text (pure): tick marks and labels with real units."""

from __future__ import annotations

import math

from tui.fmt import fmt_ns, fmt_tick, nice_step
from tui.viewport import Viewport


def ruler_text(vp: Viewport) -> str:
    """``vp.width`` characters: ``┊`` at each tick followed by its time since the
    trace start (``0 ms``, ``2.5 ms``...), ticks 1/2/5 x 10^k ns apart."""
    width = vp.width
    buf = [" "] * width
    step = nice_step(vp.span, width, min_cells=12)
    first = math.ceil(vp.start / step) * step
    t = first
    guard = 0
    while t <= vp.end and guard < width:
        col = int(round(vp.col_at(t)))
        if 0 <= col < width:
            label = "┊" + fmt_tick(t, step)
            for i, ch in enumerate(label):
                if col + i < width:
                    buf[col + i] = ch
        t += step
        guard += 1
    return "".join(buf)


def span_text(vp: Viewport) -> str:
    """The visible span, for the ruler's left corner."""
    return f"window {fmt_ns(vp.span)}"
