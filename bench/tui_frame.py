"""Timeline frame time: repaint after zoom/pan on a lane of 1,000,000 events vs 100.

    python bench/tui_frame.py [--events 1000000] [--small 100] [--steps 40] [--size 140x45]

Runs the real app headless (Textual's test driver) on two synthetic traces, one
GPU stream each (back-to-back kernels with a Memcpy every 997), and after every
zoom/pan step times what a repaint costs: ``Timeline.render_line`` for every
visible line plus the ruler.  The steps start at "fit all" (every event in view,
the worst case), zoom in 12 times around the middle, pan, and zoom back out.
Both traces are measured in this one run, so the ratio is the result; absolute
milliseconds depend on the (shared) machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui.app import AttnTuiApp  # noqa: E402
from tui.flat_trace import flat_trace  # noqa: E402
from tui.links import Links  # noqa: E402
from tui.session import Session  # noqa: E402
from tui.widgets.ruler import Ruler  # noqa: E402
from tui.widgets.timeline import Timeline  # noqa: E402

MOVES = ["fit"] + ["in"] * 12 + ["right"] * 6 + ["left"] * 3 + ["out"] * 12 + ["fit"]


def _loader(n: int):
    def load(path, progress=None, no_cache=False):
        trace = flat_trace(n, seed=1)
        return Session(path=f"<{n} events>", trace=trace, links=Links(trace))

    return load


async def measure(n: int, size: tuple[int, int], repeat: int) -> list[float]:
    app = AttnTuiApp([f"flat-{n}"], loader=_loader(n), theme="attn-dark")
    frames: list[float] = []
    async with app.run_test(size=size) as pilot:
        while app.pane.state == "loading":
            await pilot.pause(0.05)
        await pilot.pause()
        timeline = app.query_one(Timeline)
        ruler = app.query_one(Ruler)
        model = app.pane.model
        # put the cursor on the stream's row and select nothing: a plain repaint
        for _ in range(repeat):
            for move in MOVES:
                if move == "fit":
                    model.fit_all()
                elif move == "in":
                    model.zoom_in()
                elif move == "out":
                    model.zoom_out()
                else:
                    model.pan(1 if move == "right" else -1)
                start = time.perf_counter()
                for y in range(timeline.size.height):
                    timeline.render_line(y)
                ruler.render_line(0)
                frames.append(time.perf_counter() - start)
    return frames


def summary(frames: list[float]) -> str:
    ms = sorted(f * 1000 for f in frames)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return f"median {statistics.median(ms):6.2f} ms   p95 {p95:6.2f} ms   max {ms[-1]:6.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3, help="passes over the zoom/pan moves")
    ap.add_argument("--size", default="140x45", help="terminal size WxH")
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    results = {}
    for n in (args.small, args.events):
        results[n] = asyncio.run(measure(n, (w, h), args.repeat))
    print(f"timeline repaint after zoom/pan, {w}x{h} terminal, {len(MOVES)} moves x {args.repeat}")
    for n, frames in results.items():
        print(f"  lane of {n:>9,} events: {summary(frames)}")
    small = statistics.median(results[args.small])
    big = statistics.median(results[args.events])
    print(f"  ratio (median, {args.events:,} / {args.small:,} events): {big / small:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
