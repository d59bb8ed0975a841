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
    order); when the codes could not fit in 63 bits, numpy's own row sort is used."""
    n, width = matrix.shape
    if n == 0 or width == 0:
        found, inverse = np.unique(matrix, axis=0, return_inverse=True)
        return found, np.asarray(inverse).reshape(-1)
    key = np.zeros(n, dtype=np.int64)
    room = 1
    for j in range(width):
        values, codes = np.unique(matrix[:, j], return_inverse=True)
        room *= int(values.shape[0])
        if room >= 1 << 62:
            found, inverse = np.unique(matrix, axis=0, return_inverse=True)
            return found, np.asarray(inverse).reshape(-1)
        key = key * int(values.shape[0]) + np.asarray(codes).reshape(-1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return matrix[first], np.asarray(inverse).reshape(-1)
