"""``time_texts.ns_texts`` writes every value as ``fmt_ns`` does, character for character,
and ``widest`` is the length of the longest of those texts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiling.analysis.time_texts import ns_texts, widest
from profiling.analysis.units import fmt_ns

MAGNITUDES = st.integers(0, 13).flatmap(lambda e: st.integers(-(10**e), 10**e))
HALF_WAYS = st.tuples(st.integers(1, 99_999), st.integers(1, 9)).map(
    lambda t: t[0] * 10 ** t[1] + 5 * 10 ** (t[1] - 1))  # exactly between two roundings


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(MAGNITUDES, HALF_WAYS), max_size=60), st.sampled_from([1, 2, 3, 4]))
def test_every_value_reads_as_fmt_ns(values, digits):
    texts, codes = ns_texts(np.array(values, dtype=np.int64), digits)
    assert [texts[c] for c in codes.tolist()] == [fmt_ns(v, digits) for v in values]
    assert widest(np.array(values, dtype=np.int64), digits) == max(
        (len(fmt_ns(v, digits)) for v in values), default=0)


def test_the_edges_of_each_unit():
    edges = [0, 1, 999, 1000, 1004, 1005, 1006, 9994, 9995, 9996, 99_949, 99_950, 99_951,
             999_499, 999_500, 999_501, 999_949, 999_950, 999_999, 1_000_000, 999_999_999,
             999_500_000, 999_499_999, 1_000_000_000, 999_999_999_999, 10**12, 10**15,
             -1, -1500, 123_456_789]
    for digits in (1, 2, 3, 4):
        texts, codes = ns_texts(np.array(edges), digits)
        assert [texts[c] for c in codes.tolist()] == [fmt_ns(v, digits) for v in edges]
        for each in edges:  # alone: the widest of a column of one
            assert widest(np.array([each]), digits) == len(fmt_ns(each, digits))


def test_a_column_has_one_text_per_rounded_value():
    values = np.arange(1_000_000, 2_000_000, 7)  # 1 ms to 2 ms: 1.00 ... 2.00 ms
    texts, codes = ns_texts(values)
    assert len(set(texts)) <= 101 and len(texts) < 200  # half-way values: their own
    assert codes.shape == values.shape
    texts, codes = ns_texts(np.zeros(0, dtype=np.int64))
    assert texts == [] and codes.shape == (0,)


def test_more_digits_than_the_keys_hold_are_refused():
    for made in (ns_texts, widest):
        with pytest.raises(ValueError, match="1 to 4"):
            made(np.array([1500]), 5)


def test_no_int64_is_wider_than_stored_widths_allow():
    """``instance_kernels`` refuses a stored width over ``WIDEST_TEXT``: no time's text is."""
    from profiling.analysis.time_texts import WIDEST_TEXT

    extremes = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -(10**15), 10**15])
    assert widest(extremes) == WIDEST_TEXT
