"""Durations as people read them: the one time formatter (pure; stdlib only).

Every time shown to a person goes through ``fmt_time`` (``fmt_ns`` and ``fmt_us``
are its two common spellings), so one duration reads the same in every view,
command and finding: the analysis writes times into a finding's sentence (the
text is data of the finding) with the same function the TUI and the CLI use
(``tui.fmt`` re-exports these).  It has two styles:

* ``readable`` (the default): three significant digits and a spaced unit,
  ``850 ns``, ``1.25 µs``, ``12.3 ms``, ``2 s``.
* ``torch``: the format of torch's own ``key_averages().table()`` (its
  ``_format_time``), ``12.345us``, ``1.234ms``, ``2.000s``.  Kept only for the
  places that reproduce torch's table (``attn-tui table`` and the Ops view and
  its footer), so their figures can be compared with torch's print digit for digit.
"""

from __future__ import annotations

import math
from typing import Literal

Unit = Literal["ns", "us", "ms", "s"]
Style = Literal["readable", "torch"]

_NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))
"""(ns per unit, the unit's name), largest first."""


def fmt_time(
    value: float | None, unit: Unit = "ns", *, style: Style = "readable", digits: int = 3
) -> str:
    """A duration (or an offset) given in ``unit``, for people; ``-`` when unknown.

    ``readable``: ``digits`` significant digits in the largest unit that keeps the
    value at least 1 (``999.96 µs`` rounds up to ``1 ms``, never ``1000 µs``).
    ``torch``: torch's table format, three decimals in us, ms or s.
    """
    if value is None or not math.isfinite(float(value)):
        return "-"
    ns = float(value) * _NS_PER[unit]
    if style == "torch":
        return _torch(ns / 1_000)
    sign = "-" if ns < 0 else ""
    a = abs(ns)
    i = next(i for i, (scale, _) in enumerate(UNITS) if a >= scale or scale == 1)
    text = _in_unit(a, i, digits)
    if i > 0 and float(text) >= 1000:  # rounded up into the next unit
        i -= 1
        text = _in_unit(a, i, digits)
    if float(text) == 0:
        sign = ""
    return f"{sign}{text} {UNITS[i][1]}"


def _in_unit(ns: float, i: int, digits: int) -> str:
    scale, name = UNITS[i]
    return f"{ns:.0f}" if name == "ns" else _sig(ns / scale, digits)


def fmt_ns(ns: float | None, digits: int = 3) -> str:
    """``fmt_time`` of nanoseconds, readable: ``850 ns``, ``1.25 µs``, ``12.3 ms``."""
    return fmt_time(ns, "ns", digits=digits)


def fmt_us(us: float | None) -> str:
    """``fmt_time`` of microseconds in torch's table style (``12.345us``, ``1.234ms``).

    Only for output that reproduces torch's table; elsewhere use
    ``fmt_time(us, "us")``.
    """
    return fmt_time(us, "us", style="torch")


def _torch(us: float) -> str:
    """torch.autograd.profiler_util._format_time (which compares the signed value;
    this one the magnitude, so a negative difference keeps its unit)."""
    a = abs(us)
    if a >= 1e6:
        return f"{us / 1e6:.3f}s"
    if a >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _sig(v: float, digits: int) -> str:
    if v == 0:
        return "0"
    places = max(0, digits - 1 - int(math.floor(math.log10(v))))
    text = f"{v:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
