"""Bugs a demanding new user met in the TUI (QA smoke in tmux), one test each."""

from __future__ import annotations

from tests.conftest import SAMPLE_TRACES
from tui.app import AttnTuiApp
from tui.widgets.details import Details

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"


async def test_details_hint_lines_hold_no_newline():
    """At 80x24 the 'No event selected' hint wraps to two lines; each screen line kept
    the newline that split it (Segment.split_and_crop_lines includes it by default), so
    the terminal moved the cursor mid-frame and a stale '───' stayed on the screen."""
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        details = app.query_one(Details)
        assert details.model is not None and details.model.selected < 0
        lines = [details.render_line(y) for y in range(details.size.height)]
        assert "No event selected" in "".join(line.text for line in lines)
        for line in lines:
            assert "\n" not in line.text, repr(line.text)


async def test_esc_in_the_query_field_lets_the_view_keys_work_again():
    """After 6 the query field has the focus and takes every key: 1 typed '1' into the
    query, esc did nothing, so a new user could not leave the tab from the keyboard."""
    import pytest

    pytest.importorskip("duckdb")
    from textual.widgets import Input, TabbedContent

    from tui.widgets.query_view import QueryView

    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("6")
        for _ in range(100):
            await pilot.pause(0.05)
            if app.query(QueryView) and isinstance(app.focused, Input):
                break
        field = app.query_one(QueryView).query_one(Input)
        before = field.value
        assert app.focused is field
        await pilot.press("escape")
        await pilot.press("1")
        await pilot.pause()
        assert field.value == before
        assert app.query_one("#files", TabbedContent).active != "query"


async def test_ranks_view_of_one_trace_says_what_attn_tui_ranks_says(capsys):
    """8 on one trace showed its row with the rank and device cells empty, where
    ``attn-tui ranks naive.json.gz`` prints rank 0 on GPU 0."""
    import json

    from tui.cli import main
    from tui.widgets.ranks_view import RanksView

    assert main(["ranks", str(NAIVE), "--json", "--no-cache"]) == 0
    (cli,) = json.loads(capsys.readouterr().out)
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8")
        for _ in range(200):
            await pilot.pause(0.05)
            if app.query(RanksView) and app.query_one(RanksView).data is not None:
                break
        (row,) = app.query_one(RanksView).data.ranks
    assert (row["rank"], row["device"]) == (cli["rank"], cli["device"]) == (0, "GPU 0")
    assert row["span_us"] == cli["span_us"] and row["idle_us"] == cli["idle_us"]


async def test_a_file_tab_writes_its_name_s_escapes_out(tmp_path):
    """``attn-tui open $'e\\x1b[31mvil.json.gz'``: the file's tab sent the raw escape to
    the terminal (the tab bar turned red); the status line already wrote it out."""
    from textual.widgets import TabbedContent

    evil = tmp_path / "e\x1b[31mvil.json.gz"
    evil.write_bytes(NAIVE.read_bytes())
    app = AttnTuiApp([str(evil)], theme="attn-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        label = app.query_one("#files", TabbedContent).get_tab("file-0").label
        assert "\x1b" not in label.plain and "e\\x1b[31mvil" in label.plain, repr(label.plain)


async def test_findings_view_with_nothing_to_point_out_says_it_once():
    """5 on a trace with no finding read 'Nothing to point out in attn_fwd (nothing to
    point out)': the analysis' own note repeated the sentence."""
    from textual.widgets import Static

    from tui.widgets.findings_view import FindingsView

    app = AttnTuiApp([str(SAMPLE_TRACES / "inplace.json.gz")], theme="attn-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("5")
        text = ""
        for _ in range(200):
            await pilot.pause(0.05)
            if app.query(FindingsView):
                text = str(app.query_one("#finding-detail", Static).render())
                if "point out" in text:
                    break
        assert text.lower().count("nothing to point out") == 1, text
