"""The timeline's lane keys (pin, hide, restore, fold a process) and ``o`` (the
occurrences of the selected event's name), kept out of ``timeline.py`` so that
module stays small; the lane logic is ``tui.timeline_lanes``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.widgets.occurrence_jumps import ShowOccurrences

if TYPE_CHECKING:
    from tui.timeline_model import TimelineModel


class LaneKeys:
    """Mixed into ``Timeline``."""

    model: TimelineModel

    if TYPE_CHECKING:

        def _after(self, scroll: bool = True) -> None: ...
        def notify(self, message: str, **kwargs) -> None: ...
        def post_message(self, message: object) -> bool: ...

    def _say(self, outcome: str, otherwise: str) -> None:
        if outcome:
            self.notify(outcome, timeout=3, markup=False)
        else:
            self.notify(otherwise, severity="warning", timeout=3, markup=False)
        self._after()

    def action_pin_lane(self) -> None:
        """``p``: pin the cursor's lane (or a process's lanes) to the top; again: unpin."""
        self._say(self.model.toggle_pin(), "Move the cursor onto a lane or a process to pin it")

    def action_hide_lane(self) -> None:
        """``x``: hide the cursor's lane (or a process's lanes)."""
        self._say(self.model.hide_lanes(), "Move the cursor onto a lane or a process to hide it")

    def action_restore_lanes(self) -> None:
        """``X``: show every hidden lane again."""
        self._say(self.model.restore_lanes(), "No hidden lanes")

    def action_fold_process(self) -> None:
        """``c``: fold or unfold the whole process the cursor is in."""
        self._say(self.model.fold_process(), "Move the cursor onto a process or one of its lanes")

    def action_fold_rank(self) -> None:
        """``R``: fold or unfold every process group of the rank the cursor is in (a job)."""
        from profiling.analysis.job_merge import job_of_trace
        from tui.job_progressive import still_loading
        from tui.job_session import fold_rank

        if still_loading(self.model.trace):  # a first rank's job: its other ranks are not in
            self._say("", still_loading(self.model.trace))
            return
        otherwise = ("Move the cursor onto a rank's process or one of its lanes"
                     if job_of_trace(self.model.trace) is not None
                     else "R folds a rank of a job; this is one trace (c folds its process)")
        self._say(fold_rank(self.model), otherwise)

    def action_occurrences(self) -> None:
        """``o``: list every event named as the selected one (on its kind of lane)."""
        model = self.model
        row = model.selected
        if row < 0:
            self.notify("Select an event first (h/l or click)", severity="warning", timeout=3)
            return
        lane = model.trace.lanes[int(model.trace.lane[row])]
        self.post_message(ShowOccurrences(model.trace.name(row), lane.kind))
