"""A job in the TUI: one tab for its ranks, groups labelled by rank, the alignment in
the status line, and the Ranks view (8) with its tables and its jump to the timeline."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from tests.job_fixtures import Gpu, Step, rank_doc, straggler_job, write
from tui.app import AttnTuiApp
from tui.job_session import open_targets
from tui.preload import Preloads
from tui.ranks_data import RANK_COLUMNS
from tui.widgets.ranks_view import RanksView

from .test_tui_pilot import wait_until


def _ready(app) -> bool:
    return all(p.session is not None and not p.busy for p in app.panes)


async def show_ranks(app: AttnTuiApp, pilot) -> RanksView:  # noqa: ANN001 - a Pilot
    """Press 8 and wait for the Ranks view's report."""
    await pilot.press("8")
    await wait_until(pilot, lambda: bool(app.query(RanksView)) and
                     app.query_one(RanksView).data is not None, "the ranks report")
    return app.query_one(RanksView)


def _app(paths: list[str]) -> AttnTuiApp:
    targets, load = open_targets(paths)
    preloads = Preloads(targets, load=load)
    return AttnTuiApp(targets, loader=preloads.loader, theme="attn-dark")


def test_open_targets_make_one_tab_per_job(tmp_path: Path) -> None:
    (tmp_path / "job").mkdir()
    paths = straggler_job(tmp_path / "job")
    alone = write(tmp_path / "alone.json", rank_doc(None, None, [Step(0, 10, [Gpu("k", 1, 2)])]))
    targets, _ = open_targets([alone, *paths])
    assert targets == [alone, str(tmp_path / "job")]


async def test_job_opens_as_one_pane_with_ranks_view(tmp_path: Path) -> None:
    paths = straggler_job(tmp_path, slow=3)
    app = _app(paths)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        (pane,) = app.panes
        gpu_groups = [g.label for g in pane.session.trace.groups if g.kind == "gpu"]
        assert gpu_groups == [f"rank {r} · GPU {r}" for r in range(4)]
        assert not pane.model.folds.lanes_open  # a job opens compact: one row per lane
        lanes = [s for s in pane.model.rows if s.kind == "lane"]
        assert len(lanes) == len(pane.session.trace.lanes) and not [
            s for s in pane.model.rows if s.kind == "depth"]
        status = str(pane.query_one("#status", Static).render())
        assert "4 ranks of 4" in status and "aligned on clock" in status and "8 Ranks" in status
        view = await show_ranks(app, pilot)
        ranks = view.query_one("#ranks-table", DataTable)
        assert ranks.row_count == 4
        assert [str(ranks.get_row_at(i)[0]) for i in range(4)] == ["0", "1", "2", "3"]
        wait, slowest = (RANK_COLUMNS.index(c) for c in ("coll. wait", "slowest in"))
        assert str(ranks.get_row_at(3)[wait]) == "0 ns"  # the slow rank never waits
        assert [str(ranks.get_row_at(i)[slowest]) for i in range(4)] == ["", "", "", "6"]
        bars = [str(ranks.get_row_at(i)[-1]) for i in range(4)]
        assert all(b and set(b) <= set("█▓▒░·") for b in bars)
        slow = view.query_one("#stragglers-table", DataTable)
        assert slow.row_count >= 3 and str(slow.get_row_at(0)[2]) == "3"
        notes = str(view.query_one("#ranks-notes", Static).render())
        assert "rank 3 is the slowest in 3 of 3 steps" in notes
        slow.focus()
        await pilot.press("z")
        await wait_until(pilot, lambda: pane.view == "timeline", "the timeline")
        selected = pane.model.selected
        assert pane.session.job.rank_of_row(selected).rank == 3
        assert pane.session.trace.name(selected) == "ProfilerStep#1"


async def test_ranks_view_on_a_plain_trace_says_it_is_not_a_job(tmp_path: Path) -> None:
    path = write(tmp_path / "one.json", rank_doc(None, None, [Step(0, 100, [Gpu("k", 1, 20)])]))
    app = _app([path])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the trace to load")
        status = str(app.panes[0].query_one("#status", Static).render())
        assert "8 Ranks" not in status
        view = await show_ranks(app, pilot)
        assert "not a job" in str(view.query_one("#ranks-header", Static).render())
        assert view.query_one("#ranks-table", DataTable).row_count == 1


