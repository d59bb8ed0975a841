"""A job on the timeline: R folds every process group of a rank at once."""

from __future__ import annotations

from pathlib import Path

from tests.job_fixtures import Gpu, Step, rank_doc, straggler_job, write
from tui.app import AttnTuiApp
from tui.job_session import open_targets
from tui.preload import Preloads

from .test_tui_pilot import wait_until


def _ready(app) -> bool:
    return all(p.session is not None and not p.busy for p in app.panes)


def _app(paths: list[str]) -> AttnTuiApp:
    targets, load = open_targets(paths)
    return AttnTuiApp(targets, loader=Preloads(targets, load=load).loader, theme="attn-dark")


async def test_R_folds_and_unfolds_the_whole_rank(tmp_path: Path) -> None:
    app = _app(straggler_job(tmp_path, slow=1))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
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
        await wait_until(pilot, lambda: _ready(app), "the trace to load")
        model = app.panes[0].model
        before = (set(model.folds.groups_folded), len(model.rows))
        await pilot.press("R")
        await pilot.pause()
        assert (set(model.folds.groups_folded), len(model.rows)) == before
        assert any("this is one trace" in str(n.message) for n in app._notifications)


def _skewed(folder: Path) -> list[str]:
    """Two ranks whose clocks are 5 ms apart and whose first steps are 40 µs apart."""
    s0 = [Step(100, 300, [Gpu("k0", 150, 50)]), Step(300, 500, [Gpu("k1", 350, 50)])]
    s1 = [Step(140, 340, [Gpu("k0", 190, 50)]), Step(340, 540, [Gpu("k1", 390, 50)])]
    return [write(folder / "r0.json", rank_doc(0, 2, s0, base_ns=1_000_000_000)),
            write(folder / "r1.json", rank_doc(1, 2, s1, base_ns=1_005_000_000))]


def _steps(trace) -> list[int]:
    return [int(trace.ts_ns[i]) for i in range(len(trace)) if trace.name(i) == "ProfilerStep#1"]


async def test_alignment_changes_from_the_ranks_view_and_the_palette(tmp_path: Path) -> None:
    from textual.widgets import Static

    from tui.widgets.ranks_view import RanksView

    app = _app(_skewed(tmp_path))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        pane = app.panes[0]
        old = pane.session
        a, b = _steps(old.trace)
        assert b - a == 5_040_000  # on the clocks
        pane.model.folds.groups_folded.add(0)
        await pilot.press("8")
        await wait_until(pilot, lambda: bool(app.query(RanksView)) and
                    app.query_one(RanksView).data is not None, "the ranks report")
        await pilot.press("a")
        await wait_until(pilot, lambda: pane.session is not old and not pane.busy,
                    "the job aligned on steps")
        job = pane.session.job
        assert job.alignment == "step" and len(set(_steps(pane.session.trace))) == 1
        assert _steps(old.trace) == [a, b]  # the old session's trace is untouched
        status = str(pane.query_one("#status", Static).render())
        assert "aligned on first ProfilerStep of each rank" in status
        assert 0 in pane.model.folds.groups_folded  # the folds kept
        await wait_until(pilot, lambda: pane.view == "ranks" and app.query_one(RanksView).data
                    is not None and "first ProfilerStep" in app.query_one(RanksView).data.header,
                    "the ranks report again")
        step = pane.session
        app.run_in_view("ranks", "align")  # as the palette's "Ranks: Switch the alignment"
        await wait_until(pilot, lambda: pane.session is not step and not pane.busy,
                    "the job back on its clocks")
        assert pane.session.job.alignment == "clock" and _steps(pane.session.trace) == [a, b]
        assert "aligned on clock" in str(pane.query_one("#status", Static).render())
