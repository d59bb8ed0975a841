"""A DataTable that holds a window of a long list of rows and moves it with the cursor.

Building and measuring a table costs about 0.1-0.5 ms a row: 38,400 region
instances, the 296,478 GPU events of an annotation around a whole run, or the
109,582 aligned rows of two such runs froze the app for seconds to minutes.  The
table holds ``window_of`` rows (``INSTANCE_WINDOW``) around the cursor instead,
each keyed by its index in the whole list, and is refilled around the cursor when
it comes near an end of the window that is not the list's (``needs_move``).
"""

from __future__ import annotations

from collections.abc import Callable

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

    def fill(self, table: DataTable, n: int, around: int,
             add_row: Callable[[int], None]) -> None:
        """Clear the table and add the rows of the window around ``around`` (each with
        ``add_row(i)``, which must key it ``str(i)``), the cursor on ``around``."""
        self.lo, self.hi = window_of(n, around)
        table.clear()
        for i in range(self.lo, self.hi):
            add_row(i)
        if around > self.lo:
            table.move_cursor(row=around - self.lo, animate=False)

    def follows(self, n: int, index: int) -> bool:
        """Whether the cursor at ``index`` asks for a refill around it."""
        return needs_move(self.lo, self.hi, n, index)
