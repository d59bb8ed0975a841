"""attn-tui's two themes and the choice between them.

Colours tell the story at a glance: kernels green, CPU ops blue, annotations
violet, runtime calls grey, and Memcpy/Memset in hot red/orange with bold
white text, so the extra copy of naive attention jumps out of the GPU lane.
The default follows the terminal: ``COLORFGBG`` (set by many terminals) says
whether its background is light; ``ATTN_TUI_THEME`` overrides.
"""

from __future__ import annotations

import os

from textual.theme import Theme

_DARK_KINDS = {
    "kind-cpu": "#2f5f8f",
    "kind-annotation": "#6b4c9a",
    "kind-runtime": "#4a4f57",
    "kind-kernel": "#2e7d4f",
    "kind-memcpy": "#e0245e",
    "kind-memset": "#e07b00",
    "kind-python": "#5c5c3d",
    "kind-other": "#555555",
    "kind-text": "#f0f0f0",
    "kind-empty": "#15181c",
    "kind-linked": "#26c6da",  # linked to the selection (tui/link_marks.py): a hue no kind has
}
_LIGHT_KINDS = {
    "kind-cpu": "#a9c8ec",
    "kind-annotation": "#cdb6ee",
    "kind-runtime": "#d0d3d8",
    "kind-kernel": "#9bd8ad",
    "kind-memcpy": "#d0104c",
    "kind-memset": "#e07b00",
    "kind-python": "#e2e2b8",
    "kind-other": "#cccccc",
    "kind-text": "#111111",
    "kind-empty": "#fafafa",
    "kind-linked": "#4dd0e1",
}

DARK = Theme(
    name="attn-dark",
    primary="#4f9ddb",
    secondary="#3a6f99",
    accent="#c792ea",
    warning="#ffb347",
    error="#e0245e",
    success="#4ebf71",
    foreground="#e0e0e0",
    background="#1b1e23",
    surface="#23272e",
    panel="#2b3038",
    dark=True,
    variables=_DARK_KINDS,
)
LIGHT = Theme(
    name="attn-light",
    primary="#1f6fb2",
    secondary="#5a87b0",
    accent="#7b3fc4",
    warning="#b36b00",
    error="#c0103f",
    success="#1f8a4c",
    foreground="#1b1e23",
    background="#f7f7f5",
    surface="#ffffff",
    panel="#e8e8e4",
    dark=False,
    variables=_LIGHT_KINDS,
)
THEMES = (DARK, LIGHT)

COPY_STYLE = {"memcpy": "bold red", "memset": "bold dark_orange"}
"""Memcpy/Memset rows stand out in the tables as they do on the timeline."""


def default_theme(environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    forced = env.get("ATTN_TUI_THEME", "").strip()
    if forced in ("dark", DARK.name):
        return DARK.name
    if forced in ("light", LIGHT.name):
        return LIGHT.name
    fgbg = env.get("COLORFGBG", "")
    if fgbg:
        bg = fgbg.split(";")[-1]
        if bg.isdigit() and int(bg) in (7, 15):
            return LIGHT.name
    return DARK.name

SEVERITY_STYLE = {"high": "bold red", "medium": "bold yellow", "low": "dim"}
"""Findings by severity: clear waste in red, worth-a-look in yellow, context dimmed."""
