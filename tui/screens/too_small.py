"""Shown instead of the app while the terminal is too small (``tui.screen_size``)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from tui.screen_size import too_small_message


class TooSmallScreen(Screen[None]):
    """A plain screen on top of the stack: the app below keeps its state and is
    drawn again, unchanged, when the terminal grows (``AttnTuiApp`` pops this)."""

    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; }
    TooSmallScreen > #too-small { width: auto; height: auto; text-style: bold; }
    """
    BINDINGS = [Binding("q", "app.quit", "Quit")]

    def __init__(self, width: int, height: int) -> None:
        super().__init__()
        self._term_size = (width, height)

    def compose(self) -> ComposeResult:
        yield Static(Text(too_small_message(*self._term_size)), id="too-small")

    def show_size(self, width: int, height: int) -> None:
        self._term_size = (width, height)
        for label in self.query("#too-small").results(Static):  # none before compose
            label.update(Text(too_small_message(width, height)))
