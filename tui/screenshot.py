"""Save an SVG screenshot of the app, exported by the app itself (for the README).

    python -m tui.screenshot TRACE OUT.svg [--size 140x45] [--keys "2 enter z"] [--search TEXT]

TRACE may be a job's folder (its ranks open as one tab, ``tui.job_session``).

Opens TRACE headless at a fixed size, presses the keys, optionally searches
(selecting the first match), and writes ``App.export_screenshot`` to OUT.svg.
The default shows the first ``attn_fwd`` instance of the trace with the first
event named like "Memcpy" selected (the cudaMemcpyAsync that launches the copy
naive attention pays for, with the red Memcpy on the GPU lane beneath it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

SCREENSHOT_DIR_ENV = "ATTN_TUI_SCREENSHOT_DIR"
"""Where ``ctrl+s`` writes when the app is given no folder (else the current folder)."""


def screenshot_folder(option: str | None = None) -> Path:
    """The folder for ``ctrl+s``: the option, else ``$ATTN_TUI_SCREENSHOT_DIR``, else here."""
    chosen = option or os.environ.get(SCREENSHOT_DIR_ENV, "") or os.getcwd()
    return Path(chosen).expanduser()


def save_svg(app: App, option: str | None = None) -> str:
    """Save the app's screen as an SVG in ``screenshot_folder(option)`` (made if
    missing); returns its absolute path, for the user to be told."""
    folder = screenshot_folder(option)
    folder.mkdir(parents=True, exist_ok=True)
    return os.path.abspath(app.save_screenshot(path=str(folder)))


async def shoot(trace: str, out: str, size: tuple[int, int], keys: list[str], search: str) -> str:
    from tui.app import AttnTuiApp
    from tui.inputs import resolve_paths
    from tui.job_session import open_targets

    # a job: one tab, the whole job at once (not its largest rank first: tui.job_progressive)
    targets, load = open_targets(resolve_paths([trace], lambda line: None), progressive=False)
    app = AttnTuiApp(targets, loader=load, theme="attn-dark")
    async with app.run_test(size=size) as pilot:
        while any(p.busy for p in app.panes):
            await pilot.pause(0.05)
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
            await pilot.pause(0.3)
            await app.workers.wait_for_complete()  # views computed on workers (Ranks)
        if search and app.pane is not None:
            app.pane.search(search)
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause(0.2)
        svg = app.export_screenshot(title=f"attn-tui open {Path(trace).name}")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(svg, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tui.screenshot", description=__doc__.splitlines()[0]
    )
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--size", default="140x45")
    ap.add_argument("--keys", default="2 enter z", help="keys to press first (space-separated)")
    ap.add_argument("--search", default="Memcpy", help="then select the first match ('' for none)")
    args = ap.parse_args(argv)
    w, h = (int(x) for x in args.size.lower().split("x"))
    out = asyncio.run(shoot(args.trace, args.out, (w, h), args.keys.split(), args.search))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