async def test_step_alignment_is_said_in_the_status_line(tmp_path: Path) -> None:
    from tui.cli import build_parser

    args = build_parser().parse_args(["open", "--align", "step", str(tmp_path)])
    targets, load = open_targets(straggler_job(tmp_path), args.align)
    app = AttnTuiApp(targets, loader=Preloads(targets, load=load).loader, theme="attn-dark")
    async with app.run_test(size=(150, 40)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        status = str(app.panes[0].query_one("#status", Static).render())
        assert "aligned on first ProfilerStep of each rank" in status


async def test_selected_collective_shows_every_rank_wait(tmp_path: Path) -> None:
    from tui.widgets.details import Details

    app = _app(straggler_job(tmp_path, slow=1))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        (pane,) = app.panes
        t = pane.session.trace
        nccl = [i for i in range(len(t)) if t.name(i).startswith("ncclKernel")]
        row = min((i for i in nccl if pane.session.job.rank_of_row(i).rank == 0),
                  key=lambda i: int(t.ts_ns[i]))
        pane.timeline_view.timeline.select_row(row)
        await pilot.pause()
        details = app.query_one(Details)
        await wait_until(pilot, lambda: details.row == row, "the details of the kernel")
        text = "\n".join(line.text for line in details._lines)
        assert "#0 on 4 ranks" in text and "rank 0 waited 200 µs" in text
        assert "last to arrive: rank 1" in text
        assert "0: 200 µs  1: 0 ns  2: 200 µs  3: 200 µs" in text
        marked = set(pane.model.link_set.marked.tolist())  # the same collective, other ranks
        peers = {i for i in nccl if int(t.ts_ns[i]) // 2_000_000 == int(t.ts_ns[row]) // 2_000_000
                 and i != row}
        assert len(peers) == 3 and peers <= marked
        assert {pane.session.job.rank_of_row(i).rank for i in peers} == {1, 2, 3}


async def test_findings_view_of_a_job_leads_with_the_straggler(tmp_path: Path) -> None:
    from tui.widgets.findings_view import FindingsView

    app = _app(straggler_job(tmp_path, slow=2))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        await pilot.press("5")
        await wait_until(pilot, lambda: bool(app.query(FindingsView)) and
                    app.query_one(FindingsView).result is not None, "the findings")
        view = app.query_one(FindingsView)
        first = view.findings[0]
        assert first.id == "straggler-rank" and first.title.startswith("rank 2 is the slowest")
        await pilot.press("z")  # its first evidence on the timeline: rank 2's step
        pane = app.panes[0]
        await wait_until(pilot, lambda: pane.view == "timeline", "the timeline")
        assert pane.session.job.rank_of_row(pane.model.selected).rank == 2


async def test_focus_rank_folds_the_other_ranks(tmp_path: Path) -> None:
    app = _app(straggler_job(tmp_path, slow=1))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        await show_ranks(app, pilot)
        app.query_one("#ranks-table", DataTable).focus()
        await pilot.press("down", "down", "f")  # rank 2
        pane = app.panes[0]
        await wait_until(pilot, lambda: pane.view == "timeline", "the timeline")
        job, folds = pane.session.job, pane.model.folds
        mine = set(range(*job.ranks[2].groups))
        assert folds.groups_folded == set(range(len(pane.session.trace.groups))) - mine
        assert job.rank_of_row(pane.model.selected).rank == 2


async def test_a_job_s_region_instances_say_their_rank(tmp_path: Path) -> None:
    from tui.widgets.regions_view import RegionsView

    app = _app(straggler_job(tmp_path, slow=3))
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        await pilot.press("2")
        await pilot.pause()
        view = app.query_one(RegionsView)
        while view.current_region is not None and view.current_region.name != "attn_fwd":
            await pilot.press("down")
        table = view.instances_table
        assert [str(c.label).strip() for c in table.columns.values()][:3] == ["#", "rank", "name"]
        job = app.panes[0].session.job
        region = view.current_region
        assert region is not None and table.row_count == len(region.instances) == 12
        ranks = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert ranks == [str(job.rank_of_row(i.row).rank) for i in region.instances]
        assert sorted(set(ranks)) == ["0", "1", "2", "3"]
