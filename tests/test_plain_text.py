"""``tui.plain_text`` writes what Rich writes, character for character, whenever it
writes anything; otherwise Rich does (``print_items``)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui import plain_text as pt

SIMPLE = st.one_of(
    st.text(st.sampled_from(list("abcXYZ019_-:./#%()[]*µ…·λ≈")), max_size=24),
    st.builds(lambda a, b: f"{a} {b}", st.text("ab1", min_size=1), st.text("µs", min_size=1)))
ODD = st.text(st.sampled_from(list("ab ") + ["é", "好", "\x1b"]), max_size=6)
"""What only Rich lays out: wide or control characters, spaces at an end."""
COLUMN = st.one_of(
    st.builds(pt.Column, SIMPLE, st.sampled_from(["left", "right"]),
              st.one_of(st.none(), st.integers(1, 30))),
    st.builds(pt.Column, SIMPLE, fold=st.just(True)))


@st.composite
def tables(draw: st.DrawFn) -> pt.Table:
    columns = draw(st.lists(COLUMN, min_size=1, max_size=6))
    rows: list[list[str]] = draw(st.lists(
        st.lists(SIMPLE, min_size=len(columns), max_size=len(columns)), max_size=8))
    odd: bool = draw(st.booleans())
    if rows and odd:  # one odd cell somewhere
        row: int = draw(st.integers(0, len(rows) - 1))
        column: int = draw(st.integers(0, len(columns) - 1))
        rows[row][column] = draw(ODD)
    edge: bool = draw(st.booleans())
    return pt.Table(columns, rows, draw(st.one_of(st.none(), SIMPLE)), edge)


TEXT = st.one_of(SIMPLE, ODD, st.builds(pt.Line, SIMPLE, st.sampled_from(["bold", "dim"])))


def with_rich(items: list[pt.Item], width: int) -> str:
    out = io.StringIO()
    pt._print_with_rich(items, width, out)
    return out.getvalue()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(TEXT, tables()), min_size=1, max_size=4), st.integers(20, 240))
def test_what_is_written_here_is_what_rich_writes(items: list[pt.Item], width: int) -> None:
    text = pt.render(items, width)
    if text is not None:
        assert text == with_rich(items, width)


def test_the_commands_tables_are_written_here() -> None:
    """The usual case takes the fast path: ASCII and µ cells that fit, both edges."""
    lanes = pt.Table([pt.Column("kind"), pt.Column("pid", "right"), pt.Column("label")],
                     [["cpu", "477", "thread 477 (python3)"], ["gpu", "0", "stream 7"]],
                     "lanes")
    times = pt.Table([pt.Column("Name", max_width=8), pt.Column("Self CPU", "right")],
                     [["aten::scaled_dot_product", "541 µs"], ["x", "1.08 ms"]], edge=False)
    items: list[pt.Item] = ["trace.json: 279 events", lanes, times, "Self CPU time total: 1 ms"]
    text = pt.render(items, 200)
    assert text is not None and "aten::s…" in text
    assert text == with_rich(items, 200)


def test_the_characters_taken_as_one_cell_are_one_cell_to_rich() -> None:
    from rich.cells import cell_len

    assert {c: cell_len(c) for c in pt.ONE_CELL} == dict.fromkeys(pt.ONE_CELL, 1)


def test_what_rich_lays_out_otherwise_is_left_to_it() -> None:
    wide = pt.Table([pt.Column("name")], [["x" * 300]])
    assert pt.render([wide], 200) is None  # Rich shrinks the table to the width
    assert pt.render(["x" * 201], 200) is None  # and wraps a long line
    assert pt.render(["名前"], 200) is None  # two cells each
    assert pt.render([pt.Table([pt.Column("a")], [])], 200) is None  # no rows
    out = io.StringIO()
    pt.print_items([wide, "[bold]not markup[/]"], 40, out)  # Rich, given data as text
    assert "[bold]not markup[/]" in out.getvalue() and "…" in out.getvalue()


def test_a_terminal_gets_rich_and_its_styles(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a terminal Rich draws everything, styles included (a pipe gets the text)."""
    out = io.StringIO()
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    pt.print_items([pt.Line("warning: late", "bold"), "plain"], 80, out)
    assert "\x1b[1mwarning: late\x1b[0m" in out.getvalue()
    monkeypatch.delenv("FORCE_COLOR")
    plain = io.StringIO()
    pt.print_items([pt.Line("warning: late", "bold"), "plain"], 80, plain)
    assert plain.getvalue() == "warning: late\nplain\n"
