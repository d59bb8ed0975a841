"""The details panel under the timeline: the selected event, whole.

The rows come from ``tui.details.describe`` (every field and every arg, in units);
this widget lays them out as plain ``Text`` (names are data, never markup) and
makes them reachable from the keyboard: ``tab`` focuses the panel and the arrows,
``j``/``k``, page keys and ``home``/``end`` scroll it; ``i`` expands it to the
view's whole height (the ruler and timeline hide until ``i`` or ``esc``); ``y``
copies the event as JSON to the clipboard (OSC 52, so it reaches the local
clipboard over SSH too).  ``i`` and ``y`` work from the timeline as well: the
view that holds the panel mixes in ``DetailsKeys``.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding
from textual.events import Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from profiling.trace.model import GPU_KINDS
from tui.details import copy_text, describe, event_json
from tui.guard import ReportsErrors
from tui.names import visible
from tui.timeline_model import TimelineModel

HINT = (
    "No event selected: h/l (or click) select events on the cursor row, j/k move rows, "
    "⏎ folds, w/s zoom, a/d pan, ? shows every key."
)
LABEL_MIN_CELLS = 12
"""The label column is as wide as the longest label, up to a quarter of the panel
(at least this); a longer label (an odd arg name) takes what it needs."""

TITLE = "details · i expand · y copy JSON · tab, then ↑↓ scroll"
TITLE_EXPANDED = "details · ↑↓ j/k pgup/pgdn scroll · i / esc back · y copy JSON"


class Details(ReportsErrors, ScrollView, can_focus=True):
    """The selected event's rows; focusable and scrollable, expandable to full height.

    A line-API ``ScrollView`` (not a ``Static``): a ``Static`` taller than its box
    cannot scroll its own content.  The text is wrapped once per update or width
    change; ``render()`` returns it whole (what a test or a screenshot reads)."""

    DEFAULT_CSS = """
    Details {
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
    }
    """

    BINDINGS = [
        Binding("down,j", "scroll_down", "Scroll down", show=False),
        Binding("up,k", "scroll_up", "Scroll up", show=False),
        Binding("pagedown,space", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
        Binding("escape", "leave", "Back to the timeline", show=False),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.expanded = False
        self.model: TimelineModel | None = None
        self.row = -1
        self._back_to: Widget | None = None
        self._text = Text()
        self._rows: list[tuple[str, str]] | None = None
        self._shown: tuple[int, int, bool] | None = None
        self._lines: list[Strip] = []
        self._wrapped_at = -1
        self.border_title = TITLE

    # ---- the line API ----

    def update(self, text: Text, rows: list[tuple[str, str]] | None = None) -> None:
        """Show ``rows`` (label/value, values wrapped under themselves) or, without
        rows, ``text`` as it is; wrapped to the panel's width, scrolling if taller."""
        self._text = text
        self._rows = rows
        self._wrap()

    def render(self) -> Text:  # type: ignore[override]
        return self._text

    def _wrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:  # not laid out yet: wrapped on the first resize
            self._lines, self._wrapped_at = [], -1
            self.virtual_size = Size(0, max(self._text.plain.count("\n") + 1, 1))
            return
        console = self.app.console
        if self._rows is not None:
            self._lines = wrap_rows(console, self._rows, width)
        else:
            options = console.options.update_width(width)
            lines = Segment.split_and_crop_lines(console.render(self._text, options), width,
                                                 pad=False, include_new_lines=False)
            self._lines = [Strip(line) for line in lines]
        self._wrapped_at = width
        self.virtual_size = Size(width, len(self._lines))
        self.refresh()

    def on_resize(self, event: Resize) -> None:
        if self.scrollable_content_region.width != self._wrapped_at:
            self._wrap()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.size.width
        style = self.rich_style
        if not 0 <= index < len(self._lines):
            return Strip.blank(width, style)
        line = self._lines[index].apply_style(style)
        return line.crop_extend(scroll_x, scroll_x + width, style)

    # ---- content ----

    def show(self, model: TimelineModel) -> None:
        """Describe the model's selected event; called on every change of the timeline,
        so a pan or zoom that keeps the selection (and the links' state) costs nothing."""
        row = model.selected
        key = (id(model), row, bool(getattr(model.links, "ready", True)))
        if key == self._shown:
            return
        self._shown = key
        self.model = model
        if row != self.row:
            self.scroll_home(animate=False)
        self.row = row
        if row < 0:
            self.update(_hint(model))
            return
        launch, op, gpu = model.linked(row)
        if int(model.trace.kind[row]) in GPU_KINDS:  # the annotations its launch sits in
            inside = [model.trace.name(a) for a in model.links.region_of(row)]
        else:
            inside = [model.trace.name(a) for a in reversed(model.links.ancestors(row))]
        lines = describe(model.trace, row, launch, op, gpu, origin=model.origin,
                         chain=self._chain(model, launch), inside=inside,
                         attribution=model.links.attribution_of(row))
        self.update(layout(lines), lines)

    @staticmethod
    def _chain(model: TimelineModel, launch: int) -> list[str]:
        """The launch chain's names (outermost op first, the call last), when known: the
        analysis's one chain (``profiling.analysis.launch_chain`` via ``LinkLookup``)."""
        if launch < 0:
            return []
        return [model.trace.name(r) for r in model.links.chain_of(model.selected)]

    def event_text(self) -> str | None:
        """The selected event as the JSON ``y`` copies (None: nothing selected)."""
        model = self.model
        if model is None or model.selected < 0:
            return None
        row = model.selected
        launch, _, _ = model.linked(row)
        event = event_json(model.trace, row, origin=model.origin, chain=self._chain(model, launch))
        return copy_text(event)

    def copy_event(self) -> None:
        """``y``: the event as JSON to the clipboard, and a line saying so."""
        text = self.event_text()
        if text is None:
            self.notify("No event selected: nothing to copy", severity="warning", timeout=3)
            return
        self.app.copy_to_clipboard(text)
        name = visible(self.model.trace.name(self.model.selected)) if self.model else ""
        self.notify(f"Copied {name} as JSON ({len(text):,} characters)", timeout=4,
                    markup=False)  # fmt: skip

    # ---- expand, focus ----

    def toggle_expanded(self) -> None:
        self.set_expanded(not self.expanded)

    def set_expanded(self, expanded: bool, refocus: bool = True) -> None:
        """Expanded, the panel fills its view and takes the focus (so the keys scroll
        it); collapsed, it goes back under the timeline and (``refocus``) the focus
        goes back to where it was."""
        if expanded == self.expanded:
            return
        self.expanded = expanded
        self.set_class(expanded, "-expanded")
        self.styles.height = "1fr" if expanded else None
        self.styles.max_height = "100%" if expanded else None
        parent = self.parent
        for sibling in parent.children if parent is not None else ():
            if sibling is not self:
                sibling.display = not expanded
        if expanded:
            if self.screen.focused is not self:
                self._back_to = self.screen.focused
            self.focus()
        elif refocus:
            self._leave_focus()
        self.border_title = TITLE_EXPANDED if expanded else TITLE

    def action_toggle_details(self) -> None:  # the key map's names for i and y
        self.toggle_expanded()

    def action_copy_event(self) -> None:
        self.copy_event()

    def action_leave(self) -> None:
        """``esc``: collapse an expanded panel, else give the focus back."""
        if self.expanded:
            self.set_expanded(False)
        else:
            self._leave_focus()

    def _leave_focus(self) -> None:
        back = self._back_to
        self._back_to = None
        if back is not None and back.is_attached and back.display:
            back.focus()
        elif self.has_focus:
            self.screen.focus_previous()

    def on_hide(self) -> None:
        """Another view took the screen: collapse, so the timeline is back (and can
        take the focus) when its view returns."""
        if self.expanded:
            self._back_to = None
            self.set_expanded(False, refocus=False)  # the view shown now owns the focus

    def on_focus(self) -> None:
        if not self.expanded:
            self.border_title = TITLE_EXPANDED.replace("i / esc back", "esc back · i expand")

    def on_blur(self) -> None:
        if not self.expanded:
            self.border_title = TITLE


