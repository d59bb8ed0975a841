"""Issue 12's TUI points about the app around the views (a new user's first hour),
driven with Pilot at 80x24 and 140x45: the screenshot folder, Tab, the header and
its rank, the footer's edge, the palette."""

from __future__ import annotations

import pytest
from textual.fuzzy import Matcher
from textual.widgets import DataTable, Tabs

from tests.fixtures.synthetic import naive_like_doc, write_doc
from tests.fixtures.tui_first_hour import SIZES, make_app, messages, write_naive
from tui.screenshot import SCREENSHOT_DIR_ENV
from tui.widgets.fit_footer import PALETTE_EDGE, FitFooter, FooterItem, fit, placed
from tui.widgets.ops_view import OpsView
from tui.widgets.timeline import Timeline

from .test_tui_pilot import wait_loaded, wait_until


@pytest.fixture
def naive_path(tmp_path):
    return write_naive(tmp_path)


def _status(app) -> str:
    return str(app.pane.query_one("#status").render())


# ---- 8: ctrl+s says where the SVG went, in the folder it is given ----


@pytest.mark.parametrize("size", SIZES)
async def test_screenshot_goes_to_the_env_folder_and_says_where(naive_path, tmp_path, monkeypatch,
                                                                size):  # fmt: skip
    folder = tmp_path / "shots" / "new"
    monkeypatch.setenv(SCREENSHOT_DIR_ENV, str(folder))
    monkeypatch.chdir(tmp_path)
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        files = list(folder.glob("*.svg"))
        assert len(files) == 1 and not list(tmp_path.glob("*.svg"))
        assert any(str(files[0]) in m for m in messages(app))


async def test_screenshot_folder_option_wins_over_the_env(naive_path, tmp_path, monkeypatch):
    monkeypatch.setenv(SCREENSHOT_DIR_ENV, str(tmp_path / "env"))
    app = make_app(naive_path, screenshot_dir=str(tmp_path / "option"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert len(list((tmp_path / "option").glob("*.svg"))) == 1
    assert not (tmp_path / "env").exists()


# ---- 12: Tab never parks the focus where the keys do nothing ----


@pytest.mark.parametrize("size", SIZES)
async def test_tab_keeps_the_keys_working(naive_path, tmp_path, size):
    other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    app = make_app(naive_path, other)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        for _ in range(3):
            await pilot.press("tab")
            assert not isinstance(app.focused, Tabs)
        await pilot.press("1")
        app.query_one(Timeline).focus()
        for presses in range(1, 4):  # wherever Tab leaves the focus, the timeline keys work
            await pilot.press(*["tab"] * presses)
            assert not isinstance(app.focused, Tabs)
            span, cursor = model.viewport.span, model.cursor
            await pilot.press("w", "J")
            assert model.viewport.span < span and model.cursor != cursor, app.focused
        app.query_one(Timeline).focus()
        cursor = model.cursor
        await pilot.press("k")
        assert model.cursor == cursor - 1


# ---- 13 and 17: the header names the file and its rank ----


@pytest.mark.parametrize("size", SIZES)
async def test_header_names_the_active_file_and_its_rank(tmp_path, size):
    doc = naive_like_doc(2)
    doc["distributedInfo"].update(rank=3, world_size=8)
    ranked = write_doc(tmp_path / "rank3_trace.json", doc)
    plain = naive_like_doc(2)
    del plain["distributedInfo"]
    unranked = write_doc(tmp_path / "plain_trace.json", plain)
    app = make_app(ranked, unranked)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        assert "rank3_trace.json · rank 3 of 8" in _status(app)
        await pilot.press("right_square_bracket")
        assert "plain_trace.json" in _status(app) and "rank" not in _status(app)


# ---- 14: the footer keeps off the palette key's edge ----


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (140, 45)])
async def test_footer_keys_end_before_the_palette_key(naive_path, size):
    app = make_app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        for view, name in (("1", "timeline"), ("3", "ops"), ("1", "timeline")):
            await pilot.press(view)
            await wait_until(pilot, lambda name=name: app.pane.view == name, f"view {name}")
            footer = app.query_one(FitFooter)
            shown = footer.shown
            (edge, palette), others = shown[-1], shown[:-1]
            assert palette.action == "command_palette"
            assert {"help", "quit"} <= {item.action for _, item in others}
            assert max(x + len(item.label) for x, item in others) < edge - len(PALETTE_EDGE)
            # what is drawn is what ``shown`` says: each label at its cell
            line = footer.render().plain
            assert line.endswith("^p palette") and len(line) == size[0], size
            for x, item in shown:
                assert line[x:x + len(item.label)] == item.label


async def test_footer_follows_the_focused_view_and_a_click_presses_its_key(naive_path):
    app = make_app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        footer = app.query_one(FitFooter)
        timeline_keys = {item.action for _, item in footer.shown}
        await pilot.press("3")
        await wait_until(pilot, lambda: "sort" in " ".join(i.action for _, i in footer.shown),
                         "the Ops view's keys in the footer")
        ops_keys = {item.action for _, item in footer.shown}
        assert ops_keys != timeline_keys and "sort" in " ".join(ops_keys)
        # a click on "? Help" shows the help, as pressing ? does
        x, _ = next((x, i) for x, i in footer.shown if i.action == "help")
        await pilot.click(FitFooter, offset=(x + 1, 0))
        await wait_until(pilot, lambda: app.screen is not app.screen_stack[0], "the help screen")


