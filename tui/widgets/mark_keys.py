"""The timeline's mark actions (keys in ``tui/keymap.py``), kept out of
``timeline.py`` so that module stays small; the mark logic is ``tui.marks``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.marks import cursor_ns

if TYPE_CHECKING:
    from tui.timeline_model import TimelineModel


class MarkKeys:
    """Mixed into ``Timeline``: add, jump to and clear named marks."""

    model: TimelineModel

    if TYPE_CHECKING:

        def _after(self, scroll: bool = True) -> None: ...
        def notify(self, message: str, **kwargs) -> None: ...

    def action_add_mark(self) -> None:
        """A mark at the cursor: the selected event's start, else the window's centre."""
        name = self.model.marks.add(cursor_ns(self.model))
        self.model.version += 1
        self.notify(f"mark {name} added", timeout=2, markup=False)
        self._after(scroll=False)

    def action_jump_mark(self, direction: int) -> None:
        """Centre the window on the next (previous) mark after (before) the cursor;
        the selection is cleared so the cursor is the mark itself."""
        model = self.model
        target = model.marks.step(cursor_ns(model), direction)
        if target is None:
            self.notify("no marks yet: ' adds one", timeout=2, markup=False)
            return
        model.select(-1, remember=False)
        model.viewport.center_on(target[1])
        model.version += 1
        self._after(scroll=False)

    def action_clear_marks(self) -> None:
        self.model.marks.clear()
        self.model.version += 1
        self._after(scroll=False)
