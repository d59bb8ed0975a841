"""Event times: microseconds as the file writes them -> exact integer nanoseconds.

Kineto writes ``ts``/``dur`` in microseconds: integers in older builds, three
decimals (nanoseconds) in newer ones.  A float64 holds any such value to the
nanosecond only below 2**43 us (about 100 days): its rounding error there is
under 0.5 ns, so rounding recovers the exact value.  Epoch-sized times with
decimals (``1712195495505828.904``) lose up to 0.125 us in a float, which makes
children seem to end after their parents; those are read from their decimal
text instead, with no float in between.

Two routes, chosen per chunk: numbers (``float_times_ns``, the common and
cheapest case, which says when it cannot be exact) and text (``text_times_ns``,
vectorised over the digits; odd spellings go through ``Decimal`` one by one).
Each returns the nanoseconds and a state per value: ``OK``, ``OUT_OF_RANGE``
(beyond int64 nanoseconds; the value is clipped) or ``NOT_A_NUMBER`` (absent,
NaN, infinite or not a number at all; the value is 0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

OK, OUT_OF_RANGE, NOT_A_NUMBER = 0, 1, 2

LIMIT_NS = 9_200_000_000_000_000_000
"""Times at or beyond this (in magnitude) do not fit int64 nanoseconds with room to add."""

FLOAT_EXACT_US = float(2**43)
"""Below this, a float read from a text of up to three decimals rounds back to it exactly."""

_DOT, _MINUS, _ZERO, _COMMA = ord("."), ord("-"), ord("0"), ord(",")
_MAX_TEXT = 40  # longer texts take the slow route


def float_times_ns(values: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Nanoseconds and states of numbers decoded from JSON (int for integer texts,
    float for decimal ones, NaN for absent), or None when some float is too large
    for its nanoseconds to be exact: the caller then reads the text instead."""
    try:
        arr = np.array(values, dtype=np.float64)
    except OverflowError:  # an int beyond any float
        arr = np.full(len(values), np.inf)
    small = np.abs(arr) < FLOAT_EXACT_US  # False for NaN; ints below are exact as floats
    if small.all():
        return _small_float_us_to_ns(arr), np.zeros(arr.shape[0], dtype=np.uint8)
    if not any(isinstance(values[i], float) for i in np.flatnonzero(~small).tolist()[:1]):
        typed = np.array(values)  # epoch-sized integers (older Kineto): exact as int64
        if typed.dtype.kind == "i":
            return _int_us_to_ns(typed)
    ns = _small_float_us_to_ns(np.where(small, arr, 0.0))
    state = np.zeros(arr.shape[0], dtype=np.uint8)
    for i in np.flatnonzero(~small).tolist():
        value = values[i]
        if isinstance(value, float):
            if value == value:  # a finite float too large to be exact (NaN is absent)
                return None
            ns[i], state[i] = 0, NOT_A_NUMBER
        else:
            ns[i], state[i] = _clip(int(value) * 1000)
    return ns, state


