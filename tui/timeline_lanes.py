"""Arranging the timeline's lanes (pure; mixed into ``TimelineModel``): pin a
lane to the top, hide it and restore hidden ones, fold the whole process the
cursor is in.

Everything here changes ``Folds`` (``tui.rows``) and rebuilds the rows, so it
works the same for one host and one GPU or for a job of many ranks, each rank a
process group of its own: a key acts on the lane or the group under the cursor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from profiling.trace.model import Trace
    from tui.rows import Folds, RowSpec


class LaneArrangement:
    """Pin, hide, restore, fold a process.  Each returns a short outcome for the
    status notification ('' when the cursor is on nothing it applies to)."""

    trace: Trace
    folds: Folds
    rows: list[RowSpec]
    cursor: int

    if TYPE_CHECKING:

        def rebuild(self) -> None: ...
        @property
        def cursor_spec(self) -> RowSpec | None: ...

    def _cursor_lanes(self) -> tuple[list[int], str]:
        """The lanes under the cursor (a group header: its lanes) and what to call them."""
        spec = self.cursor_spec
        if spec is None or spec.kind == "pins":
            return [], ""
        if spec.kind == "group":
            group = self.trace.groups[spec.group]
            lanes = [lane for lane in group.lanes if self.trace.lanes[lane].events > 0]
            return lanes, group.label or f"process {spec.group}"
        lane = self.trace.lanes[spec.lane]
        return [spec.lane], lane.label or str(lane.tid)

    def _go_to(self, key: tuple) -> None:
        for i, spec in enumerate(self.rows):
            if spec.key == key:
                self.cursor = i
                return

    def toggle_pin(self) -> str:
        """Pin the cursor's lane (a group header: all its lanes) to the top, or unpin it."""
        lanes, name = self._cursor_lanes()
        if not lanes:
            return ""
        pinned = self.folds.pinned
        if all(lane in pinned for lane in lanes):
            self.folds.pinned = [lane for lane in pinned if lane not in lanes]
            outcome = f"unpinned {name}"
        else:
            pinned.extend(lane for lane in lanes if lane not in pinned)
            outcome = f"pinned {name} to the top (p again unpins)"
        spec = self.cursor_spec
        self.rebuild()
        if spec is not None and spec.lane >= 0:
            self._go_to(("lane", spec.group, spec.lane, None))
            self._go_to(("lane", spec.group, spec.lane, 0))
        return outcome

    def hide_lanes(self) -> str:
        """Hide the cursor's lane (a group header: all its lanes); ``X`` brings them back."""
        lanes, name = self._cursor_lanes()
        if not lanes:
            return ""
        self.folds.hidden.update(lanes)
        self.folds.pinned = [lane for lane in self.folds.pinned if lane not in lanes]
        self.rebuild()
        return f"hid {name} (X restores hidden lanes)"

    def restore_lanes(self) -> str:
        """Show every hidden lane again."""
        n = len(self.folds.hidden)
        if not n:
            return ""
        self.folds.hidden.clear()
        self.rebuild()
        return f"restored {n} hidden lane{'s' if n != 1 else ''}"

    def fold_process(self) -> str:
        """Fold (or unfold) the whole process or device the cursor is in, from any of
        its rows; the cursor lands on its header."""
        spec = self.cursor_spec
        if spec is None or spec.kind == "pins":
            return ""
        group = spec.group
        folded = self.folds.groups_folded
        if group in folded:
            folded.discard(group)
        else:
            folded.add(group)
        self.rebuild()
        self._go_to(("group", group, -1, None))
        label = self.trace.groups[group].label or f"process {group}"
        return f"{'folded' if group in folded else 'unfolded'} {label}"
