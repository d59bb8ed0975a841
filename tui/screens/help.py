"""The help screen: every key, from ``tui.keymap`` (the one source of the key map)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.keymap import SECTIONS, help_rows
from tui.screens.legend import legend_text, sample_styles


def help_text() -> Text:
    """The key map with headings in bold (the same rows as ``keymap_text``)."""
    sections = [(title, help_rows(view)) for view, title in SECTIONS.items()]
    width = max(len(k.keys) for _, rows in sections for k in rows)
    text = Text()
    for i, (title, rows) in enumerate(sections):
        if i:
            text.append("\n")
        text.append(title + "\n", style="bold underline")
        for key in rows:
            first, *more = key.help.split("\n")
            text.append(f"  {key.keys.ljust(width)}  ", style="bold")
            text.append(first + "\n")
            for line in more:
                text.append(f"  {'':{width}}  {line}\n")
    return text


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss_help", "Close help"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "attn-tui keys (esc closes)"
            yield Static(help_text(), id="help-text")
            heading = Text("\nTimeline legend (L on the timeline)\n", style="bold underline")
            yield Static(heading + legend_text(sample_styles(self.app)), id="help-legend")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
