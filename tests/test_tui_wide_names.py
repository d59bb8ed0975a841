"""Wide characters in names (CJK, emoji) take two terminal cells, not one.

Found in tmux on a trace whose thread and kernel names hold CJK and emoji: the
timeline cut and padded labels by ``len``, so a row with such a label drew its
events two cells right of where the ruler said, and an event box named
``宽字符注意力`` overran its span and pushed the rest of the row right.
Names are cut and padded in cells now (``tui.names.clip`` / ``fit``).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from tests.test_tui_pilot import wait_loaded
from tui.app import AttnTuiApp
from tui.glyphs import run_text
from tui.names import OWN_NARROW, cells, clip, fit, one_cell_each
from tui.widgets.timeline import Timeline
from tui.widgets.track_draw import _crossed

WIDE = "宽字符注意力カーネル🔥🚀"


def test_clip_and_fit_count_cells():
    assert clip("abcdef", 4) == "abc…" and fit("ab", 4) == "ab  "  # ASCII as before
    for width in range(1, 30):
        shown = clip(WIDE, width)
        assert cell_len(shown) <= width, (width, shown)
        assert cell_len(fit(WIDE, width)) == width
    assert clip("宽字", 4) == "宽字" and clip("宽字符", 4) == "宽…"
    assert cells("🔥a") == 3


def test_the_programs_own_characters_are_one_cell_each_in_richs_table():
    """``cells`` counts them by ``len`` without Rich's table: that must be Rich's answer."""
    assert [cell_len(ch) for ch in OWN_NARROW] == [1] * len(OWN_NARROW)
    assert one_cell_each("aten::mm › … › cudaLaunchKernel ─ 1.5 µs · a ← b → c")
    assert not one_cell_each("aten::mm › 宽") and not one_cell_each("🔥")


_MIXED = st.text(st.sampled_from(["a", " ", "~", *OWN_NARROW, "宽", "🔥", "é", "\u0301"]),
                 max_size=24)


@given(_MIXED, st.integers(0, 30))
def test_cells_clip_and_fit_agree_with_rich_on_mixed_text(text: str, width: int):
    """The shortcut for the program's own characters measures as Rich does, and a cut
    or padded text still takes at most (``clip``) or exactly (``fit``) its cells."""
    assert cells(text) == cell_len(text)
    assert cell_len(clip(text, width)) <= width
    if width > 0:
        assert cell_len(fit(text, width)) == width


def test_an_event_box_is_exactly_its_cells_even_where_a_line_crosses_it():
    for n in range(1, 20):
        box = run_text(0, WIDE, n)
        assert cell_len(box) == n, (n, box)
        for col in range(n):
            assert cell_len(_crossed(box, 0, {col: "│"})) == n, (n, col)


def _doc() -> dict:
    events = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "plain"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 3, "args": {"name": WIDE}},
    ]
    for tid in (2, 3):
        for i in range(6):
            events.append({"ph": "X", "cat": "cpu_op", "name": f"{WIDE}{i}", "pid": 1,
                           "tid": tid, "ts": 100 + 40 * i, "dur": 30})  # fmt: skip
    return {"traceEvents": events}


async def test_a_wide_thread_name_does_not_shift_its_events(tmp_path: Path):
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(_doc()))
    app = AttnTuiApp([str(path)], theme="attn-dark")
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_loaded(pilot)
        timeline = app.query_one(Timeline)
        await pilot.pause()
        model = app.pane.model
        lines = {}
        for y, spec in enumerate(model.rows):
            if spec.kind == "lane":
                strip = timeline.render_line(y - int(timeline.scroll_y))
                lines["wide" if "宽" in spec.label else "plain"] = "".join(s.text for s in strip)
        assert set(lines) == {"plain", "wide"}
        label = timeline.label_cells
        for text in lines.values():
            assert cell_len(text) == timeline.size.width
        # the tracks, past the label column, are the same cells on both rows
        tracks = {k: _from_cell(v, label) for k, v in lines.items()}
        assert tracks["wide"] == tracks["plain"], lines


def _from_cell(text: str, start: int) -> str:
    """``text`` from cell ``start`` on."""
    used = 0
    for i, ch in enumerate(text):
        if used >= start:
            return text[i:]
        used += cell_len(ch)
    return ""


def test_the_picker_lines_up_a_wide_file_name(tmp_path: Path):
    """``attn-tui open`` in a folder holding ``注意力🔥.json``: the listing padded by
    characters, so that row's variant, device and size columns sat two cells right."""
    from tui.trace_list import list_traces, listing_lines

    for name in ("plain.json", "注意力🔥.json"):
        (tmp_path / name).write_text(json.dumps(_doc()))
    lines = listing_lines(list_traces(str(tmp_path)))
    header, *rows = lines
    column = cell_len(header[: header.index("variant")])
    for row in rows:
        dash = row.index("-", row.index(".json"))  # the variant column: "-"
        assert cell_len(row[:dash]) == column, lines


def test_launch_chains_fit_their_cells():
    """A launch chain of CJK-named ops (the occurrences list, the Regions view) was
    measured in characters, so one that "fit" ran past its column."""
    from tui.links import chain_text
    from tui.occurrences import fit_chain

    names = ["模型前向" * 3, "注意力", "aten::bmm", "cudaLaunchKernel"]
    for width in range(8, 60):
        assert cell_len(chain_text(names, width)) <= width, width
        assert cell_len(fit_chain(names, width)) <= width, width
