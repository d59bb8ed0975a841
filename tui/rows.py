"""The timeline's rows: groups, lanes and depth rows, folded or not (pure).

A group (host process, GPU device, a rank's process) folds to one header row
showing the union of its lanes; unfolded, its header is followed by its lanes.
A lane folds to one summary row; unfolded, a CPU lane shows one row per nesting
depth.  Pinned lanes come first, under a "pinned" header, in the order they
were pinned (whatever group they belong to); hidden lanes are left out, and
their group's header says how many it hides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from profiling.trace.model import Trace

AUTO_UNFOLD_DEPTHS = 12
"""Lanes with at most this many depth rows start unfolded."""


@dataclass(frozen=True)
class RowSpec:
    kind: str  # "group", "lane" (a folded lane or an unfolded lane's depth 0), "depth",
    # or "pins" (the header over the pinned lanes; group -1)
    group: int
    lane: int = -1
    depth: int | None = None  # None: the summary of a folded lane / group
    label: str = ""
    folded: bool = False

    @property
    def key(self) -> tuple:
        return (self.kind, self.group, self.lane, self.depth)


@dataclass
class Folds:
    """Which groups are folded, which lanes are unfolded, pinned (in pin order)
    and hidden."""

    groups_folded: set[int] = field(default_factory=set)
    lanes_open: set[int] = field(default_factory=set)
    pinned: list[int] = field(default_factory=list)
    hidden: set[int] = field(default_factory=set)

    def toggle(self, spec: RowSpec) -> None:
        if spec.kind == "group":
            self.groups_folded ^= {spec.group}
        elif spec.lane >= 0:
            self.lanes_open ^= {spec.lane}

    def set_all(self, trace: Trace, depths: list[int], open_: bool) -> None:
        """Unfold (or fold) every group (process, device) and every lane with more
        than one row."""
        if open_:
            self.groups_folded.clear()
            self.lanes_open = {i for i, d in enumerate(depths) if d > 1}
        else:
            self.lanes_open.clear()
            self.groups_folded = {g.index for g in trace.groups}


def default_folds(trace: Trace, depths: list[int]) -> Folds:
    """Everything unfolded, except lanes too deep to read (Python stacks)."""
    return Folds(
        groups_folded=set(),
        lanes_open={i for i, d in enumerate(depths) if 1 < d <= AUTO_UNFOLD_DEPTHS},
    )


def _lane_rows(trace: Trace, folds: Folds, depths: list[int], group: int, lane: int,
               out: list[RowSpec]) -> None:  # fmt: skip
    label = trace.lanes[lane].label or f"{trace.lanes[lane].tid}"
    n = depths[lane]
    if lane in folds.lanes_open and n > 1:
        out.append(RowSpec("lane", group, lane, 0, label, folded=False))
        out.extend(RowSpec("depth", group, lane, d) for d in range(1, n))
    else:
        out.append(RowSpec("lane", group, lane, None, label, folded=n > 1))


def build_rows(trace: Trace, folds: Folds, depths: list[int]) -> list[RowSpec]:
    """Rows top to bottom for the current folds; ``depths[lane]`` rows per open lane."""
    out: list[RowSpec] = []
    shown = [lane for lane in folds.pinned
             if trace.lanes[lane].events > 0 and lane not in folds.hidden]  # fmt: skip
    pinned = set(shown)
    if shown:
        out.append(RowSpec("pins", -1, label=f"pinned ({len(shown)})"))
        for lane in shown:
            _lane_rows(trace, folds, depths, trace.lanes[lane].group, lane, out)
    for group in trace.groups:
        with_events = [lane for lane in group.lanes if trace.lanes[lane].events > 0]
        lanes = [lane for lane in with_events if lane not in pinned and lane not in folds.hidden]
        hidden = sum(1 for lane in with_events if lane in folds.hidden)
        if not lanes and not hidden:
            continue
        label = group.label + (f" · {hidden} hidden (X restores)" if hidden else "")
        g_folded = group.index in folds.groups_folded
        out.append(RowSpec("group", group.index, label=label, folded=g_folded))
        if g_folded:
            continue
        for lane in lanes:
            _lane_rows(trace, folds, depths, group.index, lane, out)
    return out
