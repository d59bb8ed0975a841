"""Number and time formatting for the TUI and the CLI (pure; no Textual).

Every time shown to a person goes through ``fmt_time`` (``fmt_ns`` and ``fmt_us``
are its two common spellings), so one duration reads the same in every view and
command.  They live in ``profiling.analysis.units`` (the analysis writes times into
findings' sentences with them) and are re-exported here: one implementation.
It has two styles:

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

from profiling.analysis.units import UNITS, Style, Unit, fmt_ns, fmt_time, fmt_us

__all__ = ["Style", "Unit", "fmt_count", "fmt_ns", "fmt_pct", "fmt_tick", "fmt_time",
           "fmt_us", "nice_step"]


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
    for scale, unit in UNITS:
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


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one: ``1 warning``, ``1,234 events``."""
    return f"{fmt_count(n)} {noun}{'' if n == 1 else 's'}"


def fmt_pct(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` with one decimal; ``-`` when ``whole`` is 0."""
    if not whole:
        return "-"
    return f"{100.0 * part / whole:.1f}%"