def test_placed_puts_the_palette_at_the_edge_and_keeps_help():
    def item(display, description, action):
        return FooterItem(display, display, description, action, True, "")

    keys = [item("w", "Zoom in", "zoom"), item("s", "Zoom out", "out"),
            item("?", "Help", "help"), item("q", "Quit", "quit")]
    palette = item("^p", "palette", "command_palette")
    assert [i.action for _, i in placed(keys, palette, 80)] == [
        "zoom", "out", "help", "quit", "command_palette"]
    assert placed(keys, palette, 80)[-1][0] == 80 - len("^p palette")
    narrow = placed(keys, palette, 40)  # room for 40 - 11 cells: "s Zoom out" goes
    assert [i.action for _, i in narrow] == ["zoom", "help", "quit", "command_palette"]
    assert [x for x, _ in narrow][:3] == [0, 10, 17]


def test_fit_drops_from_the_end_but_keeps_help():
    assert fit([5, 5, 5], [False, False, False], 15) == [True, True, True]
    assert fit([5, 5, 5], [False, False, False], 12) == [True, True, False]
    assert fit([5, 5, 5], [False, False, True], 12) == [True, False, True]


# ---- 16: the palette has every action and one help ----


async def test_a_late_focus_in_a_hidden_tab_does_not_switch_back(naive_path, tmp_path):
    """Focusing is deferred: a view's focus asked for just before a tab switch (a
    palette action on the Ops table, then "File: ...") landed in the hidden tab, and
    Textual then showed that tab again (on a loaded machine the second file's tab
    never came).  The tab stays, and its own view takes the focus."""
    app = make_app(naive_path, write_doc(tmp_path / "b.json", naive_like_doc(2)))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        await wait_until(pilot, lambda: app.query(OpsView), "the Ops view")
        app.query_one(OpsView).table.focus()  # deferred, as every view's focus_view is
        app.show_file(1)
        second = app.panes[1]
        await wait_until(pilot, lambda: app.focused is not None
                         and second in app.focused.ancestors, "focus in the second file")
        assert app.pane is second


async def test_a_tab_switch_still_queued_at_quit_is_dropped(naive_path, tmp_path):
    """A loaded machine ran the file tab's TabActivated after the app had torn its
    tabs down (a test had failed, and the app then raised NoMatches on its way out)."""
    from types import SimpleNamespace

    app = make_app(naive_path, write_doc(tmp_path / "b.json", naive_like_doc(2)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        assert app.pane is app.panes[0]
    assert app.pane is None
    for tab in ("file-1", "compare", "diff"):
        app.on_tabbed_content_tab_activated(SimpleNamespace(pane=SimpleNamespace(id=tab)))


async def test_palette_finds_every_action_and_the_files(naive_path, tmp_path):
    other = write_doc(tmp_path / "second_trace.json", naive_like_doc(2))
    app = make_app(naive_path, other)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Keys" not in titles
        assert sum("help" in t.lower() for t in titles) == 1
        for query in ("sort", "filter", "fold", "second_trace", "naive", "lane", "theme"):
            matcher = Matcher(query)
            assert any(matcher.match(t) > 0 for t in titles), query
        # a view's action from the palette: sort the op table by # of Calls
        cmd = next(c for c in app.get_system_commands(app.screen)
                   if c.title == "Ops: sort by # of Calls")  # fmt: skip
        app.call_later(cmd.callback)
        for _ in range(100):  # the op table may still be analysing: the sort waits for it
            await pilot.pause(0.1)
            views = list(app.query(OpsView))
            if views and views[0].sort_key == "count":
                break
        assert app.pane.view == "ops" and app.query_one(OpsView).sort_key == "count"
        cmd = next(c for c in app.get_system_commands(app.screen)
                   if c.title.startswith("File: second_trace"))  # fmt: skip
        app.call_later(cmd.callback)
        await wait_until(pilot, lambda: app.pane is app.panes[1], "the second file's tab")
        for _ in range(100):  # the second file may still be loading: focus comes with it
            if isinstance(app.focused, DataTable | Timeline):
                break
            await pilot.pause(0.1)
        assert isinstance(app.focused, DataTable | Timeline)


async def test_palette_fold_all_runs_on_the_timeline(naive_path):
    app = make_app(naive_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        cmd = next(c for c in app.get_system_commands(app.screen) if "Fold all" in c.title)
        app.call_later(cmd.callback)
        await wait_until(pilot, lambda: app.pane.view == "timeline"
                         and all(r.kind == "group" for r in app.pane.model.rows), "fold all")
        assert all(r.kind == "group" for r in app.pane.model.rows)


# ---- 17: the rank is read as data ----


def test_rank_text_reads_distributed_info_as_data():
    from tui.widgets.trace_pane import rank_text

    assert rank_text({"distributedInfo": {"rank": 2, "world_size": 8}}) == "rank 2 of 8"
    assert rank_text({"distributedInfo": {"rank": "5", "world_size": 1}}) == "rank 5"
    for bad in ({}, {"distributedInfo": None}, {"distributedInfo": {"rank": "x"}},
                {"distributedInfo": {"rank": True}}, {"distributedInfo": {"rank": [1]}}):
        assert rank_text(bad) == ""
