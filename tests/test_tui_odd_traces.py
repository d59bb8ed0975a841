"""Traces we had never seen, driven in tmux (helper's sweep): what broke, kept broken-free.

- ↓ ↑ pgdn pgup home end and ← → on the timeline ran the ScrollView's own bindings
  (the focused widget's come first): they scrolled the view and left the row cursor
  where it was, off screen, and ← → did not pan; the help says ↓ moves the row cursor
  and ← pans.  The timeline no longer inherits them (its keys are the view's, from
  tui/keymap.py); home / end move the cursor to the first / last row.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_tui_pilot import wait_loaded, wait_until
from tui.app import AttnTuiApp
from tui.widgets.timeline import Timeline


def _many_threads(path: Path, n: int = 300) -> Path:
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{t}", "pid": 10, "tid": 1000 + t,
               "ts": 100 + t, "dur": 50} for t in range(n)]  # fmt: skip
    path.write_text(json.dumps({"traceEvents": events}))
    return path


async def test_home_and_end_move_the_row_cursor_and_the_view_follows(tmp_path: Path):
    app = AttnTuiApp([str(_many_threads(tmp_path / "threads.json"))], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        timeline = app.query_one(Timeline)
        model = app.pane.model
        last = len(model.rows) - 1
        assert last > 100
        for key, row in (("down", 1), ("down", 2), ("pagedown", 12), ("up", 11),
                         ("pageup", 1)):  # fmt: skip
            await pilot.press(key)
            assert model.cursor == row, key
        await pilot.press("w", "w")  # zoomed in, so there is somewhere to pan to
        start = model.viewport.start
        await pilot.press("right")
        assert model.viewport.start > start
        await pilot.press("left")
        assert model.viewport.start == start
        await pilot.press("end")
        await pilot.pause()
        assert model.cursor == last
        top = int(timeline.scroll_y)
        assert top <= last < top + timeline.scrollable_content_region.height
        await pilot.press("k")
        assert model.cursor == last - 1
        await pilot.press("home")
        await pilot.pause()
        assert model.cursor == 0 and int(timeline.scroll_y) == 0


async def test_a_search_for_markup_is_told_literally(tmp_path: Path, monkeypatch):
    """``/`` then ``[/]``: the outcome's notification quotes the query and was read as
    markup, so Textual's layout raised MarkupError (logged as a bug) and ``[bold red]x``
    came out as a red x."""
    logs = tmp_path / "logs"
    monkeypatch.setenv("ATTN_TUI_LOG_DIR", str(logs))
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5}
        for i, n in enumerate(["[/]", "[bold red]x[/]", "plain"])]}))  # fmt: skip
    app = AttnTuiApp([str(path)], theme="attn-dark")
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_loaded(pilot)
        for query in ("[/]", "[bold red]x"):
            await pilot.press("slash")
            await pilot.pause()
            await pilot.press(*query, "enter")
            await wait_until(pilot, lambda q=query: any(f"match '{q}'" in str(n.message)
                                                        for n in app._notifications), "the line")
            told = [n for n in app._notifications if f"match '{query}'" in str(n.message)]
            assert told and not told[-1].markup, [n.message for n in app._notifications]
    assert not logs.exists() or not any(logs.iterdir()), [
        p.read_text()[:300] for p in logs.iterdir()
    ]


def test_the_ruler_never_shows_a_cut_tick_label():
    """A trace of ten days at 80 columns: the last tick's label ``+800000 s`` was cut
    at the window's edge to ``+800``, a number the ruler does not mean; a label that
    does not fit is left off (its tick ``┊`` stays)."""
    from tui.ruler import ruler_text
    from tui.viewport import Viewport

    for total, width in ((864_000 * 10**9, 63), (864_000 * 10**9, 111), (5_000_000, 37)):
        for w in range(width - 6, width + 6):
            text = ruler_text(Viewport(total=total, width=w))
            assert len(text) == w
            for label in text.split("┊")[1:]:
                label = label.strip()
                assert not label or label.endswith("s"), (w, text)
