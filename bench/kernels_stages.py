"""Where a reopened ``kernels --json`` spends its time, stage by stage.

    python bench/kernels_stages.py FILE.json [--jobs 1 8] [--repeat 3] [--region attn_fwd]
                                             [--text]

Each run is a fresh interpreter on a trace whose index exists (open it once
first): it imports NumPy, then the command's modules, loads the trace (maps the
index and checks it), selects the region's instances, makes the listing's
columns and parts (``kernels_json_tasks``; ``kernels_text_tasks`` with ``--text``),
closes the analysis' idle thread pool,
and makes and writes the text to /dev/null (``tui.parallel_write``, with each
``--jobs`` given).  Prints each stage's milliseconds per run, then each stage's
range per ``--jobs``: the figures of bench/README.md's "First session of
2026-12-03".  Wall times on a shared machine: compare the two ``--jobs`` of one
run, not runs of different days.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STAGES = r"""
import os, sys, time
marks = [("start", time.perf_counter())]
def mark(name): marks.append((name, time.perf_counter()))
import numpy
mark("numpy")
from tui.loading import analysed_for_command
from tui.commands.kernels import _select
from profiling.analysis.kernels_json import kernels_json_tasks
from tui.kernels_text import kernels_text_tasks
from profiling.trace.column_threads import close_pool
from tui.parallel_write import write_parts
mark("imports")
analysis = analysed_for_command(sys.argv[1])
mark("load")
selected = _select(analysis, sys.argv[2])
mark("select")
parts = (kernels_text_tasks(analysis, selected, utf8_errors="strict")  # as to a UTF-8 stdout
         if sys.argv[4] == "text" else kernels_json_tasks(analysis, selected))
mark("columns")
close_pool()
mark("close_pool")
sys.stdout = open(os.devnull, "w")
write_parts(parts, int(sys.argv[3]))
mark("text")
print(" ".join(f"{b[0]}={1000 * (b[1] - a[1]):.1f}" for a, b in zip(marks, marks[1:])),
      file=sys.stderr)
"""


def one_run(path: Path, region: str, jobs: int, kind: str = "json") -> dict[str, float]:
    """One fresh interpreter's stages (ms)."""
    done = subprocess.run([sys.executable, "-c", STAGES, str(path), region, str(jobs), kind],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    line = done.stderr.strip().splitlines()[-1]
    return {name: float(ms) for name, ms in (pair.split("=") for pair in line.split(" "))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--region", default="attn_fwd")
    parser.add_argument("--text", action="store_true", help="the text listing, not --json")
    args = parser.parse_args()
    runs: dict[int, list[dict[str, float]]] = {j: [] for j in args.jobs}
    for _ in range(args.repeat):
        for jobs in args.jobs:  # alternating, so that a slow minute hits both
            stages = one_run(args.file, args.region, jobs, "text" if args.text else "json")
            runs[jobs].append(stages)
            print(f"--jobs {jobs}: " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()))
    print()
    print("| stage | " + " | ".join(f"--jobs {j} (ms)" for j in args.jobs) + " |")
    print("|---|" + "---|" * len(args.jobs))
    for stage in runs[args.jobs[0]][0]:
        cells = [f"{min(r[stage] for r in runs[j]):.0f}-{max(r[stage] for r in runs[j]):.0f}"
                 for j in args.jobs]
        print(f"| {stage} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
