"""The headless commands' tables and lines written as Rich writes them, without Rich.

WHY: a reopened ``stats`` of a 1 GB trace spent 45-55 ms of its 0.2 s in Rich (its
import, 20-25 ms, and the first table's layout) to print a few small tables into a
pipe, where no style is ever drawn.  What Rich writes there for a ``SIMPLE_HEAD``
table whose cells fit is plain: each cell padded to its column's width, a rule
under the header, blank edge lines.  So when the output is not a terminal and
every table fits the width (no cell wider than its column may be unless it is cut
with an ellipsis, no line wider than the width) and every character is one cell
wide, the text is written here; otherwise Rich is imported and prints the same
items itself.  ``tests/test_plain_text.py`` holds the two equal.

Names are data either way: a cell is text, never markup.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Literal, NamedTuple, TextIO

ONE_CELL = frozenset("µ…─→←·›≈Δλ×°±")
"""Characters beyond printable ASCII that every terminal and Rich give one cell (the
units, rules, arrows and ``short_name``'s ``λ`` the commands write)."""

Justify = Literal["left", "right"]


class Column(NamedTuple):
    """A column: its header, alignment, and the widest it may be (None: its widest
    cell); a wider cell is cut with ``…`` (Rich's ``overflow="ellipsis"``).  A
    ``fold`` column's cells wrap instead when the table would not fit the width
    (Rich's ``overflow="fold"``: Rich lays that out)."""

    header: str
    justify: Justify = "left"
    max_width: int | None = None
    fold: bool = False


class Table(NamedTuple):
    """A ``box.SIMPLE_HEAD`` table of text cells; ``edge``: Rich's ``show_edge`` and
    ``pad_edge`` (both on or both off); ``title`` above it, left-justified, drawn in a
    terminal in ``title_style`` (Rich's own for a table's title unless told)."""

    columns: Sequence[Column]
    rows: Sequence[Sequence[str]]
    title: str | None = None
    edge: bool = True
    title_style: str = "table.title"


class Line(NamedTuple):
    """A line of text with a Rich style (``"bold"``, ``"dim"``...), drawn in a terminal;
    where no style is drawn (a pipe, a file) it is the text alone."""

    text: str
    style: str


Item = str | Line | Table
"""What a command prints: a line of text (styled or not), or a table."""


def print_items(items: Sequence[Item], width: int, out: TextIO | None = None) -> None:
    """Print ``items`` as ``rich.console.Console(highlight=False, soft_wrap=False)``
    with ``width`` columns (when not a terminal) prints them: written here when
    ``render`` can, else by Rich."""
    out = sys.stdout if out is None else out
    text = render(items, width) if not _terminal(out) else None
    if text is not None:
        out.write(text)
        return
    _print_with_rich(items, width, out)


def render(items: Sequence[Item], width: int) -> str | None:
    """The text Rich writes for ``items`` at ``width`` columns, or None where Rich
    would lay something out otherwise (wrap, shrink, measure a wide character)."""
    out = []
    for item in items:
        if isinstance(item, Table):
            text = _table(item, width)
        else:
            text = _line(item if isinstance(item, str) else item.text, width)
        if text is None:
            return None
        out.append(text)
    return "".join(out)


def _simple(text: str) -> bool:
    """One cell per character, and no space at either end (Rich strips some)."""
    return (text.isascii() and text.isprintable() or all(
        " " <= c <= "~" or c in ONE_CELL for c in text)) and text == text.strip(" ")


def _line(text: str, width: int) -> str | None:
    if not _simple(text) or len(text) > width:
        return None
    return text + "\n"


def _cut(text: str, max_width: int | None) -> str:
    if max_width is None or len(text) <= max_width:
        return text
    return text[: max_width - 1] + "…"


def _table(table: Table, width: int) -> str | None:
    columns = table.columns
    if not table.rows or not all(_simple(c.header) for c in columns) or not all(
            _simple(cell) for row in table.rows for cell in row):
        return None
    if any(c.fold and c.max_width is not None for c in columns):
        return None  # cells folded onto more lines
    rows = [[_cut(cell, c.max_width) for cell, c in zip(row, columns, strict=True)]
            for row in table.rows]
    widths = [max(len(_cut(c.header, c.max_width)), *(len(row[j]) for row in rows))
              for j, c in enumerate(columns)]
    if 0 in widths or any(c.max_width is not None and len(c.header) > c.max_width
                          for c in columns):
        return None
    edge = table.edge
    inner = sum(widths) + 2 * len(widths) - (0 if edge else 2) + len(widths) - 1
    total = inner + (2 if edge else 0)
    title = table.title or None  # Rich draws no empty title
    if total > width or (title is not None and (not _simple(title) or len(title) > total)):
        return None

    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(w) if c.justify == "right" else cell.ljust(w)
                  for cell, w, c in zip(cells, widths, columns, strict=True)]
        body = " ".join(f" {p} " for p in padded)
        if not edge:
            body = body[1:-1]
        return (f" {body} " if edge else body) + "\n"

    out = [] if title is None else [title.ljust(total) + "\n"]
    if edge:
        out.append(" " * total + "\n")
    out.append(line([_cut(c.header, c.max_width) for c in columns]))
    out.append((" " + "─" * inner + " " if edge else "─" * inner) + "\n")
    out += [line(row) for row in rows]
    if edge:
        out.append(" " * total + "\n")
    return "".join(out)


def _terminal(out: TextIO) -> bool:
    """Whether Rich would treat ``out`` as a terminal (``Console.is_terminal``: its
    environment settings first, then ``isatty``)."""
    if os.environ.get("TTY_COMPATIBLE") in ("0", "1"):
        return os.environ["TTY_COMPATIBLE"] == "1"
    if "FORCE_COLOR" in os.environ:
        return os.environ["FORCE_COLOR"] != ""
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


def _print_with_rich(items: Sequence[Item], width: int, out: TextIO) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=False, file=out)
    if not console.is_terminal:
        console.width = width
    for item in items:
        if not isinstance(item, Table):
            console.print(Text(item) if isinstance(item, str) else Text(*item))
            continue
        title = Text(item.title, style=item.title_style) if item.title else None  # data
        table = RichTable(title=title, title_justify="left",
                          box=box.SIMPLE_HEAD, show_edge=item.edge, pad_edge=item.edge)
        for c in item.columns:
            table.add_column(Text(c.header), justify=c.justify, no_wrap=not c.fold,
                             overflow="fold" if c.fold else "ellipsis", max_width=c.max_width)
        for row in item.rows:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
