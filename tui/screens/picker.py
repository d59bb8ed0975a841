"""``attn-tui open`` with no PATH: pick the traces to open from the current folder.

A small app of its own that runs before the viewer (the viewer is built for
the paths it is given): the folder's traces newest first, with their size,
variant and device (``tui.trace_list``).  Space marks, Enter opens the marked
ones (or the highlighted one when none is marked), ``q`` leaves without opening
anything.  Its result is the list of paths, or None.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import SelectionList, Static

from tui.keymap import bindings
from tui.names import visible
from tui.themes import THEMES, default_theme
from tui.trace_list import TraceEntry, listing_lines
from tui.widgets.fit_footer import FitFooter

PICKER_CSS = """
#picker-title { padding: 0 1; background: $panel; text-style: bold;
                text-wrap: nowrap; text-overflow: ellipsis; }
#picker-head { padding: 0 1 0 5; color: $foreground-muted; text-wrap: nowrap; }
#picker-list { height: 1fr; border: none; }
#picker-marked { padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
"""


class PickerApp(App[list[str] | None]):
    """The traces of one folder as a selection list; exits with the chosen paths."""

    CSS = PICKER_CSS
    TITLE = "attn-tui open"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = bindings("picker")

    def __init__(self, entries: Sequence[TraceEntry], folder: str,
                 theme: str | None = None) -> None:
        super().__init__()
        self.entries = list(entries)
        self.folder = folder
        for t in THEMES:
            self.register_theme(t)
        self.theme = theme or default_theme()

    def compose(self) -> ComposeResult:
        n = len(self.entries)
        title = Text(f"{n} trace{'s' if n != 1 else ''} in {visible(self.folder)} · space "
                     "marks · ⏎ opens the marked (or the highlighted)", no_wrap=True,
                     overflow="ellipsis")
        yield Static(title, id="picker-title")
        width = max(self.size.width - 40, 24) if self.size.width else 40
        head, *lines = listing_lines(self.entries, name_width=width)
        yield Static(Text(head, no_wrap=True, overflow="ellipsis"), id="picker-head")
        yield SelectionList[int](*[(Text(line, no_wrap=True), i) for i, line in enumerate(lines)],
                                 id="picker-list")
        yield Static(id="picker-marked")
        yield FitFooter()

    @property
    def choices(self) -> SelectionList[int]:
        return self.query_one("#picker-list", SelectionList)

    def on_mount(self) -> None:
        self.choices.focus()
        self._say_marked()

    def on_selection_list_selected_changed(self) -> None:
        self._say_marked()

    def _say_marked(self) -> None:
        """The marked names in words: the checkbox tells them apart by colour only,
        which ``NO_COLOR`` takes away."""
        marked = [self.entries[i].name for i in sorted(self.choices.selected)]
        text = (f"marked {len(marked)}: " + ", ".join(marked) if marked
                else "none marked: ⏎ opens the highlighted trace")
        self.query_one("#picker-marked", Static).update(Text(visible(text), no_wrap=True,
                                                             overflow="ellipsis"))

    def chosen(self) -> list[str]:
        """The marked traces in listing order, else the highlighted one."""
        marked = sorted(self.choices.selected)
        if not marked and self.choices.highlighted is not None:
            marked = [self.choices.highlighted]
        return [self.entries[i].path for i in marked]

    def action_open(self) -> None:
        self.exit(self.chosen() or None)

    def action_toggle_all(self) -> None:
        if len(self.choices.selected) == len(self.entries):
            self.choices.deselect_all()
        else:
            self.choices.select_all()

    def action_cancel(self) -> None:
        self.exit(None)
