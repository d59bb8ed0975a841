"""What the timeline writes in each run of cells, and the legend (pure; no Textual).

Colour says what kind an event is, but not in every terminal: under
``NO_COLOR=1`` there is none, and a 16-colour terminal (``TERM=linux``) folds
the kind colours onto a few.  So the text carries what matters too:

* a Memcpy or Memset always shows a letter, however narrow (``Memcpy DtoD``,
  ``Mc DtoD``, ``Mc``, ``C``; ``Memset``, ``Ms``, ``S``), also where several
  copies share one cell;
* in those terminals (``low`` here) an event that touches the next one ends in
  ``│``, so neighbouring slices never run together into one block.

The legend (``legend_rows``) names these glyphs and colours for the help
screen and the ``L`` key.
"""

from __future__ import annotations

import re

from profiling.trace.model import Kind
from tui.names import cells, fit, short_name

DENSE = ("░", "▒", "▓")
"""Shades of a cell where several events start: 2-3, 4-15, 16 or more."""
SEPARATOR = "│"
"""Ends an event that touches the next one (low-colour terminals); in CP437 too."""
COPY_LETTERS = {int(Kind.MEMCPY): ("Memcpy", "Mc", "C"), int(Kind.MEMSET): ("Memset", "Ms", "S")}
"""A copy's names from widest to one letter."""

_DIRECTION = re.compile(r"\b([HDP]to[HDP])\b")


def low_colour(no_color: bool, color_system: str | None, headless: bool = False) -> bool:
    """Whether colour cannot tell the kinds apart: ``NO_COLOR``, or a terminal of 16
    colours or fewer (Rich's detection: ``TERM=linux`` is "standard").  A headless
    app (tests, SVG export) draws in true colour whatever its environment says."""
    if no_color:
        return True
    return not headless and color_system not in ("256", "truecolor")


def dense_glyph(count: int) -> str:
    """The shade of a cell where ``count`` events start."""
    return DENSE[0 if count < 4 else 1 if count < 16 else 2]


def is_copy(kind: int) -> bool:
    return kind in COPY_LETTERS


def copy_label(kind: int, name: str, n: int) -> str:
    """A Memcpy / Memset label in ``n`` cells (exactly ``n`` characters), never
    without its letter: the whole name where it fits, else ``Mc DtoD``, ``Mc``,
    ``C`` (the direction, HtoD / DtoD / DtoH, kept while it fits)."""
    if n <= 0:
        return ""
    full = short_name(name, max(n, 3))
    if cells(full) <= n:
        return fit(full, n)
    word, short, letter = COPY_LETTERS[kind]
    found = _DIRECTION.search(name)
    direction = f" {found.group(1)}" if found else ""
    for text in (word + direction, short + direction, word, short, letter):
        if len(text) <= n:
            return text.ljust(n)
    return letter[:n]  # pragma: no cover - the letter fits in one cell


def run_text(kind: int, name: str, n: int, *, dense: int = 0, touches_next: bool = False,
             low: bool = False) -> str:  # fmt: skip
    """The ``n`` characters of one run: an event's box, or one dense cell.

    ``touches_next``: the next cell shows another event (``low``: end this one
    with ``SEPARATOR``)."""
    if n <= 0:
        return ""
    if dense:
        return (COPY_LETTERS[kind][2] if is_copy(kind) else dense_glyph(dense)) * n
    if is_copy(kind):
        return copy_label(kind, name, n)
    room = n - 1 if low and touches_next else n
    text = fit(short_name(name, room), room) if room >= 3 else " " * room
    return text + (SEPARATOR if room < n else "")


LEGEND: tuple[tuple[str, str, str], ...] = (
    ("timeline--cpu", "aten::bmm", "CPU op (torch operator)"),
    ("timeline--annotation", "attn_fwd", "annotation: record_function, ProfilerStep"),
    ("timeline--runtime", "cudaLaunch", "CUDA runtime call (launch, copy, sync)"),
    ("timeline--kernel", "nvjet_sm90", "GPU kernel"),
    ("timeline--memcpy", "Memcpy DtoD", "Memcpy: narrower Mc DtoD, Mc, C (always a letter)"),
    ("timeline--memset", "Memset", "Memset: narrower Ms, S"),
    ("timeline--python", "nn.Module", "Python function"),
    ("timeline--other", "other", "any other event"),
    ("timeline--selected", "selected", "the selected event"),
    ("timeline--linked", "aten::copy_", "linked to the selection (launch call, op, GPU work)"),
)
"""(component class, sample text, meaning) of each colour the timeline draws."""


def legend_rows() -> list[tuple[str, str, str]]:
    """The legend: each colour with a sample, then the glyphs (a ``""`` class:
    drawn in the default style)."""
    rows = list(LEGEND)
    rows += [
        ("", f"{DENSE[0]} {DENSE[1]} {DENSE[2]}",
         "kernel density: 2-3, 4-15, 16+ events start in one cell\n"
         "(in the colour of the first; C or S when they are copies)"),
        ("", f"ab{SEPARATOR}cd", "where colour is short (NO_COLOR=1, 16 colours):\n"
         "the end of an event that touches the next"),
        ("", "│ └─►", "connector: a launch (its column) to its GPU event"),
        ("", "▸ ▾", "a folded / unfolded process or lane"),
        ("", "▁▃▅█", "a folded row: how busy each cell of time is"),
        ("", "┊+12.5 µs", "ruler: time from the trace start, or from the range\n"
         "start (the range's cells reversed; m marks one)"),
    ]  # fmt: skip
    return rows


def legend_text() -> str:
    """The legend as plain text (tests, and a terminal without styles)."""
    rows = legend_rows()
    width = max(len(sample) for _, sample, _ in rows)
    out = []
    for _, sample, meaning in rows:
        first, *more = meaning.split("\n")
        out.append(f"  {sample.ljust(width)}  {first}")
        out.extend(f"  {'':{width}}  {line}" for line in more)
    return "\n".join(out) + "\n"
