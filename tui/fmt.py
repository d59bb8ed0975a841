"""Number and time formatting for the TUI and the CLI (pure; no Textual).

Every time shown to a person goes through ``fmt_time`` (``fmt_ns`` and ``fmt_us``
are its two common spellings), so one duration reads the same in every view and
command.  It has two styles:

* ``readable`` (the default): three significant digits and a spaced unit,
  ``850 ns``, ``1.25 µs``, ``12.3 ms``, ``2 s``.
* ``torch``: the format of torch's own ``key_averages().table()`` (its
  ``_format_time``), ``12.345us``, ``1.234ms``, ``2.000s``.  Kept only for the
  places that reproduce torch's table (``attn-tui table`` and the Ops view and
  its footer), so their figures can be compared with torch's print digit for digit.

Ruler tick labels (``fmt_tick``) are not durations but positions on one scale:
they share a unit across the ruler and show only the digits the tick step needs.
"""

from __future__ import annotations

import math
from typing import Literal

Unit = Literal["ns", "us", "ms", "s"]
Style = Literal["readable", "torch"]

_NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))


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
    i = next(i for i, (scale, _) in enumerate(_UNITS) if a >= scale or scale == 1)
    text = _in_unit(a, i, digits)
    if i > 0 and float(text) >= 1000:  # rounded up into the next unit
        i -= 1
        text = _in_unit(a, i, digits)
    if float(text) == 0:
        sign = ""
    return f"{sign}{text} {_UNITS[i][1]}"


def _in_unit(ns: float, i: int, digits: int) -> str:
    scale, name = _UNITS[i]
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


def nice_step(span_ns: float, cells: int, min_cells: int = 12) -> float:
    """A tick spacing of 1, 2 or 5 x 10^k ns, at least ``min_cells`` cells apart."""
    if span_ns <= 0 or cells <= 0:
        return 1.0
    raw = span_ns * min_cells / cells
    exp = math.floor(math.log10(max(raw, 1e-9)))
    for mult in (1, 2, 5, 10):
        step = mult * 10.0**exp
        if step >= raw:
            return max(step, 1.0)
    return max(10.0 ** (exp + 1), 1.0)  # pragma: no cover


def fmt_tick(t_ns: float, step_ns: float) -> str:
    """A ruler label for ``t_ns`` (relative to the trace start): one unit for the
    whole ruler, the largest that keeps ticks below ten units apart."""
    for scale, unit in _UNITS:
        if step_ns * 2 >= scale or scale == 1:
            v = t_ns / scale
            frac = step_ns / scale
            places = 0 if frac >= 1 - 1e-9 else max(0, -int(math.floor(math.log10(frac) + 1e-9)))
            text = f"{v:.{places}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            if text.startswith("-") and float(text) == 0:
                text = text[1:]
            return f"{text} {unit}"
    return f"{t_ns:.0f} ns"  # pragma: no cover


def fmt_count(n: int) -> str:
    """A count with thousands separators: ``1,234,567``."""
    return f"{n:,}"


def fmt_pct(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` with one decimal; ``-`` when ``whole`` is 0."""
    if not whole:
        return "-"
    return f"{100.0 * part / whole:.1f}%"
