"""``fmt_ns`` of a whole column of integer nanoseconds at once (NumPy).

A listing of 300,000 GPU events writes 600,000 times; ``fmt_ns`` costs about two
microseconds a call, more than the rest of a row.  Its text depends only on the
unit, the decimal places and the value rounded to them, so a column is rounded
in integers, and each distinct result is written once by the same rule as
``units.fmt_time``; ``tests/test_time_texts.py`` holds the two equal.  Where
the integers cannot decide (a value exactly half-way, which ``fmt_time``
rounds as the binary float does), and for negative or huge values, the value is
written by ``fmt_ns`` itself.
"""

from __future__ import annotations

import numpy as np

from profiling.analysis.ranges import distinct, distinct_codes
from profiling.analysis.units import UNITS, fmt_ns

_POW10 = 10 ** np.arange(19, dtype=np.int64)
_UNIT_OF_EXP = {3: "µs", 6: "ms", 9: "s"}
_BIG = 10**12
"""From 1000 s on, ``fmt_time`` writes more integer digits than it keeps: ``fmt_ns``."""
WIDEST_TEXT = 13
"""The longest text ``fmt_ns`` writes for any int64 (``-9223372037 s``)."""


def ns_texts(ns: np.ndarray, digits: int = 3) -> tuple[list[str], np.ndarray]:
    """``(texts, codes)`` with ``texts[codes[i]] == fmt_ns(ns[i], digits)``: few texts
    (one per distinct rounded value), and an int64 code per value.  ``digits``: 1 to
    4 (more would keep places below the nanosecond, which the keys cannot hold)."""
    a, key = _keys(ns, digits)
    texts: list[str] = []
    codes = np.empty(a.shape[0], dtype=np.int64)
    known = key >= 0
    if known.any():
        found, codes[known] = distinct_codes(_dense(key[known], digits))
        texts = _texts(_key_of(found, digits))
    rest = np.flatnonzero(~known)
    if rest.shape[0]:
        values, inverse = distinct_codes(a[rest])
        codes[rest] = len(texts) + inverse
        texts += [fmt_ns(v, digits) for v in values.tolist()]
    return texts, codes


def widest(ns: np.ndarray, digits: int = 3) -> int:
    """The length of the longest ``fmt_ns(v, digits)`` of the column (0 when empty;
    never more than ``WIDEST_TEXT``).

    WHY apart from ``ns_texts``: a text table's column is as wide as its widest
    cell, which must be known before its first row is written, while the rows
    themselves can be written part by part by other processes.  Only the distinct
    rounded values are found here (no code per value), and each written once."""
    a, key = _keys(ns, digits)
    known = key >= 0
    texts = _texts(_key_of(distinct(_dense(key[known], digits)), digits))
    texts += [fmt_ns(v, digits) for v in distinct(a[~known]).tolist()]  # few, if any
    return max(map(len, texts), default=0)


def _keys(ns: np.ndarray, digits: int) -> tuple[np.ndarray, np.ndarray]:
    """The column as int64, and each value's key: an integer below 1000 (ns), a
    ``_rounded_keys`` key, or -1 where ``fmt_ns`` itself must write it."""
    if not 1 <= digits <= 4:
        raise ValueError(f"ns_texts writes 1 to 4 significant digits, not {digits}")
    a = np.asarray(ns, dtype=np.int64)
    key = np.full(a.shape[0], -1, dtype=np.int64)
    ok = (a >= 0) & (a < _BIG)
    small = ok & (a < 1000)
    key[small] = a[small]  # unit ns (exponent 0), no places: the integer itself
    big = np.flatnonzero(ok & (a >= 1000))
    if big.shape[0]:
        key[big] = _rounded_keys(a[big], digits)
    return a, key


def _dense(keys: np.ndarray, digits: int) -> np.ndarray:
    """Each key of ``_keys`` (none -1) as a small number, in key order.

    A key is an integer below 1000 (ns), or a rounded value: ``m`` below
    ``10**max(digits, 3) + 1`` with at most ``digits`` places in one of three units.
    There are few of those (13,000 for 3 digits, 150,000 for 4), so the distinct
    keys of a long column are found by counting these numbers
    (``ranges.distinct_codes``): one pass, where a sort of 300,000 event times cost
    10-20 ms.  A short column (a listing part's 900 head starts) spans more numbers
    than it has values, and is sorted instead."""
    m_size, p_size = 10 ** max(digits, 3) + 1, digits + 1
    exp, places, m = keys >> 40, (keys >> 32) & 0xFF, keys & 0xFFFFFFFF
    return np.where(keys < 1000, keys, 1000 + ((exp // 3 - 1) * p_size + places) * m_size + m)


def _key_of(dense: np.ndarray, digits: int) -> np.ndarray:
    """The keys of ``_dense``'s numbers (its inverse)."""
    m_size, p_size = 10 ** max(digits, 3) + 1, digits + 1
    rounded, m = np.divmod(dense - 1000, m_size)
    exp, places = np.divmod(rounded, p_size)
    return np.where(dense < 1000, dense, ((exp + 1) * 3) << 40 | places << 32 | m)


def _rounded_keys(a: np.ndarray, digits: int) -> np.ndarray:
    """For values of 1 µs to 1000 s: ``exp << 40 | places << 32 | m`` (the value is
    ``m / 10**places`` of unit ``10**exp`` ns), or -1 where the integers cannot
    decide.  ``digits`` significant digits in the largest unit that keeps the
    value at least 1, as ``fmt_time``: places = digits - integer digits."""
    length = np.searchsorted(_POW10, a, side="right")  # decimal digits of a
    exp = np.where(a >= 10**9, 9, np.where(a >= 10**6, 6, 3))
    places = np.maximum(digits - (length - exp), 0)
    drop = exp - places  # digits of a rounded away (>= 0 from 1 µs on)
    scale = _POW10[drop]
    m, r = np.divmod(a, scale)
    m = m + (2 * r > scale)
    tie = (drop > 0) & (2 * r == scale)  # exactly half-way: the binary float decides
    # Rounded up to 1000 of its unit: 1 of the next (fmt_time's step up), below s.
    up = (m >= _POW10[3 + places]) & (exp < 9)
    exp = np.where(up, exp + 3, exp)
    m = np.where(up, 1, m)
    places = np.where(up, 0, places)
    return np.where(tie, -1, (exp << 40) | (places << 32) | m)


_UNIT_NAMES = {0: UNITS[-1][1], **_UNIT_OF_EXP}


def _texts(keys: np.ndarray) -> list[str]:
    """The text of each key of ``_rounded_keys`` (or integer below 1000: ns), its
    digits split and the fraction's trailing zeros dropped in NumPy: a listing's
    distinct times can number in the hundreds of thousands (12,100 head starts on a
    1 GB trace), about 1.5 us each written one at a time."""
    exp, places, m = keys >> 40, (keys >> 32) & 0xFF, keys & 0xFFFFFFFF
    whole, frac = np.divmod(m, _POW10[places])
    places = np.where(frac == 0, 0, places)  # no fraction: no point
    for _ in range(int(places.max(initial=0))):  # "0.250" -> "0.25": a digit a pass
        zero = (places > 0) & (frac % 10 == 0)
        frac = np.where(zero, frac // 10, frac)
        places = places - zero
    names = _UNIT_NAMES
    return [f"{w}.{f:0{p}d} {names[e]}" if p else f"{w} {names[e]}"
            for w, f, p, e in zip(whole.tolist(), frac.tolist(), places.tolist(), exp.tolist(),
                                  strict=True)]
