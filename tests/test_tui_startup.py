"""The first frame comes before the analysis: early loads, lazy links, the
regions/ops views waiting for ``Session.analyse`` (issue 5, TUI goals)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.errors import TraceError
from tests.fixtures.synthetic import naive_like_doc, write_doc
from tui.app import AttnTuiApp
from tui.preload import Preloads
from tui.session import Session, load_session
from tui.widgets.regions_view import RegionsView
from tui.widgets.timeline import Timeline

from .test_tui_pilot import wait_loaded


@pytest.fixture
def naive_path(tmp_path: Path) -> Path:
    return write_doc(tmp_path / "naive.json", naive_like_doc(2))


def test_load_session_leaves_the_analysis_for_later(naive_path):
    session = load_session(naive_path)
    assert not session.analysed and not session.links.ready
    assert session.regions == [] and session.ops is None
    stages: list[str] = []
    session.analyse(lambda stage, fraction: stages.append(stage))
    assert session.analysed and session.links.ready
    assert "attn_fwd" in [r.name for r in session.regions] and session.ops
    assert stages == ["links", "regions", "op table", "done"]
    session.analyse(lambda stage, fraction: stages.append(stage))  # once only
    assert stages[-1] == "done" and len(stages) == 4


def test_analysis_failures_become_the_views_errors(naive_path, monkeypatch):
    session = load_session(naive_path)

    def boom(trace):
        raise ValueError("no op table today")

    monkeypatch.setattr("tui.session.key_averages", boom)
    session.analyse()
    assert session.analysed and session.regions and session.ops is None
    assert "no op table today" in session.ops_error


def test_preloads_hand_over_the_running_load_with_its_progress(naive_path, tmp_path):
    gate, reached = threading.Event(), threading.Event()
    calls: list[str] = []

    def load(path, progress=None, no_cache=False):
        calls.append(path)
        if progress is not None:
            progress("decode", 0.5)
        reached.set()
        gate.wait(10)
        return load_session(path, progress, no_cache=no_cache)

    pre = Preloads([str(naive_path), str(tmp_path / "missing.json")], load=load)
    assert reached.wait(10)
    seen: list[tuple[str, float]] = []
    threading.Timer(0.2, gate.set).start()  # the load goes on once the app waits for it
    session = pre.loader(str(naive_path), lambda stage, f: seen.append((stage, f)))
    assert isinstance(session, Session)
    assert seen[0] == ("decode", 0.5)  # progress from before the app asked, replayed
    assert seen[-1] == ("done", 1.0)
    with pytest.raises(TraceError):  # the early load's error, raised where the pane waits
        pre.loader(str(tmp_path / "missing.json"))
    pre.loader(str(naive_path))  # asked again: a fresh load
    assert calls.count(str(naive_path)) == 2


class _SlowAnalysis(Session):
    """A session whose analysis waits for the test."""

    gate: threading.Event

    def analyse(self, progress=None) -> None:
        self.gate.wait(10)
        super().analyse(progress)


async def test_timeline_paints_before_the_analysis_and_views_wait_for_it(naive_path):
    gate = threading.Event()

    def loader(path, progress=None, no_cache=False):
        trace = load_session(path).trace
        session = _SlowAnalysis(path, AnalysedTrace(trace))
        session.gate = gate
        return session

    app = AttnTuiApp([str(naive_path)], loader=loader, theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.pane
        while pane.state == "loading":
            await pilot.pause(0.02)
        await pilot.pause()
        assert app.query_one(Timeline).model.rows  # lanes on screen, links not computed
        assert not pane.session.analysed and not pane.session.links.ready
        assert "analysing" in str(pane.query_one("#status").render())
        await pilot.press("2")
        assert pane.query_one("#views").current == "analysing"
        assert not app.query(RegionsView)
        gate.set()
        await wait_loaded(pilot)
        await pilot.pause()
        assert pane.query_one("#views").current == "regions"
        assert app.query_one(RegionsView).regions
        assert "analysing" not in str(pane.query_one("#status").render())


async def test_busy_until_the_screen_shows_the_analysis(naive_path, monkeypatch):
    """``session.analysed`` turns true on the analysis thread before the UI thread
    redraws the status line; ``TracePane.busy`` (what screenshots and tests wait
    on) stays true until then (a loaded CI machine snapshotted 'analysing…')."""
    from tui.widgets.trace_pane import TracePane

    gate, held = threading.Event(), threading.Event()
    post = TracePane._post

    def held_post(self, fn, *args):
        if fn.__name__ == "_analysed":
            held.set()
            gate.wait(10)
        post(self, fn, *args)

    monkeypatch.setattr(TracePane, "_post", held_post)
    app = AttnTuiApp([str(naive_path)], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.pane
        while not held.is_set():
            await pilot.pause(0.02)
        await pilot.pause()
        assert pane.session.analysed and pane.busy
        assert "analysing" in str(pane.query_one("#status").render())
        gate.set()
        await wait_loaded(pilot)
        assert not pane.busy
        assert "analysing" not in str(pane.query_one("#status").render())
