"""``TimelineModel.prefetch`` (the tracks of a screen's rows built at once, on
threads, before ``render_line`` draws them one by one) builds exactly the tracks
the rows would have built themselves, folded or open, and every one of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiling.trace import load_trace
from tui.timeline_model import TimelineModel, track_key
from tui.tracks import Track

SAMPLES = Path(__file__).resolve().parents[1] / "sample_traces"


def _same(a: Track, b: Track) -> bool:
    parts = ("rows", "ts", "end", "maxend", "argmax")
    same = all(np.array_equal(getattr(a, p), getattr(b, p)) for p in parts)
    if a.special is None or b.special is None:
        return same and a.special is b.special
    return same and _same(a.special, b.special)


@pytest.mark.parametrize("open_", [False, True], ids=["folded", "open"])
@pytest.mark.parametrize("name", ["naive.json.gz", "sdpa_flash.json.gz"])
def test_prefetch_builds_what_the_rows_build(name: str, open_: bool) -> None:
    trace = load_trace(SAMPLES / name)
    fetched, drawn = TimelineModel(trace), TimelineModel(trace)
    for model in (fetched, drawn):
        model.set_all_folds(open_)
    fetched.prefetch(0, len(fetched.rows))
    keys = [k for k in map(track_key, fetched.rows) if k is not None]
    assert len(keys) > 2 and any(k[0] == "group" for k in keys) != open_
    assert all(k in fetched.cache._tracks for k in keys)  # every row's track is ready
    for spec in drawn.rows:
        mine, theirs = drawn.track(spec), fetched.track(spec)
        assert (mine is None) == (theirs is None)
        assert mine is None or theirs is None or _same(mine, theirs)


def test_prefetch_builds_only_rows_on_screen() -> None:
    model = TimelineModel(load_trace(SAMPLES / "naive.json.gz"))
    model.set_all_folds(True)
    model.prefetch(-5, 0)
    model.prefetch(len(model.rows), len(model.rows) + 50)
    assert model.cache._tracks == {}  # rows before the first or past the last: none
    model.prefetch(0, 3)
    wanted = {k for k in map(track_key, model.rows[:3]) if k is not None}
    assert wanted and set(model.cache._tracks) == wanted
