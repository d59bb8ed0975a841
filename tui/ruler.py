"""The time ruler's text (pure): tick marks and labels with real units."""

from __future__ import annotations

import math

from tui.fmt import fmt_ns, nice_step
from tui.viewport import Viewport

_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))


def tick_format(largest_ns: float, step_ns: float) -> tuple[int, str, int]:
    """``(scale, unit, places)`` for every label of one ruler: the unit in which the
    largest label (in magnitude) is at least 1, so a label deep in a long trace
    reads ``+3.26205 ms``, never ``3262050 ns``; the decimals the tick step needs."""
    reach = max(abs(largest_ns), step_ns)
    scale, unit = next(((sc, u) for sc, u in _UNITS if reach >= sc), _UNITS[-1])
    frac = step_ns / scale
    places = 0 if frac >= 1 - 1e-9 else max(0, -int(math.floor(math.log10(frac) + 1e-9)))
    return scale, unit, places


def tick_label(t_ns: float, scale: int, unit: str, places: int) -> str:
    """``+12.5 µs``: an offset from the ruler's zero, signed, every label of a
    ruler with the same decimals (the zero itself is a bare ``0``)."""
    text = f"{abs(t_ns) / scale:.{places}f}"
    if float(text) == 0:
        return f"0 {unit}"
    return f"{'-' if t_ns < 0 else '+'}{text} {unit}"


def ruler_text(vp: Viewport, zero: float = 0.0) -> str:
    """``vp.width`` characters: ``┊`` at each tick followed by its offset from
    ``zero`` (the trace start, or the marked range's start): ``0 ms``, ``+2.5 ms``...,
    ticks 1/2/5 x 10^k ns apart, counted from ``zero`` so that it gets a tick; one
    unit for the whole ruler (``tick_format``)."""
    width = vp.width
    buf = [" "] * width
    step = nice_step(vp.span, width, min_cells=12)
    fmt = tick_format(max(abs(vp.start - zero), abs(vp.end - zero)), step)
    t = zero + math.ceil((vp.start - zero) / step) * step
    guard = 0
    while t <= vp.end and guard < width:
        col = int(round(vp.col_at(t)))
        if 0 <= col < width:
            label = "┊" + tick_label(t - zero, *fmt)
            if col + len(label) > width:  # cut, "+800000 s" would read "+800": tick only
                label = "┊"
            for i, ch in enumerate(label):
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
