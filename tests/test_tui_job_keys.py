"""A job on the timeline: R folds every process group of a rank at once."""

from __future__ import annotations

import time
from pathlib import Path

from tests.job_fixtures import Gpu, Step, rank_doc, straggler_job, write
from tui.app import AttnTuiApp
from tui.job_session import open_targets
from tui.preload import Preloads


async def _wait(pilot, done, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)
    await pilot.pause()


def _ready(app) -> bool:
    return all(p.state != "loading" and p.session is not None and p.session.analysed
               for p in app.panes)


def _app(paths: list[str]) -> AttnTuiApp:
    targets, load = open_targets(paths)
    return AttnTuiApp(targets, loader=Preloads(targets, load=load).loader, theme="attn-dark")


async def test_R_folds_and_unfolds_the_whole_rank(tmp_path: Path) -> None:
    app = _app(straggler_job(tmp_path, slow=1))
    async with app.run_test(size=(150, 45)) as pilot:
        await _wait(pilot, lambda: _ready(app), "the job to load")
        pane = app.panes[0]
        model, job = pane.model, pane.session.job
        rank2 = set(range(*job.ranks[2].groups))
        assert len(rank2) >= 2  # its host process and its GPU
        gpu_lane = next(i for i, s in enumerate(model.rows) if s.kind == "lane"
                        and s.group in rank2 and model.trace.groups[s.group].kind == "gpu")
        model.cursor = gpu_lane  # on one of its lanes, not a header
        before = set(model.folds.groups_folded)
        await pilot.press("R")
        assert model.folds.groups_folded == before | rank2
        header = model.cursor_spec
        assert header is not None and header.kind == "group" and header.group == min(rank2)
        shown = {s.group for s in model.rows if s.kind == "lane"}
        assert not shown & rank2 and shown  # the other ranks' lanes still shown
        await pilot.press("R")  # from its header: unfolds it, as the job opened
        assert model.folds.groups_folded == before
        assert {s.group for s in model.rows if s.kind == "lane"} >= (
            rank2 - before)


async def test_R_on_one_trace_says_what_it_is_for(tmp_path: Path) -> None:
    path = write(tmp_path / "one.json", rank_doc(None, None, [Step(0, 100, [Gpu("k", 1, 20)])]))
    app = _app([path])
    async with app.run_test(size=(120, 40)) as pilot:
        await _wait(pilot, lambda: _ready(app), "the trace to load")
        model = app.panes[0].model
        before = (set(model.folds.groups_folded), len(model.rows))
        await pilot.press("R")
        await pilot.pause()
        assert (set(model.folds.groups_folded), len(model.rows)) == before
        assert any("this is one trace" in str(n.message) for n in app._notifications)
