"""Small vectorised helpers over index ranges (no per-range Python loop)."""

from __future__ import annotations

import numpy as np


def concat_ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``concatenate([arange(lo[i], hi[i]) for i])``, computed without a loop."""
    lo = np.asarray(lo, dtype=np.int64)
    lengths = np.maximum(np.asarray(hi, dtype=np.int64) - lo, 0)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return np.repeat(lo - offsets, lengths) + np.arange(total, dtype=np.int64)


def range_owner(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each element of ``concat_ranges(lo, hi)``, the index of its range."""
    lengths = np.maximum(np.asarray(hi, dtype=np.int64) - np.asarray(lo, dtype=np.int64), 0)
    return np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)


def unique_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(matrix, axis=0, return_inverse=True)`` of an integer matrix, faster:
    each column is coded by its sorted distinct values and the codes are combined into
    one int64 per row, most significant column first (so the rows come out in the same
    order); when the codes could not fit in 63 bits, numpy's own row sort is used.
    Columns and combined codes of a small range are coded by counting, not sorting
    (``distinct_codes``)."""
    n, width = matrix.shape
    if n == 0 or width == 0:
        found, inverse = np.unique(matrix, axis=0, return_inverse=True)
        return found, np.asarray(inverse).reshape(-1)
    key = np.zeros(n, dtype=np.int64)
    room = 1
    radices = []
    for j in range(width):
        values, codes = distinct_codes(matrix[:, j])
        room *= int(values.shape[0])
        if room >= 1 << 62:
            found, inverse = np.unique(matrix, axis=0, return_inverse=True)
            return found, np.asarray(inverse).reshape(-1)
        key = key * int(values.shape[0]) + codes
        radices.append(values)
    distinct, inverse = distinct_codes(key)
    found = np.empty((distinct.shape[0], width), dtype=matrix.dtype)
    for j in range(width - 1, -1, -1):  # the key's digits back into each column's value
        values = radices[j]
        distinct, digit = np.divmod(distinct, values.shape[0])
        found[:, j] = values[digit]
    return found, inverse


def distinct_codes(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(column, return_inverse=True)``: by counting when the values span a
    range not much wider than the column (ids, kinds, small codes), else by sorting."""
    column = np.asarray(column, dtype=np.int64).reshape(-1)
    lo, hi = int(column.min()), int(column.max())
    if hi - lo <= 4 * column.shape[0] + 4096:
        shifted = column - lo
        present = np.bincount(shifted, minlength=hi - lo + 1) > 0
        code_of = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present).astype(np.int64) + lo, code_of[shifted]
    values, inverse = np.unique(column, return_inverse=True)
    return values, np.asarray(inverse, dtype=np.int64).reshape(-1)


def inside_same_key(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per interval: whether it starts inside an earlier interval of the same ``key``
    (intervals in start order, longest first on equal starts; an earlier one of the
    same start and length counts as enclosing it).  One pass per distinct key."""
    inside = np.zeros(key.shape[0], dtype=bool)
    order = np.argsort(key, kind="stable")  # start order kept within each key
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for part in np.split(order, bounds):
        if part.shape[0] > 1:
            reach = np.maximum.accumulate(end[part])  # furthest end so far
            inside[part[1:]] = start[part[1:]] < reach[:-1]
    return inside


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of integers (or bools, or strings), never by NumPy's own:
    from NumPy 2.3, ``unique`` asked for the values alone hashes them (about ten
    times slower than a sort on 300,000 ints) and imports ``numpy.ma`` on its first
    call (20 ms of a reopened command that uses nothing else of it).  Small
    non-negative integers (lanes, kinds, ids) are found by counting, others by a sort."""
    a = np.asarray(values).reshape(-1)
    if a.dtype.kind in "iu" and a.shape[0]:
        lo, hi = int(a.min()), int(a.max())
        if lo >= 0 and hi < 4 * a.shape[0] + 1024:
            found = np.flatnonzero(np.bincount(a.astype(np.intp), minlength=hi + 1))
            return found.astype(a.dtype)
    ordered = np.sort(a)
    if ordered.shape[0] < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
