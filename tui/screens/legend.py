"""The legend (``L`` on the timeline, and the end of the help): what each
colour, letter and glyph of the timeline means (rows from ``tui.glyphs``).

Samples are drawn in the timeline's own styles, taken from the timeline widget
when one is mounted (so under ``NO_COLOR=1`` they look as the boxes do there,
reversed), else from the theme's kind colours."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.glyphs import legend_rows

_VARIABLES = {
    "timeline--cpu": "kind-cpu", "timeline--annotation": "kind-annotation",
    "timeline--runtime": "kind-runtime", "timeline--kernel": "kind-kernel",
    "timeline--memcpy": "kind-memcpy", "timeline--memset": "kind-memset",
    "timeline--python": "kind-python", "timeline--other": "kind-other",
    "timeline--selected": "warning", "timeline--linked": "kind-linked",
}  # fmt: skip


def sample_styles(app: App) -> dict[str, Style]:
    """The style of each legend colour: the timeline's when it is mounted."""
    from tui.widgets.timeline import Timeline  # the widget imports this module's users

    found = list(app.query(Timeline))
    if found:
        return {cls: found[0].get_component_rich_style(cls, partial=False) for cls in _VARIABLES}
    variables = app.get_css_variables()
    out = {}
    for cls, var in _VARIABLES.items():
        dark_text = var in ("warning", "kind-linked")  # light backgrounds
        fg = "#000000" if dark_text else variables.get("kind-text", "#ffffff")
        bg = variables.get(var)
        out[cls] = Style.parse(f"{fg} on {bg}") if bg else Style(reverse=True)
    return out


def legend_text(styles: dict[str, Style]) -> Text:
    """The legend as styled text: a sample in its style, then what it means."""
    rows = legend_rows()
    width = max(len(sample) for _, sample, _ in rows)
    text = Text()
    for cls, sample, meaning in rows:
        first, *more = meaning.split("\n")
        text.append("  ")
        text.append(sample.ljust(width), style=styles.get(cls, Style()) if cls else "bold")
        text.append(f"  {first}\n")
        for line in more:
            text.append(f"  {'':{width}}  {line}\n")
    return text


class LegendScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,L", "dismiss_legend", "Close the legend")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="legend-box") as box:
            box.border_title = "timeline legend (esc closes)"
            text = legend_text(sample_styles(self.app))
            text.rstrip()  # no blank line above the box's bottom border
            yield Static(text, id="legend-text")

    def action_dismiss_legend(self) -> None:
        self.dismiss(None)
