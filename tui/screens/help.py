"""The help screen: every key, from ``tui.keymap``."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.keymap import KEYMAP


def help_text() -> Text:
    width = max(len(k) for _, keys in KEYMAP for k, _ in keys)
    text = Text()
    for i, (section, keys) in enumerate(KEYMAP):
        if i:
            text.append("\n")
        text.append(section + "\n", style="bold underline")
        for key, what in keys:
            text.append(f"  {key.ljust(width)}  ", style="bold")
            text.append(what + "\n")
    return text


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss_help", "Close help"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "attn-tui keys (esc closes)"
            yield Static(help_text(), id="help-text")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
