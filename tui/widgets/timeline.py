"""The timeline: one screen row per group, lane or depth, drawn with the line API.

Each ``render_line`` asks ``TimelineModel`` for the cells of one row (a few
binary searches on that row's track, see ``tui.tracks``) and turns runs of
cells into Segments.  Names go through ``tui.names.visible`` and into Segments
as plain text, never markup.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from profiling.trace.model import GPU_KINDS
from tui.glyphs import low_colour
from tui.guard import ReportsErrors
from tui.link_marks import connectors
from tui.names import fit, visible
from tui.timeline_model import TimelineModel
from tui.timeline_moves import next_gpu_lane, next_lane, unfold_for_gpu
from tui.widgets.lane_keys import LaneKeys
from tui.widgets.mark_keys import MarkKeys
from tui.widgets.timeline_styles import TimelineStyles
from tui.widgets.track_draw import summary_label, track_segments

LABEL_KEEP = 14
"""Cells of a folded row's label kept for its name before its count is added."""


def label_width(total: int) -> int:
    """Cells given to lane labels: a fifth of the width, 14 to 30."""
    return max(14, min(30, total // 5))


class Timeline(ReportsErrors, MarkKeys, LaneKeys, TimelineStyles, ScrollView, can_focus=True,
               inherit_bindings=False):  # its keys: the view's (tui/keymap.py), not scrolling
    """Lanes over time.  Keys act on the model; the widget only draws it."""

    COMPONENT_CLASSES = {
        "timeline--label",
        "timeline--group",
        "timeline--cursor",
        "timeline--empty",
        "timeline--cpu",
        "timeline--annotation",
        "timeline--runtime",
        "timeline--kernel",
        "timeline--memcpy",
        "timeline--memset",
        "timeline--python",
        "timeline--other",
        "timeline--selected",
        "timeline--linked",
        "timeline--connector",
        "timeline--density",
    }

    # Its keys (tui/keymap.py) are bound on TimelineView, so they also work while
    # the details panel has the focus; the actions are here.

    class Changed(Message):
        """The window, the rows or the selection changed (the ruler and details redraw)."""

        def __init__(self, timeline: Timeline) -> None:
            super().__init__()
            self.timeline = timeline

    def __init__(self, model: TimelineModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model
        self._styles: dict[tuple, Style] = {}
        self._theme_key: object = None
        self._conn_key: tuple = ()
        self._conn: dict[int, dict[int, str]] = {}

    # ---- sizes ----

    @property
    def label_cells(self) -> int:
        return label_width(self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        if self.model.viewport.width == max(self.size.width - self.label_cells, 1):
            # Only the height changed (the range panel or the details unfolding): the
            # layout's own frame already draws the new rows, and nothing beside the
            # timeline depends on its height; a second frame here cost ~40 ms at 1 M events
            self._scroll_cursor_into_view()
            return
        self._fit_width()
        self._sync()

    def on_mount(self) -> None:
        self._fit_width()
        self._sync(scroll=False)

    def _fit_width(self) -> None:
        self.model.label_cells = self.label_cells
        self.model.resize(max(self.size.width - self.label_cells, 1))

    def _sync(self, scroll: bool = True) -> None:
        """After a model change: size, keep the cursor on screen, redraw, tell others."""
        self.virtual_size = Size(self.size.width, len(self.model.rows))
        if scroll:
            self._scroll_cursor_into_view()
        self.refresh()
        self.post_message(self.Changed(self))

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        y = self.model.cursor
        top = int(self.scroll_y)
        if y < top:
            self.scroll_to(y=y, animate=False)
        elif height and y >= top + height:
            self.scroll_to(y=y - height + 1, animate=False)

    # ---- drawing ----

    @property
    def low_colour(self) -> bool:
        """Colour cannot tell events apart here (``glyphs.low_colour``); events then
        end in a separator where they touch."""
        app = self.app
        return low_colour(bool(app.no_color), app.console.color_system, app.is_headless)

    def render_lines(self, crop: Region) -> list[Strip]:
        top = int(self.scroll_y) + crop.y
        try:  # the rows' tracks at once, on threads; render_line builds any left
            self.model.prefetch(top, top + crop.height)
        except Exception:  # noqa: BLE001 - render_line meets it again, and reports it
            pass
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        self._theme_key = self.app.theme
        if self.size.width and self.model.viewport.width != self.size.width - self.label_cells:
            self._fit_width()  # a resize not seen yet (the first frame after mounting)
            self.call_later(self.post_message, self.Changed(self))
        index = y + int(self.scroll_y)
        width = self.size.width
        if not self.model.rows and y == 1 and width > 0:
            note = "  This trace has no events to draw."
            return Strip([Segment(note, self._style("timeline--label"))]).adjust_cell_length(
                width, self._base_style()
            )
        if index >= len(self.model.rows) or width <= 0:
            return Strip.blank(width, self._base_style())
        segments = self._label(index) + self._track(index)
        return Strip(segments).adjust_cell_length(width, self._base_style())

    def _label(self, index: int) -> list[Segment]:
        spec = self.model.rows[index]
        width = self.label_cells
        if spec.kind == "pins":
            text = "■ " + spec.label
            style = self._style("timeline--group")
        elif spec.kind == "group":
            text = ("▸ " if spec.folded else "▾ ") + visible(spec.label)
            style = self._style("timeline--group")
        elif spec.kind == "lane":
            arrow = "▸ " if spec.folded else ("▾ " if spec.depth is not None else "  ")
            text = "  " + arrow + visible(spec.label)
            style = self._style("timeline--label")
        else:
            text = "    │"
            style = self._style("timeline--label")
        if index == self.model.cursor and self.has_focus:
            style = self._style("timeline--cursor")
        elif index == self.model.cursor:
            style = style + Style(underline=True)
        room = width - 1
        for extra in summary_label(self.model, index) if spec.folded else ():
            if room - len(extra) - 1 >= LABEL_KEEP:  # a folded row: its count, busy share
                text = fit(text, room - len(extra)) + extra
                break
        return [Segment(fit(text, room), style), Segment(" ", style)]

    def _track(self, index: int) -> list[Segment]:
        return track_segments(self.model, index, low=self.low_colour, style_of=self._style,
                              event_style=self._event_style,
                              conn=self._connectors().get(index))  # fmt: skip

    def _connectors(self) -> dict[int, dict[int, str]]:
        """The launch-link connectors of this frame (``tui.link_marks``), worked out
        once per frame for the rows on screen, not once per line."""
        model, vp = self.model, self.model.viewport
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height or self.size.height
        key = (model.version, model.selected, top, height, vp.start, vp.span, vp.width,
               model.links.ready)  # fmt: skip
        if key != self._conn_key:
            self._conn_key = key
            self._conn = connectors(model.link_set, model.trace, model.where, vp.start,
                                    vp.ns_per_cell, vp.width, (top, top + height),
                                    model.origin)  # fmt: skip
        return self._conn

    # ---- actions ----

    def _after(self, scroll: bool = True) -> None:
        self._sync(scroll)

    def action_zoom_in(self) -> None:
        self.model.zoom_in()
        self._after()

    def action_zoom_out(self) -> None:
        self.model.zoom_out()
        self._after()

    def action_pan(self, direction: int) -> None:
        self.model.pan(direction)
        self._after()

    def action_cursor(self, delta: int) -> None:
        self.model.move_cursor(delta)
        self._after()

    def action_lane(self, direction: int) -> None:
        """The cursor to the next / previous lane or process, past depth rows."""
        model = self.model
        model.cursor = next_lane(model.rows, model.cursor, direction)
        model.version += 1
        self._after()

    def action_gpu_lane(self) -> None:
        """The cursor to the next GPU lane (wrapping), unfolding a folded device."""
        model = self.model
        target = next_gpu_lane(model.trace, model.rows, model.cursor)
        if target < 0 and unfold_for_gpu(model.trace, model.folds):
            model.rebuild()
            target = next_gpu_lane(model.trace, model.rows, model.cursor)
        if target < 0:
            hidden = any(model.trace.lanes[i].kind == "gpu" for i in model.folds.hidden)
            why = "GPU lanes hidden: X restores them" if hidden else "This trace has no GPU lane"
            self.notify(why, severity="warning", timeout=3)
            return
        model.cursor = target
        model.version += 1
        self._after()

    def action_fold(self) -> None:
        self.model.toggle_fold()
        self._after()

    def action_unfold_all(self) -> None:
        self.model.set_all_folds(True)
        self._after()

    def action_fold_all(self) -> None:
        self.model.set_all_folds(False)
        self._after()

    def action_step(self, direction: int) -> None:
        self.model.step(direction)
        self._after()

    def action_zoom_selection(self) -> None:
        if not self.model.zoom_to_selection():
            self.notify("Select an event first (h/l or click)", severity="warning")
        self._after()

    def action_fit_all(self) -> None:
        self.model.fit_all()
        self._after()

    def action_follow_link(self) -> None:
        if self.model.selected < 0:
            self.notify("Select an event first (h/l or click)", severity="warning")
        elif self.model.follow_link() < 0:
            self.notify("No linked event across the CPU/GPU boundary", severity="warning")
        self._after()

    def action_back(self) -> None:
        if self.model.back() < 0:
            self.notify("Nothing to go back to", severity="information")
        self._after()

    def action_mark_range(self) -> None:
        """``m``: the selected event's span (with the GPU work it launched) is the range."""
        model = self.model
        if model.mark_range() < 0:
            self.notify("Select an event first (h/l or click), then m marks its span",
                        severity="warning")  # fmt: skip
        elif not model.links.ready and int(model.trace.kind[model.selected]) not in GPU_KINDS:
            self.notify("Still analysing: the range is the CPU span only; press m again "
                        "for its GPU work once the analysis is done", timeout=5)  # fmt: skip
        self._after(scroll=False)

    def action_resize_range(self, direction: int) -> None:
        """shift+pan: the range's end later (grow) or earlier (shrink)."""
        if not self.model.resize_range(direction):
            self.notify("No range yet: m marks the selected event's span", severity="warning")
        self._after(scroll=False)

    def action_clear_range(self) -> None:
        self.model.clear_range()
        self._after(scroll=False)

    def action_legend(self) -> None:
        """``L``: what the colours, letters and glyphs mean."""
        from tui.screens.legend import LegendScreen  # it looks this widget up for styles

        self.app.push_screen(LegendScreen())

    def action_clear_selection(self) -> None:
        self.model.select(-1, remember=False)
        self._after()

    def select_row(self, row: int) -> None:
        """Select a trace row from outside (search, regions view)."""
        self.model.select(row)
        self._after()

    # ---- mouse ----

    def on_click(self, event: events.Click) -> None:
        index = event.y + int(self.scroll_y)
        if not 0 <= index < len(self.model.rows):
            return
        col = event.x - self.label_cells
        if col < 0:
            self.model.cursor = index
            self.model.toggle_fold(index)
        else:
            self.model.cursor = index
            row = self.model.event_at(index, col)
            if row >= 0:
                self.model.select(row, reveal=False)
            self.model.version += 1
        self._after()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if event.ctrl or event.shift:
            event.prevent_default()
            event.stop()
            self.model.zoom_out(max(event.x - self.label_cells, 0))
            self._after(scroll=False)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if event.ctrl or event.shift:
            event.prevent_default()
            event.stop()
            self.model.zoom_in(max(event.x - self.label_cells, 0))
            self._after(scroll=False)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
