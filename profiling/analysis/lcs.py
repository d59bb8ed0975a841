"""A longest common subsequence of two sequences of keys, exact at any length.

``diff`` aligns the GPU events of two instances; an annotation around a whole run
holds 60,000 of them or more.  The table of a longest common subsequence is found
bit-parallel (one big-int step per element of A over all of B, Hyyrö's
formulation) and its rows are kept to walk back the pairs: 50 MB at
``MAX_LCS_BITS`` cells.  Above that, the two halves of A are aligned against the
best split of B, found from the last rows of the forward and the backward tables
(Hirschberg), so memory stays linear and time stays that of the bit-parallel
table, about twice over.  ``difflib``, used there before, takes hours on such
sequences: few distinct kernels, each repeated thousands of times.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

MAX_LCS_BITS = 400_000_000
"""Above this many table cells (50 MB of kept rows) the problem is split in two."""


def lcs_pairs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Index pairs (i, j) of a longest common subsequence of ``a`` and ``b``, in order.
    Common ends are matched first."""
    n, m = len(a), len(b)
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and a[n - 1 - hi] == b[m - 1 - hi]:
        hi += 1
    core = _lcs(a[lo:n - hi], b[lo:m - hi])
    return ([(i, i) for i in range(lo)] + [(i + lo, j + lo) for i, j in core]
            + [(n - hi + k, m - hi + k) for k in range(hi)])


def _lcs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    if len(a) * len(b) <= MAX_LCS_BITS or len(a) < 2:
        return _lcs_core(a, b)
    mid = len(a) // 2
    forward = _last_row(a[:mid], b)  # LCS(a[:mid], b[:j]) for each j
    backward = _last_row(a[mid:][::-1], b[::-1])  # LCS(a[mid:], b[m-j:]) for each j
    split = int(np.argmax(forward + backward[::-1]))
    right = _lcs(a[mid:], b[split:])
    return _lcs(a[:mid], b[:split]) + [(i + mid, j + split) for i, j in right]


def _masks(b: Sequence[Hashable]) -> dict[Hashable, int]:
    masks: dict[Hashable, int] = {}
    for j, x in enumerate(b):
        masks[x] = masks.get(x, 0) | (1 << j)
    return masks


def _last_row(a: Sequence[Hashable], b: Sequence[Hashable]) -> np.ndarray:
    """``LCS(a, b[:j])`` for j = 0..len(b), from the table's last row (no row kept)."""
    m = len(b)
    masks, full = _masks(b), (1 << m) - 1
    v = full
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
    bits = np.unpackbits(np.frombuffer(v.to_bytes((m + 7) // 8 or 1, "little"), np.uint8),
                         bitorder="little")[:m]
    return np.concatenate(([0], np.cumsum(1 - bits.astype(np.int64))))


def _lcs_core(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Bit-parallel LCS: row i's bit j is 0 where L[i][j+1] = L[i][j] + 1."""
    if not a or not b:
        return []
    m = len(b)
    masks, full = _masks(b), (1 << m) - 1
    v = full
    rows = [v]
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    pairs: list[tuple[int, int]] = []
    i, j = len(a), m
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            i, j = i - 1, j - 1
            pairs.append((i, j))
        elif (rows[i] >> (j - 1)) & 1:  # L[i][j-1] == L[i][j]: b[j-1] is B's alone
            j -= 1
        else:
            i -= 1
    pairs.reverse()
    return pairs
