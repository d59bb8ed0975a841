"""The key map has one source (``tui.keymap``): the README's block is made from
it, every binding of every widget is in it, and every action it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.dom import DOMNode

from tui import keymap
from tui.app import VIEW_WIDGETS, AttnTuiApp
from tui.screens.help import help_text
from tui.screens.picker import PickerApp
from tui.widgets import details
from tui.widgets.compare_view import CompareView

README = Path(__file__).resolve().parent.parent / "README.md"
TARGETS: dict[str, tuple[type, ...]] = {
    "app": (AttnTuiApp,), "compare": (CompareView,),
    **{view: (cls,) for view, cls in VIEW_WIDGETS.items()},
}  # fmt: skip
TARGETS["details"] += (details.Details,)  # the panel's own scroll keys
TARGETS["picker"] = (PickerApp,)  # attn-tui open with no PATH


def test_readme_block_is_made_from_the_keymap():
    # regenerate with: python -m tui.keymap --update README.md
    assert keymap.readme_block(README.read_text(encoding="utf-8")) == keymap.markdown()


def test_update_rewrites_only_the_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{keymap.BEGIN}\nstale\n{keymap.END}\nafter\n", encoding="utf-8")
    assert keymap.update_readme(readme)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("before\n") and text.endswith("\nafter\n")
    assert keymap.readme_block(text) == keymap.markdown()
    assert not keymap.update_readme(readme)  # already current


def _keys(binding: Binding) -> set[str]:
    return {k.strip() for k in binding.key.split(",")}


def _own_bindings(cls: type) -> list[Binding]:
    """Bindings a class of ours declares (Textual's own, e.g. DataTable's, left out)."""
    found: list[Binding] = []
    for klass in cls.__mro__:
        if klass.__module__.startswith("tui.") and issubclass(klass, DOMNode):
            found.extend(b for b in klass.__dict__.get("BINDINGS", []) if isinstance(b, Binding))
    return found


@pytest.mark.parametrize("view", sorted(TARGETS))
def test_every_binding_is_in_the_keymap(view):
    """A key bound in a widget but missing from the key map would be missing from
    the help, the palette and the README."""
    listed = [(set(k.bind.split(",")), k.action) for k in keymap.KEYS if k.bind]
    for cls in TARGETS[view]:
        for b in _own_bindings(cls):
            via = re.fullmatch(r"timeline\('(.*)'\)", b.action)  # TimelineView's forwarding
            action = via.group(1) if via else b.action
            assert any(_keys(b) <= keys and action == a for keys, a in listed), (
                f"{cls.__name__} binds {b.key} -> {b.action}, which tui/keymap.py does not list"
            )


def test_every_keymap_action_exists():
    for k in keymap.KEYS:
        if not k.bind:
            continue
        name = "action_" + k.action.split("(")[0]
        assert any(hasattr(cls, name) for cls in TARGETS[k.view]), f"{k.keys}: no {name}"


def test_no_key_bound_twice_in_one_view():
    for view in keymap.SECTIONS:
        seen: dict[str, str] = {}
        for b in keymap.bindings(view):
            for key in _keys(b):
                assert key not in seen or seen[key] == b.action, f"{view}: {key} bound twice"
                seen[key] = b.action


def test_help_and_text_show_the_same_rows():
    text = keymap.keymap_text()
    shown = help_text().plain
    for view, title in keymap.SECTIONS.items():
        assert title in text and title in shown
        for k in keymap.help_rows(view):
            first = k.help.split("\n")[0]
            assert first in text and first in shown


def test_palette_has_each_action_once_and_escapes_nothing_needed():
    entries = keymap.palette_entries()
    actions = [(k.view, k.action) for _, _, k in entries]
    assert len(actions) == len(set(actions))
    titles = [t for t, _, _ in entries]
    assert sum("help" in t.lower() for t in titles) == 1


def test_help_lines_fit_the_help_box_at_80_columns():
    """The help box is 76 cells inside at 80 columns: key column and help line fit,
    so nothing wraps under the key column."""
    for line in keymap.keymap_text().splitlines():
        assert len(line) <= 74, line
