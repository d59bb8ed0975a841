"""The timeline's styles (its component classes per event kind), kept out of
``timeline.py`` so that module stays small.  Every style is cached per theme and
dropped when Textual restyles the widget: a frame asks for them once per cell run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from textual.color import Color

from profiling.trace.model import Kind

if TYPE_CHECKING:
    from tui.timeline_model import TimelineModel

KIND_CLASS = {
    Kind.CPU_OP: "timeline--cpu",
    Kind.USER_ANNOTATION: "timeline--annotation",
    Kind.RUNTIME: "timeline--runtime",
    Kind.KERNEL: "timeline--kernel",
    Kind.MEMCPY: "timeline--memcpy",
    Kind.MEMSET: "timeline--memset",
    Kind.GPU_ANNOTATION: "timeline--annotation",
    Kind.PYTHON_FUNCTION: "timeline--python",
}
_CLASS_BY_CODE: dict[int, str] = {int(k): v for k, v in KIND_CLASS.items()}


class TimelineStyles:
    """Mixed into ``Timeline`` (before ``ScrollView``, for ``notify_style_update``)."""

    model: TimelineModel
    _styles: dict[tuple, Style]
    _theme_key: object

    if TYPE_CHECKING:

        @property
        def rich_style(self) -> Style: ...
        def get_component_rich_style(
            self, *names: str, partial: bool = False, default: Style | None = None
        ) -> Style: ...

    def _style(self, name: str) -> Style:
        key = (self._theme_key, name)
        style = self._styles.get(key)
        if style is None:
            style = self.get_component_rich_style(name, partial=False)
            self._styles[key] = style
        return style

    def _base_style(self) -> Style:
        """The widget's own style (the padding of every line), cached like the
        component styles: ``rich_style`` walks every ancestor's styles, ~0.2 ms a call,
        and a frame asked it once per visible line."""
        key = (self._theme_key, None)
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = self.rich_style
        return style

    def notify_style_update(self) -> None:
        self._styles.clear()
        super().notify_style_update()  # type: ignore[misc]

    def _event_style(self, row: int, dense: int, alt: bool = False) -> Style:
        kind = int(self.model.trace.kind[row])
        name = _CLASS_BY_CODE.get(kind, "timeline--other")
        if row == self.model.selected:
            return self._style("timeline--selected")
        base = self._style(name)
        if dense:
            key = (self._theme_key, name, "dense")
            style = self._styles.get(key)
            if style is None:
                empty = self._style("timeline--empty")
                style = Style(color=base.bgcolor, bgcolor=empty.bgcolor)
                self._styles[key] = style
            return style
        if alt:
            key = (self._theme_key, name, "alt")
            style = self._styles.get(key)
            if style is None:
                style = base
                if base.bgcolor is not None and base.bgcolor.triplet is not None:
                    c = Color.from_rich_color(base.bgcolor).darken(0.12)
                    style = base + Style(bgcolor=c.rich_color)
                self._styles[key] = style
            return style
        return base
