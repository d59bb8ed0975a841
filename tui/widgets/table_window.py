"""A DataTable that holds a window of a long list of rows and moves it with the cursor.

Building and measuring a table costs about 0.1-0.5 ms a row: 38,400 region
instances, the 296,478 GPU events of an annotation around a whole run, or the
109,582 aligned rows of two such runs froze the app for seconds to minutes.  The
table holds ``window_of`` rows (``INSTANCE_WINDOW``) around the cursor instead,
each keyed by its index in the whole list, and is refilled around the cursor when
it comes near an end of the window that is not the list's (``needs_move``);
``WindowTable``'s ctrl+home and ctrl+end go to the list's ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.coordinate import Coordinate
from textual.widgets import DataTable

from tui.regions_data import needs_move, window_of


def row_at_cursor(table: DataTable) -> int | None:
    """The row key (its index in the whole list) under the table's cursor, None if none."""
    try:
        value = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
    except Exception:  # noqa: BLE001 - no rows, or a cursor outside them
        return None
    return int(value) if value is not None else None


class RowWindow:
    """Which rows [lo, hi) of a list of ``n`` the table holds."""

    def __init__(self) -> None:
        self.lo = self.hi = 0
        self._last: tuple[DataTable, int, Callable[[int], None]] | None = None

    def fill(self, table: DataTable, n: int, around: int,
             add_row: Callable[[int], None]) -> None:
        """Clear the table and add the rows of the window around ``around`` (each with
        ``add_row(i)``, which must key it ``str(i)``), the cursor on ``around``."""
        self._last = (table, n, add_row)
        self.lo, self.hi = window_of(n, around)
        table.clear()
        for i in range(self.lo, self.hi):
            add_row(i)
        if around > self.lo:
            table.move_cursor(row=around - self.lo, animate=False)

    def reset(self) -> None:
        """The table holds nothing now (it was cleared)."""
        self.lo = self.hi = 0
        self._last = None

    def jump(self, index: int) -> bool:
        """Hold the window around row ``index`` of the list last filled (-1: its last
        row), the cursor on it; False, doing nothing, when the window already holds
        that row (the table's own move reaches it) or nothing was filled."""
        if self._last is None:
            return False
        table, n, add_row = self._last
        index = n - 1 if index < 0 else index
        if not 0 <= index < n or self.lo <= index < self.hi:
            return False
        self.fill(table, n, index, add_row)
        return True

    def follows(self, index: int) -> bool:
        """Whether the cursor at ``index`` asks for a refill around it (near an end of
        the window that is not the end of the list last filled)."""
        return self._last is not None and needs_move(self.lo, self.hi, self._last[1], index)


class WindowTable(DataTable):
    """A table whose rows are a window of a longer list (``RowWindow``): ctrl+home and
    ctrl+end reach the list's first and last rows, not the window's."""

    def __init__(self, window: RowWindow, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.window = window

    def action_scroll_top(self) -> None:
        if not self.window.jump(0):
            super().action_scroll_top()

    def action_scroll_bottom(self) -> None:
        if not self.window.jump(-1):
            super().action_scroll_bottom()
