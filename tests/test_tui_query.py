"""Pilot tests of the Query view (6): a query over the open files, its result as a
table of ``Text`` cells, ⏎ on a row jumping to the event on its file's timeline,
DuckDB's error as one line, and the hint when the ``[sql]`` extra is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Input, TabbedContent

from tui.app import AttnTuiApp
from tui.query_data import Answer, jump_target
from tui.widgets.query_view import QueryView

from .test_tui_pilot import wait_loaded, wait_until

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
PATHS = [str(SAMPLES / f"{n}.json.gz") for n in ("naive", "sdpa_flash")]




async def open_query(pilot, app: AttnTuiApp) -> QueryView:
    """Press 6 and wait for the Query tab (added the first time)."""
    await pilot.press("6")
    await wait_until(pilot, lambda: bool(app.query(QueryView)), "the Query tab")
    return app.query_one(QueryView)


async def run_query(pilot, view: QueryView, query: str) -> None:
    field = view.query_one(Input)
    field.value = query
    field.focus()
    await pilot.pause()
    await pilot.press("enter")
    await wait_until(pilot, lambda: view.state in ("ready", "error"), "the query")


async def test_query_runs_and_enter_jumps_to_the_event() -> None:
    app = AttnTuiApp(PATHS, theme="attn-dark")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_loaded(pilot)
        assert not app.query(QueryView)  # no tab until 6 is pressed
        view = await open_query(pilot, app)
        assert app.query_one("#files", TabbedContent).active == "query"
        await run_query(
            pilot,
            view,
            "SELECT trace, row, name, dur_us FROM events "
            "WHERE kind = 'memcpy' ORDER BY trace, ts_us",
        )
        assert view.state == "ready"
        table = view.query_one(DataTable)
        assert table.row_count == 3  # naive's three Memcpy; sdpa_flash has none
        cells = table.get_row_at(0)
        assert all(isinstance(c, Text) for c in cells)
        assert str(cells[0]) == "naive" and "Memcpy" in str(cells[2])
        row = int(str(cells[1]))
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.pane is not None and app.pane.view == "timeline", "the timeline"
        )
        pane = app.pane
        assert pane is not None and pane.path == PATHS[0]
        assert pane.model is not None and pane.model.selected == row


async def test_a_long_answer_is_held_as_a_window_that_follows_the_cursor(monkeypatch) -> None:
    """The table holds a window of the answer's rows; ⏎ jumps to the row under the
    cursor once the window has moved."""
    from tui import regions_data

    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 4)
    app = AttnTuiApp(PATHS[:1], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        view = await open_query(pilot, app)
        await run_query(pilot, view, "SELECT row, name FROM events ORDER BY row LIMIT 12")
        table = view.query_one(DataTable)
        assert view.answer is not None and len(view.answer.rows) == 12 and table.row_count == 4
        table.focus()
        for _ in range(6):
            await pilot.press("down")
        await pilot.pause()
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "6"
        row = view.answer.rows[6][0]
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.pane is not None and app.pane.view == "timeline", "the timeline"
        )
        assert app.pane.model is not None and app.pane.model.selected == row


async def test_query_error_is_one_line_and_the_view_goes_on() -> None:
    app = AttnTuiApp(PATHS[1:], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        view = await open_query(pilot, app)
        await run_query(pilot, view, "SELECT nope FROM events")
        assert view.state == "error"
        status = str(view.query_one("#query-status").render())
        assert "nope" in status and "\n" not in status.strip()
        # the next query works; one file open, so a row column alone jumps
        await run_query(pilot, view, "SELECT row, name FROM kernels WHERE region = 'attn_fwd'")
        assert view.state == "ready" and view.query_one(DataTable).row_count == 3


async def test_missing_extra_shows_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "duckdb", None)
    app = AttnTuiApp(PATHS[1:], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        view = await open_query(pilot, app)
        await pilot.pause()
        assert view.state == "missing" and view.query_one(Input).disabled
        assert "pip install 'attn-tui[sql]'" in str(view.query_one("#query-status").render())


def test_jump_target_needs_a_row_and_a_known_trace() -> None:
    answer = Answer(["trace", "row"], ["VARCHAR", "BIGINT"], [("a", 5), ("b", 7), ("zz", 1)], False)
    assert jump_target(answer, 0, ["a", "b"], [0, 2]) == (0, 5)
    assert jump_target(answer, 1, ["a", "b"], [0, 2]) == (2, 7)
    assert jump_target(answer, 2, ["a", "b"], [0, 2]) is None  # not an open file
    no_trace = Answer(["row"], ["BIGINT"], [(4,)], False)
    assert jump_target(no_trace, 0, ["a"], [1]) == (1, 4)
    assert jump_target(no_trace, 0, ["a", "b"], [0, 1]) is None  # which file?
    assert jump_target(Answer(["n"], ["BIGINT"], [(1,)], False), 0, ["a"], [0]) is None


def test_history_walks_back_and_returns_the_draft() -> None:
    from tui.query_data import History

    h = History()
    for q in ("SELECT 1", "SELECT 2", "SELECT 2", " "):
        h.add(q)
    assert h.items == ["SELECT 1", "SELECT 2"]
    assert h.step(1, "typing") is None  # nothing newer
    assert h.step(-1, "typing") == "SELECT 2"
    assert h.step(-1, "SELECT 2") == "SELECT 1"
    assert h.step(-1, "SELECT 1") is None  # nothing older
    assert h.step(1, "SELECT 1") == "SELECT 2"
    assert h.step(1, "SELECT 2") == "typing"


async def test_up_recalls_a_query_and_a_paste_keeps_every_line() -> None:
    from textual import events

    app = AttnTuiApp(PATHS[1:], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        view = await open_query(pilot, app)
        await run_query(pilot, view, "SELECT count(*) AS n FROM events")
        field = view.query_one(Input)
        field.value = ""
        field.focus()
        await pilot.press("up")
        assert field.value == "SELECT count(*) AS n FROM events"
        field.value = ""
        field.post_message(events.Paste("SELECT name\n  FROM ops\nLIMIT 1\n"))
        await pilot.pause()
        assert field.value == "SELECT name FROM ops LIMIT 1"


async def test_typing_in_the_field_inserts_once() -> None:
    app = AttnTuiApp(PATHS[1:], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        field = (await open_query(pilot, app)).query_one(Input)
        field.value = ""
        field.focus()
        await pilot.press("s", "e", "l", "6", "q")
        assert field.value == "sel6q"