def _int_us_to_ns(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    limit = LIMIT_NS // 1000
    inside = np.abs(arr) < limit
    ns = np.clip(arr, -limit, limit) * 1000
    state = np.where(inside, OK, OUT_OF_RANGE).astype(np.uint8)
    return ns.astype(np.int64), state


def _small_float_us_to_ns(us: np.ndarray) -> np.ndarray:
    """Floats below 2**43 us -> the nearest nanosecond (NaN -> 0).

    Whole and fractional microseconds are converted apart: ``us * 1000`` in one
    go would round again in the product."""
    safe = np.where(np.isfinite(us), us, 0.0)
    whole = np.floor(safe)
    frac = np.rint((safe - whole) * 1000.0).astype(np.int64)
    return whole.astype(np.int64) * 1000 + frac


def _clip(ns: int) -> tuple[int, int]:
    if -LIMIT_NS < ns < LIMIT_NS:
        return ns, OK
    return (LIMIT_NS if ns > 0 else -LIMIT_NS), OUT_OF_RANGE


def text_times_ns(texts: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """Nanoseconds and states of JSON texts of times (bytes-like), plus how many were
    JSON strings (``"141"``, read as the number they spell, as before).

    Plain decimals are converted column-wise in numpy, grouped by length and
    position of the point, so each group is a small matrix of digits; anything
    else (exponents, strings, ``null``, a 16-digit integer part starting with 9)
    goes through ``Decimal`` one value at a time.  Rounding to the nanosecond
    (texts with more than three decimals) is half to even.
    """
    n = len(texts)
    ns = np.zeros(n, dtype=np.int64)
    state = np.full(n, NOT_A_NUMBER, dtype=np.uint8)
    if n == 0:
        return ns, state, 0
    buf, starts, lens = _joined(texts)
    dot_at, one_dot = _dot_positions(buf, starts, lens)
    regular = (lens > 0) & (lens <= _MAX_TEXT) & one_dot
    key = np.where(regular, lens * 64 + dot_at, 0)  # 0: not regular (lens > 0 gives >= 64)
    done = np.zeros(n, dtype=bool)
    groups = np.flatnonzero(np.bincount(key))
    for group in groups[groups > 0].tolist():
        rows = np.flatnonzero(key == group)
        length, dot = divmod(group, 64)
        digits = sliding_window_view(buf, length)[starts[rows]] - np.uint8(_ZERO)
        good, values = _digits_to_ns(digits, dot)
        rows = rows[good]
        ns[rows] = values[good]
        state[rows] = OK
        done[rows] = True
    strings = 0
    for i in np.flatnonzero(~done).tolist():
        ns[i], state[i], was_string = _slow_text_to_ns(bytes(texts[i]))
        strings += was_string
    return ns, state, strings


def _joined(texts: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All texts in one buffer, comma-separated, with each one's start and length.

    A number's text holds no comma, so the commas give the lengths; a text that
    has commas (an object, a string) makes the count wrong, and then each length
    is asked for.
    """
    n = len(texts)
    buf = np.frombuffer(b",".join(texts), dtype=np.uint8)
    commas = np.flatnonzero(buf == _COMMA)
    if commas.shape[0] == n - 1:
        starts = np.empty(n, dtype=np.int64)
        starts[0] = 0
        starts[1:] = commas + 1
        ends = np.empty(n, dtype=np.int64)
        ends[:-1] = commas
        ends[-1] = buf.shape[0]
        return buf, starts, ends - starts
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    return buf, np.cumsum(lens + 1) - (lens + 1), lens


def _dot_positions(
    buf: np.ndarray, starts: np.ndarray, lens: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where each text's decimal point is (its length if none), and whether it has at
    most one.  Kineto's three decimals are checked first, by one gather."""
    ends = starts + lens
    if buf.shape[0] and (lens >= 5).all():
        if (buf[ends - 4] == _DOT).all():  # a second point fails the digit check later
            return lens - 4, np.ones(lens.shape[0], dtype=bool)
    dot_at = lens.copy()
    dots = np.flatnonzero(buf == _DOT)
    if dots.shape[0] == 0:
        return dot_at, np.ones(lens.shape[0], dtype=bool)
    owner = np.searchsorted(ends, dots, side="right")
    dot_at[owner] = dots - starts[owner]
    return dot_at, np.bincount(owner, minlength=lens.shape[0]) <= 1


def _digits_to_ns(digits: np.ndarray, dot: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of one layout (``digits``: text bytes minus '0', the point at column
    ``dot``, or none when ``dot`` is the width) -> which rows are plain decimals,
    and their nanoseconds."""
    m, width = digits.shape
    negative = digits[:, 0] == np.uint8((_MINUS - _ZERO) % 256)
    signed = bool(negative.any())
    if signed:
        digits = digits.copy()
        digits[negative, 0] = 0
    whole, frac = digits[:, :dot], digits[:, dot + 1 :]
    good: np.ndarray = np.ones(m, dtype=bool)
    if not ((whole < 10).all() and (frac < 10).all()):
        good = np.asarray((whole < 10).all(axis=1) & (frac < 10).all(axis=1))
    n_whole = dot - negative.astype(np.int64)
    good &= (n_whole >= 1) & (n_whole <= 16)
    if dot >= 16:  # 16 integer digits fit int64 nanoseconds when the first is at most 8
        good &= (n_whole < 16) | (whole[:, dot - 16] <= 8)
    if not good.any():
        return good, np.zeros(m, dtype=np.int64)
    # One weight per column: 10**k for the k-th power of ten in nanoseconds, 0 for
    # the point and for digits past the nanosecond.  Exponents past 10**18 only
    # meet a sign column (digit 0 now) or rows that are not good (ignored).
    exponents = [dot + 2 - c for c in range(dot)]
    if dot < width:
        exponents += [-1] + [2 - j for j in range(width - dot - 1)]
    weights = np.array([10**e if 0 <= e <= 18 else 0 for e in exponents], dtype=np.int64)
    clean = np.where(good[:, None], digits, 0) if not good.all() else digits
    ns = clean.astype(np.int64) @ weights  # the point's column weighs 0
    if frac.shape[1] > 3:  # more than nanoseconds: round half to even
        first = frac[:, 3].astype(np.int64)
        sticky = (frac[:, 4:] > 0).any(axis=1) if frac.shape[1] > 4 else np.zeros(m, bool)
        up = (first > 5) | ((first == 5) & (sticky | (ns % 2 == 1)))
        ns = ns + (up & good)
    return good, np.where(negative, -ns, ns) if signed else ns


def _slow_text_to_ns(text: bytes) -> tuple[int, int, bool]:
    """One odd time text -> (ns, state, was a JSON string), exactly, through Decimal."""
    body = text.strip()
    was_string = body[:1] == b'"'
    if was_string:
        try:
            spelled = json.loads(body)
        except ValueError:
            return 0, NOT_A_NUMBER, True
        if not isinstance(spelled, str):
            return 0, NOT_A_NUMBER, True
        body_text = spelled
    else:
        body_text = body.decode("ascii", errors="replace")
    try:
        number = Decimal(body_text.strip())
    except (InvalidOperation, ValueError):
        return 0, NOT_A_NUMBER, was_string
    if not number.is_finite():
        return 0, NOT_A_NUMBER, was_string
    if abs(number) >= LIMIT_NS // 1000:  # out of range: no need to scale it
        return *_clip(LIMIT_NS if number > 0 else -LIMIT_NS), was_string
    scaled = (number * 1000).to_integral_value(rounding=ROUND_HALF_EVEN)
    return *_clip(int(scaled)), was_string


_EPOCH_DECIMALS = re.compile(rb'"(?:ts|dur)"\s*:\s*-?(\d{14,})\.\d')


def looks_exact_only(sample: bytes) -> bool:
    """Whether a sample of the event list has decimal times too large for a float to
    hold to the nanosecond (14 or more integer digits are at least 1e13 > 2**43 us).

    Only a hint for which route to try first: each chunk checks its own values.
    """
    return _EPOCH_DECIMALS.search(sample) is not None
