"""On an 80x24 terminal no text is out of reach: a finding's suggestion longer than
its panel scrolls (tab reaches the panel), and the Ranks view's notes (findings,
the collectives furthest apart) stay on screen below its two tables, where they
used to fall off the bottom."""

from __future__ import annotations

from pathlib import Path

from textual.containers import VerticalScroll

from tests.job_fixtures import straggler_job
from tests.test_tui_pilot import wait_loaded, wait_until
from tests.test_tui_ranks import _app, _ready, show_ranks
from tui.app import AttnTuiApp

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"


async def test_a_long_suggestion_scrolls_into_view() -> None:
    app = AttnTuiApp([str(SAMPLES / "naive.json.gz")], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("5")
        box = app.query_one("#finding-detail-box", VerticalScroll)
        await wait_until(pilot, lambda: box.max_scroll_y > 0, "a suggestion longer than its panel")
        await pilot.press("tab")
        assert app.focused is box
        await pilot.press("end")
        await wait_until(pilot, lambda: box.scroll_y == box.max_scroll_y, "the panel's end")
        assert box.scroll_y > 0


async def test_the_ranks_notes_stay_on_screen(tmp_path: Path) -> None:
    app = _app(straggler_job(tmp_path, slow=3))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: _ready(app), "the job to load")
        await show_ranks(app, pilot)
        await pilot.pause()
        box = app.query_one("#ranks-notes-box", VerticalScroll)
        screen = app.screen.region
        assert box.region.height >= 2 and screen.contains_region(box.region)
