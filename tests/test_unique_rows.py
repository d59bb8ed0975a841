"""``ranges.unique_rows`` is ``np.unique(table, axis=0, return_inverse=True)`` on tables
of counts like ``kernels``' (what each instance launched), narrow and too wide."""

from __future__ import annotations

import numpy as np
import pytest

from profiling.analysis.ranges import unique_rows


@pytest.mark.parametrize("shape, top", [((0, 6), 1), ((1, 6), 1), ((500, 6), 3),
                                        ((2000, 6), 40), ((300, 3), 2**20),
                                        ((300, 6), 2**40)])  # the last too wide: axis=0
def test_unique_rows_are_numpys(shape: tuple[int, int], top: int) -> None:
    rng = np.random.default_rng(shape[0] + top)
    table = rng.integers(0, top, shape, dtype=np.int64)
    want, want_which = np.unique(table, axis=0, return_inverse=True)
    unique, which = unique_rows(table)
    assert np.array_equal(unique, want)
    assert np.array_equal(which, np.asarray(want_which).reshape(-1))
    assert np.array_equal(unique[which], table)
