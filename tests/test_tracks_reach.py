"""``make_track``'s ``argmax`` (the earliest event reaching furthest, per position)
against its definition, on events that overlap in every way."""

from __future__ import annotations

import numpy as np

from tests.fixtures.flat_trace import flat_trace
from tui.tracks import make_track


def test_argmax_is_the_last_event_that_reached_past_all_before_it() -> None:
    trace = flat_trace(2_000, seed=5, memcpy_every=0)
    rng = np.random.default_rng(1)
    # overlapping, nested, equal ends and zero lengths: reshuffle the durations
    trace.dur_ns[:] = rng.choice([0, 1_000, 5_000, 50_000, 400_000], size=len(trace))
    track = make_track(trace, np.arange(len(trace)), trace.start_ns)
    best, ref = -np.inf, []
    for i, end in enumerate(track.end.tolist()):
        if end > best:  # strictly further: ties keep the earlier event
            best, last = end, i
        ref.append(last)
    assert track.argmax.tolist() == ref
    assert track.argmax.dtype == np.int64
    assert len(set(ref)) > 10 and ref != list(range(len(ref)))  # the test can tell