class DetailsKeys(Widget):
    """Mixed into the view that holds a ``Details`` panel, so ``i`` and ``y`` work
    from the timeline (bindings of an ancestor apply to its focused children)."""

    BINDINGS = [
        Binding("i", "toggle_details", "Details: expand / collapse", show=False),
        Binding("y", "copy_event", "Copy the event as JSON", show=False),
    ]

    def action_toggle_details(self) -> None:
        self.query_one(Details).toggle_expanded()

    def action_copy_event(self) -> None:
        self.query_one(Details).copy_event()


def layout(lines: list[tuple[str, str]]) -> Text:
    """Label/value rows as one ``Text``: labels right-aligned in a column, values
    folded under their start when they wrap."""
    text = Text(no_wrap=False, overflow="fold")
    width = min(max(len(k) for k, _ in lines), LABEL_MIN_CELLS)
    for i, (key, value) in enumerate(lines):
        if i:
            text.append("\n")
        text.append(key.rjust(width) + "  ", style="bold")
        text.append(value, style="bold" if key == "name" else "")
    return text


def wrap_rows(console: Console, lines: list[tuple[str, str]], width: int) -> list[Strip]:
    """Rows as screen lines ``width`` cells wide: the label right-aligned in its
    column, the value beside it and, when it wraps, continued under itself."""
    out: list[Strip] = []
    cap = max(LABEL_MIN_CELLS, (width + 3) // 4)
    label_width = min(max((cell_len(k) for k, _ in lines), default=0), cap)
    for key, value in lines:
        label = " " * max(label_width - cell_len(key), 0) + key + "  "
        indent = cell_len(label)
        room = max(width - indent, 8)
        text = Text(value, style="bold" if key == "name" else "")
        for j, piece in enumerate(text.wrap(console, room, overflow="fold")):
            line = Text(label if j == 0 else " " * indent, style="bold", end="")
            line.append_text(piece)
            out.append(Strip(list(line.render(console, end=""))).crop(0, width))
    return out


def _hint(model: TimelineModel) -> Text:
    text = Text(HINT, style="dim")
    warnings = model.trace.warnings
    if warnings:
        text.append(f"\nThe loader repaired this file ({len(warnings)} notes): ", style="bold")
        text.append("; ".join(visible(w) for w in warnings[:3]))
        if len(warnings) > 3:
            text.append(" …")
    return text
