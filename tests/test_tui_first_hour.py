"""Issue 12's TUI points (a new user's first hour), each driven with Pilot at
80x24 and 140x45: the screenshot folder, the Ops table's columns and filter,
4 from every view, Tab, the header, the footer's edge, h/l and lane jumps,
folding processes, the palette, the rank."""

from __future__ import annotations

import re

import numpy as np
import pytest
from textual.fuzzy import Matcher
from textual.widgets import DataTable, Tabs
from textual.widgets._footer import FooterKey

from tests.fixtures.synthetic import naive_like_doc, write_doc
from tui.app import AttnTuiApp
from tui.ops_table import CELL_PAD
from tui.screenshot import SCREENSHOT_DIR_ENV
from tui.timeline_moves import first_visible
from tui.widgets.fit_footer import FitFooter, fit
from tui.widgets.ops_view import OpsView
from tui.widgets.timeline import Timeline

from .test_tui_pilot import wait_loaded

SIZES = [(80, 24), (140, 45)]


@pytest.fixture
def naive_path(tmp_path):
    return write_doc(tmp_path / "naive.json", naive_like_doc(3))


def _app(*paths, **kwargs) -> AttnTuiApp:
    return AttnTuiApp([str(p) for p in paths], theme="attn-dark", **kwargs)


def _messages(app) -> list[str]:
    return [n.message for n in app._notifications]


def _status(app) -> str:
    return str(app.pane.query_one("#status").render())


# ---- 8: ctrl+s says where the SVG went, in the folder it is given ----


@pytest.mark.parametrize("size", SIZES)
async def test_screenshot_goes_to_the_env_folder_and_says_where(naive_path, tmp_path, monkeypatch,
                                                                size):  # fmt: skip
    folder = tmp_path / "shots" / "new"
    monkeypatch.setenv(SCREENSHOT_DIR_ENV, str(folder))
    monkeypatch.chdir(tmp_path)
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        files = list(folder.glob("*.svg"))
        assert len(files) == 1 and not list(tmp_path.glob("*.svg"))
        assert any(str(files[0]) in m for m in _messages(app))


