"""Number and time formatting for the TUI (pure; no Textual)."""

from __future__ import annotations

import math

_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))


def fmt_ns(ns: float, digits: int = 3) -> str:
    """A duration in nanoseconds with a readable unit: ``850 ns``, ``1.25 µs``, ``12.3 ms``."""
    if ns is None or (isinstance(ns, float) and not math.isfinite(ns)):
        return "-"
    sign = "-" if ns < 0 else ""
    a = abs(float(ns))
    for scale, unit in _UNITS:
        if a >= scale or scale == 1:
            v = a / scale
            if unit == "ns":
                return f"{sign}{v:.0f} ns"
            return f"{sign}{_sig(v, digits)} {unit}"
    return f"{sign}{a:.0f} ns"  # pragma: no cover


def fmt_us(us: float) -> str:
    """Microseconds the way torch prints its table: ``12.345us``, ``1.234ms``, ``2.000s``."""
    if us is None:
        return "-"
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
    return f"{n:,}"


def fmt_pct(part: float, whole: float) -> str:
    if not whole:
        return "-"
    return f"{100.0 * part / whole:.1f}%"
