"""``kernels --json`` writes its numbers from integers (``kernels_json._us_pieces``):
the text must be ``repr(n / 1000.0)``, what ``json.dumps`` writes, for every n."""

from __future__ import annotations

import numpy as np

from profiling.analysis.kernels_json import EXACT_NS, _us_pieces


def written(ns: np.ndarray, suffix: str = "") -> list[str]:
    ints, rest = _us_pieces(ns, suffix)
    return [i + r for i, r in zip(ints, rest.tolist(), strict=True)]


def test_integer_and_fraction_pieces_are_the_float_repr():
    rng = np.random.default_rng(7)
    edges = [0, 1, 9, 10, 100, 999, 1000, 1001, 1010, 1100, 123456789, 10**12 + 5,
             EXACT_NS - 1, 2**53 // 1000]
    samples = [np.array(edges, dtype=np.int64),
               rng.integers(0, 10**6, 5000), rng.integers(0, EXACT_NS, 5000),
               rng.integers(0, 1000, 5000) * 1000 + rng.integers(0, 10, 5000)]
    for ns in samples:
        assert written(ns, ",x") == [repr(v / 1000.0) + ",x" for v in ns.tolist()]


def test_values_beyond_the_exact_range_take_repr_itself():
    for ns in (np.array([-1, 5], dtype=np.int64), np.array([EXACT_NS, 3], dtype=np.int64),
               np.array([-(10**17), 10**17 + 1], dtype=np.int64)):
        assert written(ns, "]") == [repr(v / 1000.0) + "]" for v in ns.tolist()]
    assert written(np.zeros(0, dtype=np.int64)) == []


def test_small_integer_parts_from_the_table_and_beyond_it():
    """Integer parts below ``SMALL_US`` are picked from a table; at and above it they
    are written by ``repr``: both give the float's repr, at the edge too."""
    from profiling.analysis.kernels_json import SMALL_US

    edge = SMALL_US * 1000
    for ns in (np.array([0, 1, 999, 1000, edge - 1], dtype=np.int64),
               np.array([edge - 1, edge, edge + 999], dtype=np.int64),
               np.arange(0, 5 * 10**6, 997, dtype=np.int64)):
        assert written(ns, "}") == [repr(v / 1000.0) + "}" for v in ns.tolist()]
