"""dumps_indent1 writes json.dumps(indent=1)'s bytes for any document."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiling.analysis.json_text import dumps_indent1

MIN_LIST = 16


def _doc() -> list:
    floats = [i / 7 for i in range(40)]
    return [
        {
            "region": 'attn_fwd "quoted" \u00e9',
            "device_time_us": tuple(floats),
            "tflops": [None if i % 3 else 1e-300 * i for i in range(MIN_LIST)],
            "short": [1.5, 2.5],
            "nested": {"deep": [[3, 4.25] * 10, list(range(MIN_LIST))]},
            "empty": [],
            "flag": True,
            "none": None,
        },
        [floats, {"x": 1}],
        "a string that looks like a list [1.0, 2.0]",
    ]


@pytest.mark.parametrize("kwargs", [{}, {"allow_nan": False, "default": str}])
def test_same_bytes_as_json_dumps(kwargs: dict) -> None:
    doc = _doc()
    assert dumps_indent1(doc, **kwargs) == json.dumps(doc, indent=1, **kwargs)


def test_nan_still_refused() -> None:
    doc = {"v": [1.0] * MIN_LIST + [math.nan]}
    with pytest.raises(ValueError):
        dumps_indent1(doc, allow_nan=False)
    assert dumps_indent1(doc) == json.dumps(doc, indent=1)


def test_plain_values_and_sort_keys() -> None:
    for doc in (1.5, [], {}, {"b": list(range(20)), "a": list(range(30))}):
        assert dumps_indent1(doc) == json.dumps(doc, indent=1)
        assert dumps_indent1(doc, sort_keys=True) == json.dumps(doc, indent=1, sort_keys=True)


def test_numbers_of_every_magnitude() -> None:
    """msgspec writes most of a long list; repr's exponents, NaN and the infinities,
    and ints beyond 64 bits are json's own text."""
    rng = np.random.default_rng(3)
    floats = (rng.random(20_000) * 10.0 ** rng.integers(-12, 20, 20_000)).tolist()
    floats += [0.0, -0.0, 1e-4, 9.99e-5, 1e16, 9999999999999998.0, 5e-324, -2.5e-7,
               1.7976931348623157e308, 123456.789, math.inf, -math.inf, math.nan]
    ints = [0, -1, 2**63 - 1, -(2**63), 7] * 4
    for doc in ({"f": floats}, {"i": ints}, {"big": ints + [2**70]}, {"mixed": [None, 1, 2.5] * 9}):
        assert dumps_indent1(doc) == json.dumps(doc, indent=1)
    with pytest.raises(ValueError):
        dumps_indent1({"f": floats}, allow_nan=False)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans())
def test_any_document(doc, ascii_only) -> None:
    assert dumps_indent1(doc, ensure_ascii=ascii_only) == json.dumps(doc, indent=1,
                                                                      ensure_ascii=ascii_only)
