"""``listing_chunks.Chunks`` lays out every head and event once, in listing order,
in chunks of at most ``per`` units, whatever the sizes of the instances."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from profiling.analysis.listing_chunks import Chunks


def layout(counts: list[int]) -> list[tuple[str, int]]:
    """The listing's units in order: ("h", instance) then ("e", event) for each."""
    out: list[tuple[str, int]] = []
    j = 0
    for i, c in enumerate(counts):
        out.append(("h", i))
        out += [("e", j + m) for m in range(c)]
        j += c
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=12), st.integers(1, 30),
       st.integers(1, 4), st.integers(1, 4))
def test_chunks_lay_out_the_listing_in_order(counts, per, hp, ep):
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    got: list[tuple[str, int]] = []
    for c in Chunks(ptr, per, hp, ep):
        assert (c.h1 - c.h0) + (c.e1 - c.e0) <= per
        assert c.size == hp * (c.h1 - c.h0) + ep * (c.e1 - c.e0)
        slots: list = [None] * c.size
        for i, at in zip(range(c.h0, c.h1), c.head_at.tolist(), strict=True):
            slots[at : at + hp] = [("h", i)] * hp
        for j, at in zip(range(c.e0, c.e1), c.event_at.tolist(), strict=True):
            slots[at : at + ep] = [("e", j)] * ep
        assert None not in slots  # every piece placed
        runs = [u for n, u in enumerate(slots) if n == 0 or u != slots[n - 1]]
        assert len(slots) == sum(hp if u[0] == "h" else ep for u in runs)  # none overwritten
        got += runs
    assert got == layout(counts)


def test_one_huge_instance_is_split():
    ptr = np.array([0, 3, 100_003, 100_005])
    cs = list(Chunks(ptr, 1000, 11, 6))
    assert max((c.h1 - c.h0) + (c.e1 - c.e0) for c in cs) <= 1000
    assert sum(c.h1 - c.h0 for c in cs) == 3 and sum(c.e1 - c.e0 for c in cs) == 100_005
    assert len(cs) == -(-(3 + 100_005) // 1000)


def test_an_empty_listing_has_no_chunks():
    assert list(Chunks(np.array([0]), 10, 11, 6)) == []
