"""Zoom and pan math for the timeline (pure; no Textual).

Times here are float nanoseconds *relative to the trace origin* (its first
event), so epoch-sized Kineto timestamps keep nanosecond precision: the model's
int64 columns are shifted by ``origin`` once, then float64 is exact to well
below a nanosecond for any trace shorter than a few days.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_NS_PER_CELL = 1.0
"""Zooming in stops at one nanosecond per cell."""
ZOOM_STEP = 0.6
"""One zoom-in keypress shows 60% of the span; zoom-out shows 1/0.6 of it."""
PAN_STEP = 0.2
"""One pan keypress moves a fifth of the visible span."""
FIT_MARGIN = 0.01
"""Fit-all shows the trace with 1% of its length free on each side."""


@dataclass
class Viewport:
    """The visible time window ``[start, start + span)`` over ``width`` cells."""

    total: float  # trace length in ns (the fit-all span), at least 1
    width: int = 80  # cells of the track area
    start: float = 0.0
    span: float = 0.0

    def __post_init__(self) -> None:
        self.total = max(float(self.total), 1.0)
        self.width = max(int(self.width), 1)
        if self.span <= 0:
            self.fit_all()

    # ---- geometry ----

    @property
    def end(self) -> float:
        return self.start + self.span

    @property
    def ns_per_cell(self) -> float:
        return self.span / self.width

    def time_at(self, col: float) -> float:
        """The time at the left edge of cell ``col``."""
        return self.start + col * self.ns_per_cell

    def col_at(self, t: float) -> float:
        """The (fractional) cell that holds time ``t``."""
        return (t - self.start) / self.ns_per_cell

    def resize(self, width: int) -> None:
        """Keep the time window, spread over a new number of cells."""
        self.width = max(int(width), 1)
        self._clamp()

    # ---- moves ----

    def fit_all(self) -> None:
        self.start = -self.total * FIT_MARGIN
        self.span = self._max_span()
        self._clamp()

    def show(self, t0: float, t1: float, margin: float = 0.05) -> None:
        """Fit ``[t0, t1]`` into the window with a small margin on each side."""
        lo, hi = min(t0, t1), max(t0, t1)
        width = max(hi - lo, MIN_NS_PER_CELL * self.width * 0.5)
        pad = width * margin
        self.start = lo - pad
        self.span = width + 2 * pad
        self._clamp()

    def zoom(self, factor: float, anchor_col: float | None = None) -> None:
        """Scale the span by ``factor`` (<1 zooms in) keeping the time under
        ``anchor_col`` (default: the middle) where it is on screen."""
        if anchor_col is None:
            anchor_col = self.width / 2
        anchor_col = min(max(anchor_col, 0.0), float(self.width))
        t = self.time_at(anchor_col)
        new_span = self.span * factor
        new_span = max(new_span, MIN_NS_PER_CELL * self.width)
        new_span = min(new_span, self._max_span())
        self.start = t - anchor_col * (new_span / self.width)
        self.span = new_span
        self._clamp()

    def zoom_in(self, anchor_col: float | None = None) -> None:
        self.zoom(ZOOM_STEP, anchor_col)

    def zoom_out(self, anchor_col: float | None = None) -> None:
        self.zoom(1.0 / ZOOM_STEP, anchor_col)

    def pan(self, fraction: float) -> None:
        """Move by ``fraction`` of the visible span (negative: to earlier times)."""
        self.start += fraction * self.span
        self._clamp()

    def pan_cells(self, cells: float) -> None:
        self.start += cells * self.ns_per_cell
        self._clamp()

    def center_on(self, t: float) -> None:
        self.start = t - self.span / 2
        self._clamp()

    def ensure_visible(self, t0: float, t1: float) -> None:
        """Pan (not zoom) so that ``[t0, t1]`` is on screen, when it fits."""
        if t0 >= self.start and t1 <= self.end:
            return
        if t1 - t0 > self.span:
            self.start = t0 - self.span * 0.05
        elif t0 < self.start:
            self.start = t0 - self.span * 0.1
        else:
            self.start = t1 - self.span * 0.9
        self._clamp()

    # ---- limits ----

    def _max_span(self) -> float:
        """Zooming out stops at the whole trace (fit-all's span): further out
        shows only empty space, and a key that seems to do nothing is clearer."""
        return max(self.total * (1 + 2 * FIT_MARGIN), MIN_NS_PER_CELL * self.width)

    def _clamp(self) -> None:
        self.span = min(max(self.span, MIN_NS_PER_CELL * self.width), self._max_span())
        slack = self.span * 0.5
        lo = -slack
        hi = self.total + slack - self.span
        if hi < lo:  # zoomed out past the whole trace: centre it
            self.start = (self.total - self.span) / 2
        else:
            self.start = min(max(self.start, lo), hi)
