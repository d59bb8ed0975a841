"""Timeline frame time with launch links drawn and a range set, and the range panel's time.

    python bench/tui_frame_links.py [--events 10000000] [--small 3000] [--repeat 2]
                                    [--size 140x45] [--panel-events 1000000]

Runs the real app headless on synthetic traces built in numpy columns
(``tests.fixtures.linked_trace``: a host thread of ``ProfilerStep#1`` >
``attn_fwd`` > ``aten::mm`` > ``cudaLaunchKernel`` launching one kernel each onto
a GPU stream, linked by correlation).  The links are computed before measuring
(as after the app's analysis).  Three states, each over bench/tui_frame.py's
zoom/pan moves (fit all, 12 zooms in, pans, 12 zooms out, fit):

- plain: nothing selected, no range;
- attn_fwd: one ``attn_fwd`` instance in the middle selected (its 50 kernels
  marked, connectors from its launches) and ``m`` marked as the range;
- step: ``ProfilerStep#1`` selected (every kernel of the trace marked: the worst
  case) and its range (the whole trace) marked.

Frame: the key's action to the end of the first screen composition that
includes the details panel's update (``tui_frame.FrameClock``); draw: the
timeline's ``render_line`` for every visible line plus the ruler (the part
that depends on the number of events and links).  Then the range
panel, ``--repeat`` times: ``m`` to the panel on screen (the first composition with
the panel laid out and its table sized) and to the screen settled (the last
composition once every widget is idle), on ``--panel-events`` events, for one
``attn_fwd`` and for ``ProfilerStep#1`` (every event in range), and before it the
selection itself (its links marked and the details panel's update).
The big and small traces run in one process, so the ratio is the result; the
absolute milliseconds depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from textual.widgets import DataTable  # noqa: E402
from tui_frame import MOVES, FrameClock, _move, summary  # noqa: E402

from profiling.analysis.analysed import AnalysedTrace  # noqa: E402
from tests.fixtures.linked_trace import linked_trace  # noqa: E402
from tui.app import AttnTuiApp  # noqa: E402
from tui.session import Session  # noqa: E402
from tui.widgets.range_panel import RangePanel  # noqa: E402
from tui.widgets.ruler import Ruler  # noqa: E402
from tui.widgets.timeline import Timeline  # noqa: E402

STATES = ("plain", "attn_fwd", "step")


def _loader(n: int):
    def load(path, progress=None, no_cache=False):
        analysis = AnalysedTrace(linked_trace(n))
        analysis.links  # noqa: B018 - linked before measuring, as after the analysis
        return Session(path=f"<{n} events>", analysis=analysis, analysed=True)

    return load


def _select(app: AttnTuiApp, state: str) -> None:
    """Select the state's event (and mark its range) as the keys would."""
    model = app.pane.model
    timeline = app.query_one(Timeline)
    if state == "plain":
        timeline.action_clear_range()
        timeline.select_row(-1)
        return
    trace = model.trace
    if state == "step":
        row = 0
    else:  # the attn_fwd instance in the middle of the trace
        fwd = (trace.name_id[: int(trace.lane_start[1])] == 2).nonzero()[0]
        row = int(fwd[len(fwd) // 2])
    timeline.select_row(row)
    timeline.action_mark_range()


async def _frames(n: int, size: tuple[int, int], repeat: int) -> dict[str, list[float]]:
    """Per state, the frame times (``state``) and the draw times (``state + "/draw"``:
    ``Timeline.render_line`` for every visible line and the ruler)."""
    app = AttnTuiApp([f"linked-{n}"], loader=_loader(n), theme="attn-dark")
    out: dict[str, list[float]] = {}
    async with app.run_test(size=size) as pilot:
        while app.pane.state == "loading":
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        timeline = app.query_one(Timeline)
        ruler = app.query_one(Ruler)
        clock = FrameClock(app)
        for state in STATES:
            _select(app, state)
            await pilot.pause(0.2)
            frames: list[float] = []
            draws: list[float] = []
            for _ in range(repeat):
                for move in MOVES:
                    start = time.perf_counter()
                    _move(timeline, move)
                    frames.append(await clock.frame(start))
                    await pilot.pause()
                    start = time.perf_counter()
                    for y in range(timeline.size.height):
                        timeline.render_line(y)
                    ruler.render_line(0)
                    draws.append(time.perf_counter() - start)
            out[state] = frames
            out[state + "/draw"] = draws
            assert state == "plain" or app.pane.model.link_set, "no links drawn"
    return out


async def _panel(n: int, size: tuple[int, int], repeat: int) -> dict[str, list[float]]:
    """Per state, seconds from ``m`` to the range panel on screen (``state + "/shown"``:
    the first composition with the panel laid out and its table sized) and to the screen
    settled (``state``: the last composition once every widget is idle, Textual's
    scrollbar updates included), ``repeat`` times, each for a range not shown before."""
    app = AttnTuiApp([f"linked-{n}"], loader=_loader(n), theme="attn-dark")
    out: dict[str, list[float]] = {}
    async with app.run_test(size=size) as pilot:
        while app.pane.state == "loading":
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        timeline = app.query_one(Timeline)
        panel = app.query_one(RangePanel)
        table = panel.query_one(DataTable)
        clock = FrameClock(app)
        shown_at: list[float] = []
        compositor = app.screen._compositor
        render_update = compositor.render_update

        def watched(*args, **kwargs):
            update = render_update(*args, **kwargs)
            # laid out, and the table sized by its idle pass (DataTable's own flag)
            if panel.size.height and not table._require_update_dimensions:
                shown_at.append(time.perf_counter())
            return update

        compositor.render_update = watched  # type: ignore[method-assign]
        for _ in range(repeat):
            for state in ("attn_fwd", "step"):
                timeline.action_clear_range()
                timeline.select_row(-1)
                await pilot.pause(0.1)
                start = time.perf_counter()  # the selection: its links and details
                _select(app, state)
                timeline.action_clear_range()
                await clock.frame(start)
                out.setdefault(state + "_select", []).append(clock.composed - start)
                await pilot.pause(0.1)
                panel.shown = None  # a range not shown before: its report is computed
                shown_at.clear()
                start = time.perf_counter()
                timeline.action_mark_range()
                await clock.frame(start)
                while panel.shown is None or panel.report is None:
                    await pilot.pause(0.001)
                await pilot.pause()
                out.setdefault(state, []).append(clock.composed - start)
                out.setdefault(state + "/shown", []).append(shown_at[0] - start)
                out[state + "_events"] = [float(panel.report.summary.events)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--small", type=int, default=3_000)
    ap.add_argument("--repeat", type=int, default=2, help="passes over the zoom/pan moves")
    ap.add_argument("--size", default="140x45", help="terminal size WxH")
    ap.add_argument("--panel-events", type=int, default=1_000_000)
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    results = {n: asyncio.run(_frames(n, (w, h), args.repeat)) for n in (args.small, args.events)}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"frame time, {w}x{h}, {len(MOVES)} moves x {args.repeat} per state; "
          f"peak RSS {peak:.0f} MB")  # fmt: skip
    for state in STATES:
        for what in (state, state + "/draw"):
            print(f"  {what}:")
            for n, got in results.items():
                print(f"    {n:>11,} events: {summary(got[what])}")
            small = statistics.median(results[args.small][what])
            big = statistics.median(results[args.events][what])
            print(f"    ratio (median, {args.events:,} / {args.small:,}): {big / small:.2f}x")
    panel = asyncio.run(_panel(args.panel_events, (w, h), args.repeat))
    print(f"range panel on {args.panel_events:,} events, {args.repeat} times each "
          "(m -> panel on screen; -> screen settled):")  # fmt: skip
    for state in ("attn_fwd", "step"):
        events = int(panel[state + "_events"][0])
        print(f"  {state} ({events:,} events in the range):")
        print(f"    m -> panel on screen: {summary(panel[state + '/shown'])}")
        print(f"    m -> screen settled:  {summary(panel[state])}")
        print(f"    selecting it (links marked, details): {summary(panel[state + '_select'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
