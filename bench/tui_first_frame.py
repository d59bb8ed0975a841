"""TUI first frame: ``attn-tui open FILE`` in a real terminal against ``load_trace`` alone.

    python bench/tui_first_frame.py /tmp/big/t1000.json [--repeat 1] [--size 140x45]

For a first open (no index: the loader parses and writes its index)
and a reopen (the index is mapped), measured side by side in one run, each in a
fresh process:

- load:        ``load_trace(FILE)`` in a fresh interpreter, the call alone;
- first frame: from starting ``attn-tui open FILE`` in a private tmux server to
               the first screen (read with ``capture-pane``) that shows the
               timeline with the trace's lanes (the labels of its first rows,
               taken from the model).  The screen is read every 25 ms from 80 %
               of the load time on, every 250 ms before: on two cores, polling
               tmux all along would slow the load it measures.

The goal (issue 5) is first frame <= load + 1 s; the figure reported is that
difference, which includes starting Python, importing Textual and painting.
Page-cache state is the same for both (the file is read once before timing).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.trace.cache import cache_dirs  # noqa: E402
from tui.names import visible  # noqa: E402

_LOAD = r"""
import json, sys, time
t = time.perf_counter()
from profiling.trace import load_trace
t_import = time.perf_counter() - t
t = time.perf_counter()
trace = load_trace(sys.argv[1])
wall = time.perf_counter() - t
from tui.timeline_model import TimelineModel
model = TimelineModel(trace)
labels = [s.label for s in model.rows[:12] if s.kind in ("group", "lane")][:3]
print(json.dumps({"load": wall, "import": t_import, "labels": labels}))
"""

POLL_S = 0.025
POLL_EARLY_S = 0.25


def clear_cache(path: Path) -> None:
    for folder in cache_dirs(path):
        shutil.rmtree(folder, ignore_errors=True)


def time_load(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, str(path)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _command() -> list[str]:
    script = Path(sys.executable).with_name("attn-tui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui.cli"]


@contextmanager
def app_in_tmux(target: Path, size: tuple[int, int]) -> Iterator[Callable[[], str]]:
    """``attn-tui open TARGET`` in a private tmux server of ``size`` cells; yields a
    function that reads the screen (``capture-pane``).  Quits the app and kills the
    server on the way out."""
    tmux = shutil.which("tmux")
    if tmux is None:
        raise SystemExit("tmux is not installed")
    sock = f"attn-tui-bench-{time.monotonic_ns()}"

    def run(*args: str) -> str:
        return subprocess.run(
            [tmux, "-L", sock, *args], capture_output=True, text=True, timeout=30
        ).stdout

    cmd = " ".join(_command() + ["open", str(target)])
    env = "env -u NO_COLOR -u COLUMNS -u LINES TERM=xterm-256color"
    run("-f", "/dev/null", "new-session", "-d", "-s", "b", "-x", str(size[0]), "-y",
        str(size[1]), f"{env} {cmd}; sleep 30")  # fmt: skip
    try:
        yield lambda: run("capture-pane", "-p", "-t", "b")
    finally:
        run("send-keys", "-t", "b", "q")
        time.sleep(0.3)
        run("kill-server")


def time_first_frame(
    path: Path, labels: list[str], size: tuple[int, int], load_s: float
) -> float:
    """Seconds from starting ``attn-tui open`` to a screen showing ``labels``."""
    needles = [visible(label)[:12] for label in labels]
    start = time.monotonic()
    with app_in_tmux(path, size) as screen_now:
        while time.monotonic() - start < 600:
            screen = screen_now()
            if all(n in screen for n in needles):
                return time.monotonic() - start
            if "Traceback" in screen or "failed to load" in screen:
                raise RuntimeError(screen)
            early = time.monotonic() - start < 0.8 * load_s
            time.sleep(POLL_EARLY_S if early else POLL_S)
        raise RuntimeError("no first frame within 600 s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--size", default="140x45", help="terminal size WxH")
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    path = args.file.resolve()
    with path.open("rb") as f:  # the same page-cache state for every measurement
        while f.read(64 << 20):
            pass
    results: dict[str, list[tuple[float, float]]] = {"first open": [], "reopen": []}
    for _ in range(args.repeat):
        clear_cache(path)
        cold = time_load(path)
        clear_cache(path)
        cold_frame = time_first_frame(path, cold["labels"], (w, h), cold["load"])
        warm = time_load(path)  # the index the TUI just wrote
        warm_frame = time_first_frame(path, warm["labels"], (w, h), warm["load"])
        results["first open"].append((cold["load"], cold_frame))
        results["reopen"].append((warm["load"], warm_frame))
    size_mb = path.stat().st_size / 1e6
    print(f"file: {path.name}, {size_mb:.0f} MB; tmux {w}x{h}; {args.repeat} run(s), medians")
    print(f"  {'':12}{'load_trace':>12}{'first frame':>13}{'frame - load':>14}  goal <= 1 s")
    for label, runs in results.items():
        load = statistics.median(r[0] for r in runs)
        frame = statistics.median(r[1] for r in runs)
        late = statistics.median(r[1] - r[0] for r in runs)
        each = ", ".join(f"{r[1] - r[0]:.2f}" for r in runs)
        print(f"  {label:12}{load:11.2f}s{frame:12.2f}s{late:13.2f}s   (runs: {each})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
