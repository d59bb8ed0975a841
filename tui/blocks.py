"""Pictures made of Unicode block characters: bars and sparklines (pure).

The compare chart and the regions view draw with characters rather than a
plotting widget so the pictures live inside table cells and Rich ``Text``,
survive an SVG export unchanged, and read over any SSH terminal.  Bars use the
eight left-aligned eighth blocks, so a bar's length has eight steps per cell;
sparklines use the eight bottom-aligned blocks, from zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

EIGHTHS = " ▏▎▍▌▋▊▉█"
"""Left eighth blocks: ``EIGHTHS[k]`` fills k/8 of a cell (index 0 is a blank)."""

SPARKS = "▁▂▃▄▅▆▇█"
"""Bottom blocks, lowest first."""


def hbar(fraction: float, width: int) -> str:
    """A horizontal bar ``fraction`` (0..1) of ``width`` cells long, to 1/8 of a cell.

    Any value above zero shows at least one eighth, so a tiny time is never
    mistaken for none; the result is exactly ``width`` characters (padded with
    spaces) so that labels after it line up.
    """
    if width <= 0:
        return ""
    if not math.isfinite(fraction) or fraction <= 0:
        return " " * width
    eighths = max(1, round(min(fraction, 1.0) * width * 8))
    full, part = divmod(eighths, 8)
    text = "█" * full + (EIGHTHS[part] if part else "")
    return text.ljust(width)


def resample(values: Sequence[float], width: int) -> list[float]:
    """At most ``width`` values: consecutive buckets of ``values`` reduced to their
    maximum, so one slow instance among thousands still shows as a spike."""
    n = len(values)
    if width <= 0 or n == 0:
        return []
    if n <= width:
        return [float(v) for v in values]
    out = []
    for i in range(width):
        lo, hi = i * n // width, (i + 1) * n // width
        out.append(float(max(values[lo:hi])))
    return out


def sparkline(values: Sequence[float], width: int = 16) -> str:
    """``values`` as ``▁▂▃▄▅▆▇█``, heights proportional to the values (zero to the maximum).

    A zero baseline keeps the picture honest: instances within a few percent of
    each other draw level (min-to-max scaling would blow 1 % of noise up to the
    full height), while a warm-up instance at twice the time, or a slow step,
    stands out.  Negative and non-finite values draw as blanks; empty for no
    values or no positive value.
    """
    points = resample(values, width)
    finite = [v for v in points if math.isfinite(v) and v >= 0]
    hi = max(finite, default=0.0)
    if hi <= 0:
        return ""
    top = len(SPARKS) - 1
    out = []
    for v in points:
        if not math.isfinite(v) or v < 0:
            out.append(" ")
        else:
            out.append(SPARKS[round(v / hi * top)])
    return "".join(out)
