"""Segments of one timeline row's track area (kept out of ``timeline.py``).

A row's cells (``TimelineModel.row_cells``) become runs, and each run a
``Segment``: an event's box with its name, a dense cell's shade, or empty space,
where the launch-link connectors (``tui.link_marks``) are drawn; a vertical
connector also crosses a wide event box (one cell, in the box's colour), never
a narrow box, a dense cell or a copy's letter.  A folded process or lane is
drawn as its busy-share strip (``tui.density``), except for Memcpy/Memset cells
and the selected event, which keep their own letters and colour so they still
stand out.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style

from tui.density import busy_cells, strip_text, window_share
from tui.glyphs import is_copy, run_text
from tui.link_marks import VERTICAL
from tui.tracks import Run, runs

StyleOf = Callable[[str], Style]
EventStyle = Callable[[int, int, bool], Style]

_LINKED = "timeline--linked"
CROSS_MIN = 3
"""A vertical connector crosses an event box this wide or wider (drawn in the box);
a narrower box, a dense cell or a copy's letter is never drawn over."""


def _empty(run: Run, conn: dict[int, str] | None, style_of: StyleOf) -> list[Segment]:
    """Empty cells, with the connector glyphs that fall in them."""
    n = run.stop - run.start
    empty = style_of("timeline--empty")
    if not conn:
        return [Segment(" " * n, empty)]
    line = style_of("timeline--connector")
    out: list[Segment] = []
    gap = 0
    for col in range(run.start, run.stop):
        glyph = conn.get(col)
        if glyph is None:
            gap += 1
            continue
        if gap:
            out.append(Segment(" " * gap, empty))
            gap = 0
        out.append(Segment(glyph, line))
    if gap:
        out.append(Segment(" " * gap, empty))
    return out


def _crossed(text: str, start: int, conn: dict[int, str]) -> str:
    """An event box with the vertical connector lines that pass through it (one
    cell each, in the box's own colour: the box stays whole and readable)."""
    if not text.isascii():
        return _crossed_wide(text, start, conn)
    chars = list(text)
    for col, glyph in conn.items():
        if glyph == VERTICAL and 0 <= col - start < len(chars):
            chars[col - start] = glyph
    return "".join(chars)


def _crossed_wide(text: str, start: int, conn: dict[int, str]) -> str:
    """``_crossed`` for a box whose name holds wide characters (CJK, emoji): indexed
    by cell, not by character, so the box keeps its width; a wide character the line
    passes through gives way to the line and a space."""
    from rich.cells import get_character_cell_size

    cells: list[str] = []  # one entry per cell; "" is the right half of a wide character
    for ch in text:
        cells.append(ch)
        cells.extend([""] * (get_character_cell_size(ch) - 1))
    for col, glyph in conn.items():
        i = col - start
        if glyph != VERTICAL or not 0 <= i < len(cells):
            continue
        if cells[i] == "" and i > 0:  # the right half: the left half gives way
            cells[i - 1] = " "
        elif i + 1 < len(cells) and cells[i + 1] == "":
            cells[i + 1] = " "
        cells[i] = glyph
    return "".join(cells)


def track_segments(
    model,
    index: int,
    *,
    low: bool,
    style_of: StyleOf,
    event_style: EventStyle,
    conn: dict[int, str] | None = None,
) -> list[Segment]:
    """The track area of screen row ``index`` as Segments."""
    cells = model.row_cells(index)
    width = model.viewport.width
    if cells is None:
        return _empty(Run(0, width, -1, 0), conn, style_of)
    busy = model.summary(index)
    strip = ""
    if busy is not None:
        vp = model.viewport
        strip = strip_text(busy_cells(busy, vp.start, vp.ns_per_cell, width))
    trace = model.trace
    out: list[Segment] = []
    found = runs(cells)
    for i, run in enumerate(found):
        n = run.stop - run.start
        if run.row < 0:
            out.extend(_empty(run, conn, style_of))
            continue
        kind = int(trace.kind[run.row])
        if strip and not is_copy(kind) and run.row != model.selected:
            style = style_of(_LINKED if run.linked else "timeline--density")
            out.append(Segment(strip[run.start : run.stop], style))
            continue
        touches = i + 1 < len(found) and found[i + 1].row >= 0
        name = "" if run.dense else trace.name(run.row)
        text = run_text(kind, name, n, dense=run.dense, touches_next=touches, low=low)
        if conn and n >= CROSS_MIN and not run.dense and not is_copy(kind):
            text = _crossed(text, run.start, conn)
        if run.linked and run.row != model.selected:
            style = style_of(_LINKED)
        else:
            style = event_style(run.row, run.dense, run.alt)
        out.append(Segment(text, style))
    return out


def short_count(n: int) -> str:
    """``950``, ``12k``, ``3.4M``: a count in at most five cells, for a label."""
    if n < 1000:
        return str(n)
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div * 0.9995:  # 999,999 is 1.0M, not 1000k
            v = n / div
            return f"{v:.1f}{unit}" if v < 10 else f"{v:.0f}{unit}"
    return str(n)  # pragma: no cover


def summary_label(model, index: int) -> tuple[str, str]:
    """What a folded row's label can add, longest first: its event count and busy
    share of the window (``1.2k · 43%``), or the count alone; ('', '') for other rows."""
    busy = model.summary(index)
    if busy is None:
        return "", ""
    track = model.track(model.rows[index])
    n = short_count(len(track) if track is not None else 0)
    vp = model.viewport
    share = window_share(busy, max(vp.start, 0.0), min(vp.end, vp.total))
    return f"{n} · {share:.0%}", n
