"""A tab pane that a late focus cannot bring back to the front.

Textual's ``TabbedContent`` shows whichever pane a widget is focused in
(``TabPane.Focused``).  Focusing is deferred (``Widget.focus`` runs on the next
turn of the loop), so a view that asked for focus just before the user switched
tabs (a palette action on the Ops table, then "File: b.json") took it after the
switch, in the hidden tab, and the tab bar flipped back: on a loaded machine the
second file's tab never showed.  Here a focus in a pane that is not the shown one
is refused: the tab stays, and the shown tab's view takes the focus instead.
"""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.widgets import TabbedContent, TabPane


class KeptTab(TabPane):
    """A ``TabPane`` whose hidden widgets never switch the tabs by taking focus."""

    def on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        if event.tab_pane is not self:
            return
        try:
            tabs = self.query_ancestor(TabbedContent)
        except NoMatches:
            return
        if tabs.active in ("", self.id):
            return  # the shown tab (or none yet): Textual's own handling
        event.stop()
        self.screen.set_focus(None)  # no keys to a hidden widget
        focus_shown = getattr(self.app, "focus_shown_tab", None)
        if focus_shown is not None:
            self.app.call_later(focus_shown)
