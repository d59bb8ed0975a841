"""Named marks on the timeline (pure): the points a person wants to measure from.

A mark is a name and a time in ns from the trace's first event (the ruler's
zero).  Names default to ``A``, ``B``, ... so the ruler can draw each as one
letter at its column; the status line gives the cursor's distance to the
nearest mark, and the jump keys step through them in time order.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui.fmt import fmt_ns
from tui.viewport import Viewport

if TYPE_CHECKING:
    from tui.timeline_model import TimelineModel

NAMES = string.ascii_uppercase


@dataclass
class Marks:
    """Marks in time order (ties keep the order they were added in)."""

    items: list[tuple[str, float]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def next_name(self) -> str:
        """The first free letter (``A`` first); past ``Z``: ``M27``, ``M28``..."""
        used = {name for name, _ in self.items}
        free = next((c for c in NAMES if c not in used), None)
        if free is not None:
            return free
        n = len(NAMES) + 1
        while f"M{n}" in used:
            n += 1
        return f"M{n}"

    def add(self, t_ns: float, name: str | None = None) -> str:
        """Add a mark at ``t_ns`` (a mark of the same name moves); returns its name."""
        name = name or self.next_name()
        self.remove(name)
        self.items.append((name, float(t_ns)))
        self.items.sort(key=lambda item: item[1])
        return name

    def remove(self, name: str) -> bool:
        before = len(self.items)
        self.items = [item for item in self.items if item[0] != name]
        return len(self.items) != before

    def clear(self) -> None:
        self.items.clear()

    def nearest(self, t_ns: float) -> tuple[str, float] | None:
        """The mark closest to ``t_ns`` (the earlier one on a tie); None without marks."""
        if not self.items:
            return None
        return min(self.items, key=lambda item: abs(item[1] - t_ns))

    def step(self, t_ns: float, direction: int) -> tuple[str, float] | None:
        """The first mark strictly after ``t_ns`` (``direction`` > 0) or strictly
        before it (< 0), wrapping around at the ends; None without marks."""
        if not self.items:
            return None
        if direction > 0:
            after = [item for item in self.items if item[1] > t_ns]
            return after[0] if after else self.items[0]
        before = [item for item in self.items if item[1] < t_ns]
        return before[-1] if before else self.items[-1]


def distance_text(marks: Marks, cursor_ns: float) -> str:
    """``+1.2 µs from mark A``: the cursor minus the nearest mark ('' without marks)."""
    near = marks.nearest(cursor_ns)
    if near is None:
        return ""
    name, t = near
    d = cursor_ns - t
    sign = "+" if d > 0 else "-" if d < 0 else ""
    return f"{sign}{fmt_ns(abs(d))} from mark {name}"


def overlay_marks(ticks: str, vp: Viewport, marks: Marks) -> str:
    """The ruler's text with each on-screen mark's first letter at its column."""
    if not marks.items:
        return ticks
    buf = list(ticks)
    for name, t in marks.items:
        col = int(vp.col_at(t))
        if 0 <= col < len(buf) and vp.start <= t <= vp.end:
            buf[col] = name[0]
    return "".join(buf)


def cursor_ns(model: TimelineModel) -> float:
    """Where marks are measured from and added: the selected event's start, else
    the window's centre (ns from the trace's first event)."""
    if model.selected >= 0:
        return model.rel(model.selected)[0]
    vp = model.viewport
    return vp.start + vp.span / 2
