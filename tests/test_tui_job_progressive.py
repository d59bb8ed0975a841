"""The app on a job's first open: the largest rank drawn first, then the whole job.

The whole job's load is held back by a gate (``tui.job_session.load_job_session``
wrapped for its one-stage calls), so the first rank's stage can be looked at for as
long as the test needs, whatever the machine's speed.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import tui.job_session as job_session
from profiling.analysis.job_index import THREADS_ENV
from profiling.analysis.job_progressive import MIN_BYTES_ENV
from profiling.errors import AttnTuiError
from tests.test_job_progressive import uneven_job
from tests.test_tui_pilot import wait_until
from tui.app import AttnTuiApp
from tui.commands.open import LOADER_THREAD_PREFIX
from tui.job_progressive import pending
from tui.preload import Preloads


class Gate:
    """Holds the whole job's load until ``open``; ``fail``: it raises instead."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> None:
        self.event = threading.Event()
        real = job_session.load_job_session

        def gated(*args, **kwargs):  # noqa: ANN202 - a JobSession
            if not kwargs.get("progressive"):  # the whole job's load, behind the first rank
                self.event.wait(120)
                if fail:
                    raise AttnTuiError("cannot read job.rank1.json", "job.rank1.json")
            return real(*args, **kwargs)

        monkeypatch.setattr(job_session, "load_job_session", gated)
        monkeypatch.setenv(MIN_BYTES_ENV, "0")
        monkeypatch.delenv(THREADS_ENV, raising=False)

    def open(self) -> None:
        self.event.set()


def _app(paths: list[str]) -> AttnTuiApp:
    targets, load = job_session.open_targets(paths)
    return AttnTuiApp(targets, loader=Preloads(targets, load=load).loader, theme="attn-dark")


def _status(pane) -> str:
    return str(pane.query_one("#status").render())


def _ranks_shown(model) -> set[str]:
    return {s.label.split(" · ")[0] for s in model.rows if s.kind == "group"}


def _messages(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _analysed(app) -> bool:
    pane = app.panes[0]
    return pane.state == "ready" and pane.session is not None and not pane.busy


async def test_the_first_rank_is_shown_then_every_rank_with_the_view_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    app = _app(uneven_job(tmp_path))
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_until(pilot, lambda: _analysed(app), "the first rank", timeout=60.0)
            pane = app.panes[0]
            assert pending(pane.session) is not None
            assert _ranks_shown(pane.model) == {"rank 2"}
            assert "rank 2 of 4 shown · loading 3 more ranks …" in _status(pane)
            model = pane.model
            t0 = model.origin + (model.viewport.total // 4)
            model.show_range(int(t0), int(t0 + 500_000))  # zoomed in on the first rank
            window = (model.origin + model.viewport.start, model.viewport.span)
            kernel = next(i for i in range(len(model.trace))
                          if model.trace.name(i) == "attn_kernel")
            model.select(kernel)
            model.viewport.show(window[0] - model.origin, window[0] - model.origin + window[1],
                                margin=0.0)
            await pilot.press("8")  # the Ranks view needs every rank
            await pilot.pause()
            assert pane.view == "timeline"
            assert any("other 3 ranks are still loading" in m for m in _messages(app))
            app.clear_notifications()
            # waiting for the whole job: threads that quitting does not wait for
            loaders = [t.name for t in threading.enumerate() if t.is_alive()
                       and t.name.startswith(LOADER_THREAD_PREFIX)]
            assert any("(rest of job)" in n for n in loaders), loaders
            assert any("(whole job)" in n for n in loaders), loaders
            assert all(t.daemon for t in threading.enumerate()
                       if t.name.startswith(LOADER_THREAD_PREFIX))
            folded = set(model.folds.groups_folded)
            await pilot.press("R")  # fold the rank: there is one
            await pilot.pause()
            assert model.folds.groups_folded == folded
            assert any("still loading" in m for m in _messages(app))
            app.clear_notifications()
            pane.realign()  # ranks view's `a`: needs the others too
            await pilot.pause()
            assert not pane.realigning and any("still loading" in m for m in _messages(app))
            gate.open()
            await wait_until(pilot, lambda: pending(pane.session) is None and _analysed(app),
                             "the whole job", timeout=60.0)
            whole = pane.model
            assert whole is not model
            assert _ranks_shown(whole) == {"rank 0", "rank 1", "rank 2", "rank 3"}
            assert "job: 4 ranks of 4" in _status(pane) and "loading" not in _status(pane)
            assert pane.view == "timeline"
            timeline = pane.query_one("#timeline")
            assert timeline.display and timeline.size.height > 0  # drawn, not left hidden
            assert (whole.origin + whole.viewport.start, whole.viewport.span) == pytest.approx(
                window)  # the same window (clock alignment: the rank did not move)
            assert any("All 4 ranks loaded" in m for m in _messages(app))
            chosen = whole.selected  # the same event, where rank 2 lies in the whole job
            assert whole.trace.name(chosen) == "attn_kernel" and chosen >= pane.session.job.ranks[
                2].rows[0] and int(whole.trace.ts_ns[chosen]) == int(model.trace.ts_ns[kernel])
            await pilot.press("8")  # now it shows
            await wait_until(pilot, lambda: pane.view == "ranks", "the Ranks view", timeout=60.0)
    finally:
        gate.open()


async def test_the_rest_failing_leaves_the_first_rank_with_one_notification(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, fail=True)
    app = _app(uneven_job(tmp_path))
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_until(pilot, lambda: _analysed(app), "the first rank", timeout=60.0)
            pane = app.panes[0]
            model = pane.model
            gate.open()
            await wait_until(pilot, lambda: "failed to load" in _status(pane), "the failure",
                             timeout=60.0)
            failures = [m for m in _messages(app) if "failed to load" in m]
            assert len(failures) == 1 and "cannot read job.rank1.json" in failures[0]
            assert pane.model is model and pane.state == "ready"  # the first rank stays
            assert _ranks_shown(model) == {"rank 2"}
            assert "rank 2 of 4 shown · 3 more ranks failed to load" in _status(pane)
            await pilot.press("w")  # still usable: zooms
            await pilot.press("8")
            await pilot.pause()
            assert pane.view == "timeline"
            assert any("failed to load: this needs the whole job" in m for m in _messages(app))
    finally:
        gate.open()
