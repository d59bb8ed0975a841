"""``ranges.distinct`` is ``np.unique`` of values alone, and the code never calls the latter.

From NumPy 2.3, ``np.unique(values)`` with no ``return_*`` hashes the values and
imports ``numpy.ma`` on its first call: 20 ms of a reopened command that uses nothing
else of it (``tests/test_reopen_imports.py`` checks the commands never import it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from profiling.analysis.ranges import distinct
from tests.conftest import REPO

INTS = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.intp])


@given(hnp.arrays(INTS, st.integers(0, 400)))
def test_distinct_equals_unique_for_any_integers(values: np.ndarray) -> None:
    found = distinct(values)
    want = np.unique(values)
    assert found.dtype == values.dtype
    assert found.tolist() == want.tolist()


@given(st.lists(st.integers(0, 3000), max_size=300), st.sampled_from([0, 10**6, -7]))
def test_distinct_counts_or_sorts_alike(values: list[int], shift: int) -> None:
    """Small non-negative ids are counted, others sorted: both give the sorted set."""
    a = np.asarray(values, dtype=np.int64) + shift
    assert distinct(a).tolist() == sorted(set(a.tolist()))


def test_distinct_of_bools_strings_and_a_matrix() -> None:
    assert distinct(np.array([True, False, True])).tolist() == [False, True]
    assert distinct(np.array(["b", "a", "b"])).tolist() == ["a", "b"]
    assert distinct(np.array([[3, 1], [1, 2]])).tolist() == [1, 2, 3]


def _bare_unique_calls(path: Path) -> list[int]:
    """Lines of ``np.unique(...)`` calls that ask for the values alone."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "unique" and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("np", "numpy")
                and not any(k.arg and k.arg.startswith("return_") for k in node.keywords)):
            lines.append(node.lineno)
    return lines


def test_the_code_asks_distinct_not_numpy_for_values_alone(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("np.unique(a)\nnp.unique(a, return_inverse=True)\nnp.unique(a, axis=0)\n")
    assert _bare_unique_calls(probe) == [1, 3]  # the check finds what it looks for
    found = {str(p.relative_to(REPO)): lines
             for folder in ("profiling", "tui") for p in sorted((REPO / folder).rglob("*.py"))
             if (lines := _bare_unique_calls(p))}
    assert found == {}
