"""Focus memory for views that stack several tables (Regions, Findings).

Coming back to such a view should land on the table the user left, not on the
first one: the mixin remembers which of its tables last had focus.
"""

from __future__ import annotations

from typing import cast

from textual import events
from textual.widget import Widget
from textual.widgets import DataTable


class RemembersTableFocus:
    """Mixin (before the Textual class in the bases); the view's ``__init__`` sets
    ``_last_focus`` to the id of the table to focus first."""

    _last_focus: str

    def focus_view(self) -> None:
        """Focus the table that had focus when the view was left."""
        cast(Widget, self).query_one(f"#{self._last_focus}", DataTable).focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, DataTable) and event.widget.id:
            self._last_focus = event.widget.id
