"""How long each view takes to open on a big trace, after the first frame.

    python bench/tui_views.py FILE.json [--repeat 3]

Runs the real app headless (Textual's test driver, 140x45) on FILE, waits for the
load and the analysis, then presses each view's key and waits until the app is
idle again: Regions (2), Ops (3), Findings (5), back to the timeline (1), and a
range (``m`` on the timeline, the range panel).  Textual's test driver itself
costs a floor per key press (the refresh timer, the idle wait): pressing a key
bound to nothing is measured the same way, and the table gives each view's time
less that floor, beside the raw figures (the goal: 200 ms after the first frame).
Run it twice: the first run computes and stores the analysis, later ones map it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_tui_pilot import wait_loaded  # noqa: E402
from tui.app import AttnTuiApp  # noqa: E402

KEYS = (("no-op (floor)", "f12"), ("Regions (2)", "2"), ("Ops (3)", "3"),
        ("Findings (5)", "5"), ("Timeline (1)", "1"), ("range panel (m)", "m"))


async def one_run(path: str) -> dict[str, float]:
    app = AttnTuiApp([path], theme="attn-dark")
    out: dict[str, float] = {}
    async with app.run_test(size=(140, 45)) as pilot:
        start = time.perf_counter()
        await wait_loaded(pilot, 600)
        out["load + analysis"] = time.perf_counter() - start
        for label, key in KEYS:
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            out[label] = time.perf_counter() - start
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [asyncio.run(one_run(str(args.file))) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    floor = med["no-op (floor)"]
    print(f"file: {args.file.name}; {args.repeat} run(s), medians; "
          f"load + analysis {med['load + analysis']:.2f} s")
    print("| view | key to idle | less the no-op floor |")
    print("|---|---|---|")
    for label, _ in KEYS:
        print(f"| {label} | {1000 * med[label]:.0f} ms | {1000 * (med[label] - floor):.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
