"""A footer that shows only the keys that fit beside the palette key.

Textual's ``Footer`` lays its keys out in one row and docks the ``^p palette``
key on the right; in a narrow terminal the last keys run under the docked one
and leave half a label and a stray character at the edge (``2 R▏^p palettes``
at 80 columns).  This footer hides, from the end, the keys that would not fit,
but always keeps help and quit: ``?`` lists every key the footer leaves out.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Footer

KEEP_ACTIONS = frozenset({"help", "quit"})
"""Footer keys never hidden: the help (it lists every key) and quit."""


def fit(widths: list[int], keep: list[bool], room: int) -> list[bool]:
    """Which items to show (pure): all when they fit in ``room`` cells, else drop
    items from the end, never a ``keep`` one, until they do."""
    shown = [True] * len(widths)
    total = sum(widths)
    for i in reversed(range(len(widths))):
        if total <= room:
            break
        if not keep[i]:
            shown[i] = False
            total -= widths[i]
    return shown


class FitFooter(Footer):
    _retries = 0

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._fit)

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def _items(self) -> tuple[list[Widget], Widget | None]:
        items, palette = [], None
        for child in self.children:
            if child.has_class("-command-palette"):
                palette = child
            else:
                items.append(child)
        return items, palette

    @staticmethod
    def _width(widget: Widget) -> int:
        """Cells the item takes with its margin, remembered while it is shown (a
        hidden item has no size; hiding never changes its width)."""
        if widget.display and widget.outer_size.width:
            width = widget.outer_size.width + widget.styles.margin.width
            widget._attn_fit_width = width  # type: ignore[attr-defined]
        return getattr(widget, "_attn_fit_width", 0)

    def _fit(self) -> None:
        if not self.is_attached or not self.size.width:
            return
        items, palette = self._items()
        widths = [self._width(w) for w in items]
        if any(w == 0 for w, item in zip(widths, items, strict=True) if item.display):
            self._retries += 1
            if self._retries < 20:
                self.call_after_refresh(self._fit)  # not laid out yet
            return
        self._retries = 0
        room = self.size.width - (self._width(palette) if palette is not None else 0)
        keep = [getattr(w, "action", "") in KEEP_ACTIONS for w in items]
        for item, show in zip(items, fit(widths, keep, room), strict=True):
            if item.display != show:
                item.display = show
