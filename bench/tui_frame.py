"""Timeline frame time after zoom/pan: a lane of 10,000,000 events vs 100.

    python bench/tui_frame.py [--events 10000000] [--small 100] [--repeat 3] [--size 140x45]

Runs the real app headless (Textual's test driver) on two synthetic traces built
directly in numpy columns (``tests.fixtures.flat_trace``: one GPU stream of back-to-back
kernels with a Memcpy every 997; about 80 bytes per event, no Python object per
event).  The moves start at "fit all" (every event in view, the worst case),
zoom in 12 times around the middle, pan, and zoom back out.  Two figures per move:

- frame: from the key's action (``Timeline.action_zoom_in``...) to the end of the
  first screen composition that includes the details panel's update, with the
  update encoded as the terminal driver would write it (Textual's headless
  driver skips only the write).  Includes Textual's refresh timer (<= 1/60 s).
- draw:  ``Timeline.render_line`` for every visible line plus the ruler: the part
  that depends on the number of events.

Both traces are measured in this one run, so the ratio is the result; absolute
milliseconds depend on the (shared) machine.
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

from profiling.analysis.analysed import AnalysedTrace  # noqa: E402
from tests.fixtures.flat_trace import flat_trace  # noqa: E402
from tui.app import AttnTuiApp  # noqa: E402
from tui.session import Session  # noqa: E402
from tui.widgets.details import Details  # noqa: E402
from tui.widgets.ruler import Ruler  # noqa: E402
from tui.widgets.timeline import Timeline  # noqa: E402

MOVES = ["fit"] + ["in"] * 12 + ["right"] * 6 + ["left"] * 3 + ["out"] * 12 + ["fit"]


def _loader(n: int):
    def load(path, progress=None, no_cache=False):
        trace = flat_trace(n, seed=1)
        # analysed=True: the regions/op table thread would share the CPU with
        # the frames measured here, and only the timeline is measured
        return Session(path=f"<{n} events>", analysis=AnalysedTrace(trace), analysed=True)

    return load


def _file_loader(path: str):
    def load(_path, progress=None, no_cache=False):
        from tui.session import load_session

        session = load_session(path, progress)
        session.analysed = True  # as above: only the timeline is measured
        return session

    return load


class FrameClock:
    """When the screen was last composed (and encoded for a terminal), and when the
    details panel last caught up: the end of a frame is the first composition
    after both the move and the panel's update."""

    def __init__(self, app: AttnTuiApp) -> None:
        self.app = app
        self.composed = 0.0
        self.details = 0.0
        compositor = app.screen._compositor
        render_update = compositor.render_update

        def timed(*args, **kwargs):
            update = render_update(*args, **kwargs)
            if update is not None:  # what the terminal driver would write (headless skips it)
                update.render_segments(app.console)
            self.composed = time.perf_counter()
            return update

        compositor.render_update = timed  # type: ignore[method-assign]
        details = app.query_one(Details)
        show = details.show

        def shown(model):
            show(model)
            self.details = time.perf_counter()

        details.show = shown  # type: ignore[method-assign]

    async def frame(self, start: float) -> float:
        """Seconds from ``start`` to the end of the frame that shows the move."""
        while not (self.details >= start and self.composed > self.details):
            await asyncio.sleep(0.0002)
        return self.composed - start


def _move(timeline: Timeline, move: str) -> None:
    """The key's own action (what w, s, a, d and 0 run)."""
    if move == "fit":
        timeline.action_fit_all()
    elif move == "in":
        timeline.action_zoom_in()
    elif move == "out":
        timeline.action_zoom_out()
    else:
        timeline.action_pan(1 if move == "right" else -1)


async def measure(
    n: int, size: tuple[int, int], repeat: int, path: str = ""
) -> tuple[list[float], list[float]]:
    """(draw times, frame times) over ``repeat`` passes of ``MOVES``."""
    loader = _file_loader(path) if path else _loader(n)
    app = AttnTuiApp([path or f"flat-{n}"], loader=loader, theme="attn-dark")
    draws: list[float] = []
    frames: list[float] = []
    async with app.run_test(size=size) as pilot:
        while app.pane.state == "loading":
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        timeline = app.query_one(Timeline)
        ruler = app.query_one(Ruler)
        clock = FrameClock(app)
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
    return draws, frames


def summary(frames: list[float]) -> str:
    ms = sorted(f * 1000 for f in frames)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return f"median {statistics.median(ms):6.2f} ms   p95 {p95:6.2f} ms   max {ms[-1]:6.2f} ms"


FRAME_DOC = {
    "frame": "key action -> screen composed and encoded (Textual, <= 1/60 s timer wait)",
    "draw": "Timeline.render_line for every visible line + the ruler",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3, help="passes over the zoom/pan moves")
    ap.add_argument("--size", default="140x45", help="terminal size WxH")
    ap.add_argument("--trace", default="", help="also a real trace file (loaded, all lanes)")
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    results = {}
    for n in (args.small, args.events):
        results[n] = asyncio.run(measure(n, (w, h), args.repeat))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"zoom/pan on a {w}x{h} terminal, {len(MOVES)} moves x {args.repeat}; "
          f"peak RSS {peak:.0f} MB")
    for what, i in (("frame", 1), ("draw", 0)):
        print(f"  {what}: " + FRAME_DOC[what])
        for n, got in results.items():
            print(f"    lane of {n:>10,} events: {summary(got[i])}")
        small = statistics.median(results[args.small][i])
        big = statistics.median(results[args.events][i])
        print(f"    ratio (median, {args.events:,} / {args.small:,} events): {big / small:.2f}x")
    if args.trace:
        draws, frames = asyncio.run(measure(0, (w, h), args.repeat, args.trace))
        print(f"  {Path(args.trace).name} (every lane, default folds):")
        print(f"    frame: {summary(frames)}")
        print(f"    draw:  {summary(draws)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
