"""dumps_indent1 writes json.dumps(indent=1)'s bytes for any document, with its long
number lists written by msgspec (``number_lists``) or not."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiling.analysis import json_text
from profiling.analysis.json_text import MIN_LIST, dumps_indent1

LIFT = [False, True]


def _doc() -> list:
    floats = [i / 7 for i in range(MIN_LIST + 40)]
    return [
        {
            "region": 'attn_fwd "quoted" \u00e9',
            "device_time_us": tuple(floats),
            "tflops": [None if i % 3 else 1e-3 * i for i in range(MIN_LIST)],
            "tiny": [None if i % 3 else 1e-300 * i for i in range(MIN_LIST)],
            "short": [1.5, 2.5],
            "nested": {"deep": [[3, 4.25] * MIN_LIST, list(range(MIN_LIST))]},
            "empty": [],
            "flag": True,
            "bools": [True, 1.5] * MIN_LIST,
            "none": None,
        },
        [floats, {"x": 1}],
        "a string that looks like a list [1.0, 2.0]",
    ]


@pytest.mark.parametrize("lift", LIFT)
@pytest.mark.parametrize("kwargs", [{}, {"allow_nan": False, "default": str},
                                    {"sort_keys": True}, {"ensure_ascii": False}])
def test_same_bytes_as_json_dumps(kwargs: dict, lift: bool) -> None:
    doc = _doc()
    assert dumps_indent1(doc, number_lists=lift, **kwargs) == json.dumps(doc, indent=1, **kwargs)


def test_long_float_lists_are_written_by_msgspec(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lists in range take msgspec's path (which fails loudly here if taken for
    the others: a list with 1e-300 or a bool is json's)."""
    taken: list[int] = []
    encode = json_text._number_text

    def spy(values):  # type: ignore[no-untyped-def]
        text = encode(values)
        if text is not None:
            taken.append(len(values))
        return text

    monkeypatch.setattr(json_text, "_number_text", spy)
    doc = _doc()
    assert dumps_indent1(doc, number_lists=True) == json.dumps(doc, indent=1)
    # device_time_us, tflops, the ints of "deep" and its pairs, floats again in [1]
    assert sorted(taken) == sorted([MIN_LIST + 40, MIN_LIST, 2 * MIN_LIST, MIN_LIST,
                                    MIN_LIST + 40])


@pytest.mark.parametrize("lift", LIFT)
def test_nan_still_refused(lift: bool) -> None:
    doc = {"v": [1.0] * MIN_LIST + [math.nan]}
    with pytest.raises(ValueError):
        dumps_indent1(doc, number_lists=lift, allow_nan=False)
    assert dumps_indent1(doc, number_lists=lift) == json.dumps(doc, indent=1)


@pytest.mark.parametrize("lift", LIFT)
def test_plain_values_and_sort_keys(lift: bool) -> None:
    for doc in (1.5, [], {}, {"b": list(range(300)), "a": list(range(30))}):
        assert dumps_indent1(doc, number_lists=lift) == json.dumps(doc, indent=1)
        assert dumps_indent1(doc, number_lists=lift, sort_keys=True) == json.dumps(
            doc, indent=1, sort_keys=True)


@pytest.mark.parametrize("lift", LIFT)
def test_numbers_of_every_magnitude(lift: bool) -> None:
    """msgspec writes a list whose floats need no exponent in repr; a list with one
    that does, NaN, an infinity or an int beyond 64 bits is json's own text."""
    rng = np.random.default_rng(3)
    floats = (rng.random(20_000) * 10.0 ** rng.integers(-12, 20, 20_000)).tolist()
    edges = [0.0, -0.0, 1e-4, 9.99e-5, 1e16, 9999999999999998.0, 5e-324, -2.5e-7,
             1.7976931348623157e308, 123456.789, math.inf, -math.inf, math.nan]
    in_range = [f for f in floats if f == 0 or 1e-4 <= abs(f) < 1e16]
    ints = [0, -1, 2**63 - 1, -(2**63), 7] * MIN_LIST
    for doc in ({"f": floats + edges}, {"f": in_range}, {"f": [-f for f in in_range]},
                {"i": ints}, {"big": ints + [2**70]}, {"mixed": [None, 1, 2.5] * MIN_LIST},
                {"edge": [1e-4, 9999999999999998.0, -0.0, 0.0] * MIN_LIST},
                {"small": [2.5e-5, 1.0] * MIN_LIST}, {"large": [1.0, 1e16] * MIN_LIST}):
        assert dumps_indent1(doc, number_lists=lift) == json.dumps(doc, indent=1)
    with pytest.raises(ValueError):
        dumps_indent1({"f": floats + edges}, number_lists=lift, allow_nan=False)


def test_msgspec_writes_repr_where_repr_has_no_exponent() -> None:
    """The rule ``_number_text`` rests on, over 2 M floats of every digit count in
    [1e-4, 1e16) and their neighbours at both ends."""
    rng = np.random.default_rng(11)
    mags = 10.0 ** rng.uniform(-4, 16, 2_000_000)
    ends = [np.nextafter(1e-4, 1), 1e-4, np.nextafter(1e16, 0)]
    values = np.concatenate([mags, np.round(mags, 3), ends]).tolist()
    values = [v for v in values if 1e-4 <= v < 1e16]
    text = json_text._number_text(values)
    assert text is not None
    assert text.decode() == json.dumps(values, separators=(",", ":"))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans(), st.booleans())
def test_any_document(doc, ascii_only, lift) -> None:
    assert dumps_indent1(doc, number_lists=lift, ensure_ascii=ascii_only) == json.dumps(
        doc, indent=1, ensure_ascii=ascii_only)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False) | st.none() | st.integers(), min_size=MIN_LIST,
                max_size=MIN_LIST + 8))
def test_any_long_number_list(values) -> None:
    doc = {"values": values}
    assert dumps_indent1(doc, number_lists=True) == json.dumps(doc, indent=1)
