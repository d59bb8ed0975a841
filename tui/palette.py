"""The command palette's entries: every action of the key map, the open files by
name and the Ops table's columns to sort by.

Typing "sort", "filter", "fold" or a file's name finds something, because each
action the keys run is here under its view and its keys (``tui.keymap``).  The
palette reads titles and help as Textual markup, so every text is escaped: a
file named ``[bold]x.json`` is shown as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import Protocol

from textual.app import SystemCommand
from textual.markup import escape

from tui.keymap import palette_entries
from tui.names import visible
from tui.ops_table import COLUMNS

REPLACED_SYSTEM_COMMANDS = frozenset({"Keys", "Quit", "Screenshot"})
"""Textual's own entries that ours replace: one help (ours lists every key), one
quit, one screenshot (ours says where the file went)."""


class PaletteApp(Protocol):
    """What the palette needs of ``AttnTuiApp`` (kept apart to avoid an import circle)."""

    paths: list[str]

    async def run_action(self, action: str) -> bool: ...

    def run_in_view(self, view: str, action: str, tries: int = ...) -> None: ...

    def show_file(self, index: int) -> None: ...


def _command(title: str, help_text: str, callback: Callable[[], object]) -> SystemCommand:
    return SystemCommand(escape(title), escape(help_text.replace("\n", " ")), callback)


def palette_commands(app: PaletteApp) -> Iterator[SystemCommand]:
    for title, help_text, key in palette_entries():
        if key.view == "app":
            yield _command(title, help_text, partial(app.run_action, key.action))
        else:
            yield _command(title, help_text, partial(app.run_in_view, key.view, key.action))
    for col in COLUMNS:
        yield _command(
            f"Ops: sort by {col.title}",
            "Sort the op table by this column (again: reverse)",
            partial(app.run_in_view, "ops", f"sort_by({col.key!r})"),
        )
    for i, path in enumerate(app.paths):
        name = visible(os.path.basename(path) or path)
        yield _command(f"File: {name}", f"Show {visible(path)}", partial(app.show_file, i))
