"""Named marks: the pure list (tui.marks) and the keys on the sample trace."""

from __future__ import annotations

from pathlib import Path

from tests.test_tui_pilot import wait_loaded
from tui.app import AttnTuiApp
from tui.fmt import fmt_ns
from tui.marks import Marks, distance_text, overlay_marks
from tui.viewport import Viewport
from tui.widgets.ruler import Ruler
from tui.widgets.timeline import Timeline

SAMPLE_NAIVE = Path(__file__).resolve().parent.parent / "sample_traces" / "naive.json.gz"


def test_names_default_to_letters_and_reuse_freed_ones():
    m = Marks()
    assert [m.add(t) for t in (30, 10, 20)] == ["A", "B", "C"]
    assert [name for name, _ in m.items] == ["B", "C", "A"]  # kept in time order
    assert m.remove("B") and not m.remove("B")
    assert m.add(5) == "B"
    assert m.add(50, "A") == "A" and len(m) == 3  # same name: the mark moves
    assert dict(m.items)["A"] == 50


def test_names_past_z():
    m = Marks()
    for t in range(26):
        m.add(t)
    assert m.add(100) == "M27" and m.add(101) == "M28"


def test_nearest_and_step_wrap():
    m = Marks()
    assert m.nearest(0) is None and m.step(0, 1) is None and distance_text(m, 0) == ""
    m.add(100)
    m.add(300)
    assert m.nearest(190) == ("A", 100) and m.nearest(210) == ("B", 300)
    assert m.nearest(200) == ("A", 100)  # a tie: the earlier
    assert m.step(100, 1) == ("B", 300)  # strictly after
    assert m.step(300, 1) == ("A", 100)  # wraps
    assert m.step(300, -1) == ("A", 100)
    assert m.step(100, -1) == ("B", 300)  # wraps
    assert m.step(0, -1) == ("B", 300)


def test_distance_text_is_signed_cursor_minus_mark():
    m = Marks()
    m.add(1_000)
    assert distance_text(m, 3_500) == f"+{fmt_ns(2_500)} from mark A"
    assert distance_text(m, 0) == f"-{fmt_ns(1_000)} from mark A"
    assert distance_text(m, 1_000) == f"{fmt_ns(0)} from mark A"


def test_overlay_puts_letters_at_their_columns_only_on_screen():
    vp = Viewport(total=1_000, width=10)
    vp.start, vp.span = 0.0, 1_000.0
    m = Marks()
    m.add(250)
    m.add(5_000)  # off screen
    text = overlay_marks(" " * 10, vp, m)
    assert text == "  A       "
    assert overlay_marks("abc", vp, Marks()) == "abc"


def _status(app) -> str:
    return str(app.pane.query_one("#status").render())


async def test_keys_add_jump_and_show_distance():
    app = AttnTuiApp([str(SAMPLE_NAIVE)], theme="attn-dark")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        model = app.pane.model
        assert app.focused is app.query_one(Timeline)
        await pilot.press("G", "l")  # the first event of the first GPU lane
        first = model.selected
        assert first >= 0
        await pilot.press("apostrophe")
        await pilot.press("l", "l")
        second = model.selected
        assert second != first
        await pilot.press("apostrophe")
        await pilot.pause()
        (a_name, a_t), (b_name, b_t) = model.marks.items
        assert (a_name, b_name) == ("A", "B")
        assert (a_t, b_t) == (model.rel(first)[0], model.rel(second)[0]) and a_t < b_t
        assert f"{fmt_ns(0)} from mark B" in _status(app)  # the cursor is on B
        # jump back to A: the window centres on it, the cursor is A itself
        await pilot.press("tilde")
        await pilot.pause()
        assert model.selected == -1
        vp = model.viewport
        assert abs(vp.start + vp.span / 2 - a_t) < 1e-6 * max(vp.span, 1)
        assert "from mark A" in _status(app)
        # and on to B
        await pilot.press("grave_accent")
        await pilot.pause()
        assert abs(vp.start + vp.span / 2 - b_t) < 1e-6 * max(vp.span, 1)
        assert "from mark B" in _status(app)
        ruler = app.query_one(Ruler)
        line = ruler.render_line(0).text
        assert line[model.label_cells + int(vp.col_at(b_t))] == "B"
        # clear: no marks, no distance
        await pilot.press("quotation_mark")
        await pilot.pause()
        assert len(model.marks) == 0 and "from mark" not in _status(app)
