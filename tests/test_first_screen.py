"""The first screen's model and tracks are made on the pane's loading thread
(tui.first_screen), not by the first frame on the UI thread.

The pane must open with the same rows, folds and window as a model made on the UI
thread, find the first screen's tracks already built (the point of the move), and
take the model only once (a model is one pane's state)."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.job_fixtures import straggler_job
from tests.test_tui_pilot import wait_loaded
from tui.app import AttnTuiApp
from tui.first_screen import first_model, new_model, prepare, screen_rows, take
from tui.job_session import open_targets
from tui.preload import Preloads
from tui.timeline_model import track_key

SAMPLE = Path(__file__).resolve().parent.parent / "sample_traces" / "naive.json.gz"


def _session(paths: list[str]):  # noqa: ANN202 - a Session
    targets, load = open_targets(paths)
    return Preloads(targets, load=load, no_cache=True).loader(targets[0], no_cache=True)


def _first_keys(model) -> set[tuple]:  # noqa: ANN001
    keys = (track_key(spec) for spec in model.rows[: screen_rows()])
    return {k for k in keys if k is not None}


def test_a_prepared_session_comes_with_its_first_screen_built() -> None:
    session = _session([str(SAMPLE)])
    assert session.timeline is None  # not made before the pane asks (see tui.first_screen)
    prepare(session)
    model = session.timeline
    assert model is not None
    built = set(model.cache._tracks)
    assert _first_keys(model) <= built  # every track of the first screen is there
    fresh = new_model(session)
    assert [s.key for s in model.rows] == [s.key for s in fresh.rows]
    assert (model.viewport.start, model.viewport.total) == (
        fresh.viewport.start,
        fresh.viewport.total,
    )
    assert take(session) is model
    assert session.timeline is None  # handed over once
    again = take(session)  # a second pane gets a model of its own
    assert again is not model and [s.key for s in again.rows] == [s.key for s in model.rows]


def test_a_job_is_prepared_compact_like_the_pane_shows_it(tmp_path: Path) -> None:
    session = _session(straggler_job(tmp_path, slow=1))
    prepare(session)
    model = session.timeline
    assert model is not None and session.job is not None
    assert not model.folds.lanes_open  # fold_for_job: every lane on one row
    assert _first_keys(model) <= set(model.cache._tracks)
    fresh = new_model(session)
    assert [s.key for s in model.rows] == [s.key for s in fresh.rows]
    for key in _first_keys(model):  # the same tracks as built on demand
        a, b = model.cache.build(key), fresh.cache.build(key)
        assert (a.rows == b.rows).all() and (a.maxend == b.maxend).all()
    folded = [i for i in range(min(screen_rows(), len(model.rows))) if model.rows[i].folded]
    assert folded and {model.rows[i].key for i in folded} <= set(model._busy)  # labels' shares
    for i in folded:  # the same busy intervals as the label computes on demand
        mine, theirs = model.summary(i), fresh.summary(i)
        assert mine is not None and theirs is not None
        assert (mine.starts == theirs.starts).all() and (mine.cum == theirs.cum).all()


def test_a_failing_preparation_leaves_it_to_the_pane() -> None:
    class Broken:
        timeline = None

        @property
        def trace(self):  # noqa: ANN202
            raise RuntimeError("no trace")

    broken = Broken()
    prepare(broken)  # type: ignore[arg-type]
    assert broken.timeline is None
    session = _session([str(SAMPLE)])
    session.timeline = None
    prepare(session)
    assert session.timeline is not None and _first_keys(session.timeline) <= set(
        session.timeline.cache._tracks
    )
    assert first_model(session).rows  # the same, made directly


async def test_the_pane_opens_with_the_model_its_loading_thread_made(monkeypatch) -> None:  # noqa: ANN001
    import tui.widgets.trace_pane as trace_pane

    made: list[tuple[str, object]] = []

    def spy(session) -> None:  # noqa: ANN001
        prepare(session)
        made.append((threading.current_thread().name, session.timeline))

    monkeypatch.setattr(trace_pane, "prepare", spy)
    targets, load = open_targets([str(SAMPLE)])
    app = AttnTuiApp(targets, loader=Preloads(targets, load=load).loader, theme="attn-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot)  # the analysis too: no thread of this app outlives it
        ((thread, model),) = made
        assert thread != threading.main_thread().name  # off the UI thread
        assert app.panes[0].model is model  # the pane took that one, not a new one
        session = app.panes[0].session
        assert session is not None and session.timeline is None


async def test_the_first_screen_is_the_rows_the_timeline_shows(monkeypatch) -> None:  # noqa: ANN001
    """``screen_rows`` (from the terminal's size) is the timeline's height in the app."""
    from tui.widgets.timeline import Timeline

    for cols, lines in ((140, 45), (200, 60)):
        monkeypatch.setenv("COLUMNS", str(cols))
        monkeypatch.setenv("LINES", str(lines))
        targets, load = open_targets([str(SAMPLE)])
        app = AttnTuiApp(targets, loader=Preloads(targets, load=load).loader, theme="attn-dark")
        async with app.run_test(size=(cols, lines)) as pilot:
            await wait_loaded(pilot)
            assert app.query_one(Timeline).size.height == screen_rows()
