"""The key footer: the focused view's keys in one line, drawn as one piece of text.

Textual's ``Footer`` is a container of one widget per key, composed again each time
the bindings change, which is every time the focus moves: switching views did it
twice, and mounting and styling some thirty widgets was 50-80 ms of each switch
(``bench/tui_views.py``).  This footer is a single widget: a change of bindings
recomputes its items and repaints one line.

It also shows only the keys that fit beside the palette key (Textual's runs the
last keys under the docked palette key at 80 columns, ``2 R▏^p palettes``): keys
are dropped from the end, never help and quit (``?`` lists every key).  A click
on a key presses it, as on Textual's footer; hovering shows its tooltip.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.screen import Screen

KEEP_ACTIONS = frozenset({"help", "quit"})
"""Footer keys never hidden: the help (it lists every key) and quit."""

PALETTE_EDGE = "▏"
"""Drawn before the palette key, as Textual's footer draws its left border."""


@dataclass(frozen=True)
class FooterItem:
    """One key as the footer shows it."""

    key: str  # what ``App.simulate_key`` presses
    display: str  # the key as shown (``^p``)
    description: str
    action: str
    enabled: bool
    tooltip: str

    @property
    def width(self) -> int:
        """Cells the item takes, with the space after it."""
        return cell_len(self.label) + 1

    @property
    def label(self) -> str:
        return f"{self.display} {self.description}" if self.description else self.display


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


def placed(items: list[FooterItem], palette: FooterItem | None,
           width: int) -> list[tuple[int, FooterItem]]:
    """(first cell, item) of every item shown in ``width`` cells (pure): the keys
    from the left, those that fit (``fit``), and the palette key at the right edge
    after its ``PALETTE_EDGE``."""
    palette_cells = cell_len(PALETTE_EDGE) + cell_len(palette.label) if palette else 0
    shown = fit([i.width for i in items], [i.action in KEEP_ACTIONS for i in items],
                width - palette_cells)
    out, x = [], 0
    for item, show in zip(items, shown, strict=True):
        if show:
            out.append((x, item))
            x += item.width
    if palette is not None:
        out.append((max(width - cell_len(palette.label), 0), palette))
    return out


class FitFooter(Widget, can_focus=False):
    """The keys of the screen's active bindings (those with ``show``), one per action."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description", "footer-key--hover"}
    DEFAULT_CSS = """
    FitFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .footer-key--hover {
            background: $block-hover-background;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._items: list[FooterItem] = []
        self._palette: FooterItem | None = None
        self._hover: FooterItem | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        items, palette = self._read_bindings()
        if (items, palette) != (self._items, self._palette):
            self._items, self._palette = items, palette
            self.refresh()

    def _read_bindings(self) -> tuple[list[FooterItem], FooterItem | None]:
        app = self.app
        active = self.screen.active_bindings
        items: dict[str, FooterItem] = {}
        palette = None
        for key, (_node, binding, enabled, tooltip) in active.items():
            item = FooterItem(binding.key, app.get_key_display(binding), binding.description,
                              binding.action, enabled, tooltip or binding.tooltip or "")
            if key == app.COMMAND_PALETTE_BINDING:
                if app.ENABLE_COMMAND_PALETTE:
                    palette = item
            elif binding.show:
                items.setdefault(binding.action, item)  # one key per action, the first
        return list(items.values()), palette

    @property
    def shown(self) -> list[tuple[int, FooterItem]]:
        """(first cell, item) of each key drawn at the footer's present width."""
        return placed(self._items, self._palette, self.size.width)

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        description_style = self.get_component_rich_style("footer-key--description")
        hover_style = self.get_component_rich_style("footer-key--hover")
        dim = Style(dim=True)
        line = Text(no_wrap=True, overflow="crop", end="")
        for x, item in self.shown:
            if item is self._palette:
                line.pad_right(max(x - cell_len(PALETTE_EDGE) - line.cell_len, 0))
                line.append(PALETTE_EDGE, dim)
            start = len(line)
            line.append(item.display, key_style)
            if item.description:
                line.append(" ")
                line.append(item.description, description_style)
            if not item.enabled:
                line.stylize(dim, start)
            if item is self._hover:
                line.stylize(hover_style, start)
            if item is not self._palette:
                line.append(" ")
        line.stylize_before(self.rich_style)  # the footer's colours under transparent parts
        return line

    def _item_at(self, x: int) -> FooterItem | None:
        for start, item in self.shown:
            if start <= x < start + cell_len(item.label):
                return item
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        item = self._item_at(event.x)
        if item is not self._hover:
            self._hover = item
            self.tooltip = (item.tooltip or item.description) if item else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()

    def on_click(self, event: events.Click) -> None:
        item = self._item_at(event.x)
        if item is None:
            return
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()