async def test_screenshot_folder_option_wins_over_the_env(naive_path, tmp_path, monkeypatch):
    monkeypatch.setenv(SCREENSHOT_DIR_ENV, str(tmp_path / "env"))
    app = _app(naive_path, screenshot_dir=str(tmp_path / "option"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert len(list((tmp_path / "option").glob("*.svg"))) == 1
    assert not (tmp_path / "env").exists()


# ---- 9: the Ops table fits the window; device, sort and calls always show ----


def _shown_width(view: OpsView, n_shown: int) -> int:
    table = view.table
    return sum(c.get_render_width(table) for c in list(table.columns.values())[:n_shown])


@pytest.mark.parametrize("size", SIZES)
async def test_ops_columns_fit_and_keep_sort_calls_and_device(naive_path, size):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        view = app.query_one(OpsView)
        for presses in range(len(view.columns)):  # every column in turn, by o
            keys = [c.key for c in view.columns]
            shown = next(i for i in range(len(keys), 0, -1)
                         if _shown_width(view, i) <= view.table.size.width)  # fmt: skip
            on_screen = set(keys[:shown])
            assert {"key", "device_type", "count", view.sort_key} <= on_screen, (presses, keys)
            await pilot.press("o")
        attn = [r for r in view.shown if r["key"] == "attn_fwd"]
        assert {r["device_type"] for r in attn} == {"CPU", "CUDA"}
        assert view.name_width >= 20


async def test_ops_name_column_grows_with_the_window(naive_path):
    widths = []
    for size in SIZES:
        app = _app(naive_path)
        async with app.run_test(size=size) as pilot:
            await wait_loaded(pilot)
            await pilot.press("3")
            view = app.query_one(OpsView)
            widths.append(view.name_width)
            longest = max(len(r["key"]) for r in view.all_rows)
            assert view.name_width <= max(longest, 20)
            # every shown column fits in the table, name column included
            total = sum(c.get_render_width(view.table) for c in view.table.columns.values())
            assert total >= view.name_width + CELL_PAD
    assert widths[0] <= widths[1]


async def test_ops_footer_explains_self_cuda_over_100(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        view = app.query_one(OpsView)
        over = [r for r in view.all_rows if r["self_device_pct"] > 100]
        footer = str(app.query_one("#ops-footer").render())
        assert over, "the synthetic trace has a GPU annotation over 100%"
        assert "above 100" in footer and "annotation" in footer


# ---- 10: the regex filter: error inline once, filter applied when valid ----


@pytest.mark.parametrize("size", SIZES)
async def test_ops_regex_filter_errors_inline_without_toasts(naive_path, size):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3", "f", *"re:^aten::m")
        view = app.query_one(OpsView)
        valid = [r["key"] for r in view.shown]
        assert valid and all(re.match("^aten::m", k) for k in valid)
        await pilot.press("(")  # re:^aten::m( does not compile
        error = app.query_one("#ops-filter-error")
        assert error.display and "regex" in str(error.render())
        assert [r["key"] for r in view.shown] == valid  # the last valid filter stays
        await pilot.press(*"ul|ask)")
        assert not error.display and view.filter_error == ""
        want = {r["key"] for r in view.all_rows if re.match("(?i)^aten::m(ul|ask)", r["key"])}
        assert {r["key"] for r in view.shown} == want and "aten::masked_fill" in want
        assert not _messages(app)  # no toast on the way
        await pilot.press("escape")
        assert view.table.has_focus


# ---- 11: 4 (Compare) works from every view ----


@pytest.mark.parametrize("size", SIZES)
async def test_compare_key_works_from_every_view(naive_path, tmp_path, size):
    other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    app = _app(naive_path, other)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        tabs = app.query_one("#files")
        for view in ("1", "2", "3", "5", "3", "2"):
            await pilot.press(view)
            await pilot.pause(0.2)
            assert tabs.active == "file-0"
            await pilot.press("4")
            await pilot.pause(0.2)
            assert tabs.active == "compare", f"4 from view {view}"
            assert app.focused is not None and app.focused.id == "compare-table"


# ---- 12: Tab never parks the focus where the keys do nothing ----


@pytest.mark.parametrize("size", SIZES)
async def test_tab_keeps_the_keys_working(naive_path, tmp_path, size):
    other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    app = _app(naive_path, other)
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
    app = _app(ranked, unranked)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        assert "rank3_trace.json · rank 3 of 8" in _status(app)
        await pilot.press("right_square_bracket")
        assert "plain_trace.json" in _status(app) and "rank" not in _status(app)


# ---- 14: the footer keeps off the palette key's edge ----


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (140, 45)])
async def test_footer_keys_end_before_the_palette_key(naive_path, size):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        for view in ("1", "3", "1"):
            await pilot.press(view)
            await pilot.pause(0.2)
            footer = app.query_one(FitFooter)
            keys = [k for k in footer.query(FooterKey) if k.display]
            palette = next(k for k in keys if k.has_class("-command-palette"))
            others = [k for k in keys if k is not palette]
            assert {"help", "quit"} <= {k.action for k in others}
            assert max(k.region.right for k in others) <= palette.region.x, size


def test_fit_drops_from_the_end_but_keeps_help():
    assert fit([5, 5, 5], [False, False, False], 15) == [True, True, True]
    assert fit([5, 5, 5], [False, False, False], 12) == [True, True, False]
    assert fit([5, 5, 5], [False, False, True], 12) == [True, False, True]


# ---- 15: the first h/l picks the first visible event; lane jumps ----


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("key", ["l", "h"])
async def test_first_step_selects_the_first_visible_event(naive_path, size, key):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        await pilot.press("G", "j")  # the GPU lane, its kernels' row (under the annotations)
        assert model.trace.lanes[model.rows[model.cursor].lane].kind == "gpu"
        track = model.track(model.rows[model.cursor])
        assert track is not None and len(track) >= 6
        # a window from the middle of the 3rd event to the end of the 6th: the 3rd
        # reaches into it, so it is the first visible, not one from the middle
        third = (track.ts[2] + track.end[2]) / 2
        model.viewport.show(third, float(track.end[5]))
        model.version += 1
        vp = model.viewport
        t0 = (model.trace.ts_ns[track.rows] - model.origin).astype(float)
        t1 = t0 + model.trace.dur_ns[track.rows]
        visible = track.rows[(t1 > vp.start) & (t0 < vp.end)]
        assert visible.size >= 3
        await pilot.press(key)
        assert model.selected == int(visible[np.argmin(model.trace.ts_ns[visible])])


@pytest.mark.parametrize("size", SIZES)
async def test_lane_jumps(naive_path, size):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        await pilot.press("J")
        assert model.cursor > 0 and model.rows[model.cursor].kind != "depth"
        between = model.rows[1 : model.cursor]
        assert all(r.kind == "depth" for r in between)
        where = model.cursor
        await pilot.press("J", "K")
        assert model.cursor == where
        await pilot.press("G")
        gpu = model.rows[model.cursor]
        assert gpu.kind == "lane" and model.trace.lanes[gpu.lane].kind == "gpu"
        await pilot.press("C", "G")  # folded devices are unfolded to reach the GPU lane
        gpu = model.rows[model.cursor]
        assert gpu.kind == "lane" and model.trace.lanes[gpu.lane].kind == "gpu"


def test_first_visible_against_a_scan(naive_path):
    """Every track, windows over the whole trace: the first event (in start order)
    that ends after the window's start and starts before its end."""
    from profiling.trace import load_trace
    from tui.timeline_model import TimelineModel

    model = TimelineModel(load_trace(naive_path, use_cache=False))
    total = float(model.trace.end_ns_max - model.origin)
    windows = [(total * a, total * b) for a, b in ((0, 1), (0.3, 0.35), (0.5, 0.5001), (1.1, 2))]
    for spec in model.rows:
        track = model.track(spec)
        if track is None:
            continue
        for start, end in windows:
            hits = [i for i in range(len(track)) if track.end[i] > start and track.ts[i] < end]
            want = int(track.rows[hits[0]]) if hits else -1
            assert first_visible(track, start, end) == want


# ---- 16: C folds processes; the palette has every action and one help ----


@pytest.mark.parametrize("size", SIZES)
async def test_fold_all_folds_processes_too(naive_path, size):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        await pilot.press("C")
        assert model.rows and all(r.kind == "group" and r.folded for r in model.rows)
        await pilot.press("E")
        assert any(r.kind == "depth" for r in model.rows)


async def test_palette_finds_every_action_and_the_files(naive_path, tmp_path):
    other = write_doc(tmp_path / "second_trace.json", naive_like_doc(2))
    app = _app(naive_path, other)
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
        await pilot.pause(0.5)
        assert app.pane.view == "ops" and app.query_one(OpsView).sort_key == "count"
        cmd = next(c for c in app.get_system_commands(app.screen)
                   if c.title.startswith("File: second_trace"))  # fmt: skip
        app.call_later(cmd.callback)
        await pilot.pause(0.3)
        assert app.pane is app.panes[1]
        assert isinstance(app.focused, DataTable | Timeline)


async def test_palette_fold_all_runs_on_the_timeline(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        cmd = next(c for c in app.get_system_commands(app.screen) if "Fold all" in c.title)
        app.call_later(cmd.callback)
        await pilot.pause(0.5)
        assert app.pane.view == "timeline"
        assert all(r.kind == "group" for r in app.pane.model.rows)


# ---- 13 and 16: the Compare header and its vs first column; which instance ----


@pytest.mark.parametrize("size", SIZES)
async def test_compare_header_whole_and_vs_first_on_screen(naive_path, tmp_path, size):
    from tui.widgets.compare_view import CompareView

    other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    app = _app(naive_path, other)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("4")
        view = app.query_one(CompareView)
        for _ in range(200):
            if view.state == "ready":
                break
            await pilot.pause(0.05)
        status = str(app.query_one("#compare-status").render())
        assert "vs first = GPU time per instance over the first file's" in " ".join(status.split())
        table = view.table
        columns = list(table.columns.values())
        keys = [str(c.key.value) for c in columns]
        upto = keys.index("vs first") + 1
        assert sum(c.get_render_width(table) for c in columns[:upto]) <= table.size.width


@pytest.mark.parametrize("size", SIZES)
async def test_gpu_events_title_names_the_instance(naive_path, size):
    from tui.widgets.regions_view import RegionsView

    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2", "enter", "down")
        view = app.query_one(RegionsView)
        inst = view.current_instance
        title = str(view.kernels_table.border_title)
        n = len(view.current_region.instances)
        assert f"{inst.name} #{inst.index} (2 of {n})" in title


def test_rank_text_reads_distributed_info_as_data():
    from tui.widgets.trace_pane import rank_text

    assert rank_text({"distributedInfo": {"rank": 2, "world_size": 8}}) == "rank 2 of 8"
    assert rank_text({"distributedInfo": {"rank": "5", "world_size": 1}}) == "rank 5"
    for bad in ({}, {"distributedInfo": None}, {"distributedInfo": {"rank": "x"}},
                {"distributedInfo": {"rank": True}}, {"distributedInfo": {"rank": [1]}}):
        assert rank_text(bad) == ""
