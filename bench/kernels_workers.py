"""How long a reopened ``kernels`` listing takes to make and write with W workers.

    python bench/kernels_workers.py FILE.json [--region attn_fwd] [--repeat 4]

Each run is a fresh interpreter on a trace whose index exists (open it once first):
it maps the trace, selects the region's instances, makes the listing's columns
(``kernels_json_tasks``, or ``kernels_text_tasks`` for the text) and times
``tui.parallel_write.write_parts`` into /dev/null with ``MAX_WORKERS`` set to W
(4, 8, 12, 16), alternating.  Prints the median and least milliseconds of the
columns and of the parts per kind and W: the figures behind ``MAX_WORKERS``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKERS = (4, 8, 12, 16)

BODY = r"""
import os, sys, time
import tui.parallel_write as pw
pw.MAX_WORKERS = int(sys.argv[2])
from tui.loading import analysed_for_command
from tui.commands.kernels import _select
from profiling.analysis.kernels_json import kernels_json_tasks
from tui.kernels_text import kernels_text_tasks
a = analysed_for_command(sys.argv[1])
chosen = _select(a, sys.argv[4])
t0 = time.perf_counter()
tasks = (kernels_text_tasks(a, chosen, utf8_errors="strict")  # as to a UTF-8 stdout
         if sys.argv[3] == "text" else kernels_json_tasks(a, chosen))
t1 = time.perf_counter()
pw.write_parts(tasks, int(sys.argv[2]), open(os.devnull, "w"))
print(f"{1000 * (t1 - t0):.1f} {1000 * (time.perf_counter() - t1):.1f}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--region", default="attn_fwd")
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    found: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for kind in ("json", "text"):
            for w in WORKERS:
                done = subprocess.run([sys.executable, "-c", BODY, str(args.file), str(w), kind,
                                       args.region], capture_output=True, text=True, cwd=ROOT,
                                      check=True)
                made, written = map(float, done.stdout.split())
                found.setdefault((kind, w), []).append((made, written))
    for (kind, w), runs in sorted(found.items()):
        cols, parts = [c for c, _ in runs], [p for _, p in runs]
        print(f"{kind:5s} workers {w:2d}: columns {statistics.median(cols):6.1f} ms, parts "
              f"{statistics.median(parts):6.1f} ms (least {min(parts):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
