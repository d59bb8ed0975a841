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
