"""Load benchmark: attn-tui against orjson (and HTA) on the same bytes, as ratios.

    python bench/bench_load.py FILE.json [--hta-file SMALLER.json] [--repeat 3]

Every figure is measured in this one run, side by side, in fresh subprocesses
(this machine is shared and noisy, so only ratios are reported as results):

- load:    ``attn-tui stats FILE --json`` (first open: parses, writes the index)
           / ``orjson.loads`` of the same file into Python objects; with
           ``--load-only``, ``load_trace`` alone (parse + index, no analysis)
- memory:  peak RSS of each, divided by the file size
- reopen:  the second ``stats`` (maps the index) / the first
- HTA:     holistic trace analysis' parser on a smaller file, when installed
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

_MEASURE = r"""
import json, resource, sys, time
t = time.perf_counter()
{body}
wall = time.perf_counter() - t
self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({{"wall": wall, "rss_self": self_kb * 1024, "rss_children": kids_kb * 1024}}),
      file=sys.stderr)
"""

ORJSON = "import orjson\nwith open(sys.argv[1], 'rb') as f:\n    doc = orjson.loads(f.read())"
STATS = (
    "import contextlib, io\nfrom tui.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(['stats', sys.argv[1], '--json'])\n"
    "assert code == 0, code"
)
LOAD = (  # the loader alone (--load-only): no analysis, the index written as by stats
    "from profiling.trace import load_trace\nfrom profiling.trace.loader import set_default_jobs\n"
    "set_default_jobs({jobs})\nload_trace(sys.argv[1])"
)
HTA = (
    "from hta.configs.parser_config import ParserConfig\n"
    "from hta.common.trace_parser import parse_trace_dataframe\n"
    "parse_trace_dataframe(sys.argv[1], ParserConfig())"
)


def measure(body: str, path: Path, python: str = sys.executable) -> dict[str, float]:
    """Run ``body`` in a fresh interpreter; its wall time and peak memory."""
    code = _MEASURE.format(body=body)
    done = subprocess.run(
        [python, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return json.loads(done.stderr.strip().splitlines()[-1])


def clear_cache(path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from profiling.trace.cache import cache_dirs  # the user cache entry (or beside, if asked)

    for folder in [*cache_dirs(path), path.with_name(path.name + ".attn-tui-cache")]:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--hta-file", type=Path, help="a smaller file for the HTA parser")
    parser.add_argument("--hta-python", default=sys.executable,
                        help="a Python with holistictraceanalysis installed")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="stats --jobs N (default: its own, every core)")
    parser.add_argument("--load-only", action="store_true",
                        help="time load_trace (parse + index) instead of the stats command")
    args = parser.parse_args()
    jobs = [] if args.jobs is None else ["--jobs", str(args.jobs)]
    stats = STATS.replace("'--json']", f"'--json', *{jobs!r}]")
    if args.load_only:
        stats = LOAD.format(jobs=args.jobs)
    size = args.file.stat().st_size
    rows = []
    for _ in range(args.repeat):
        clear_cache(args.file)
        oj = measure(ORJSON, args.file)
        first = measure(stats, args.file)
        second = measure(stats, args.file)
        rows.append((oj, first, second))
    clear_cache(args.file)

    def med(i: int, key: str) -> float:
        return statistics.median(r[i][key] for r in rows)

    def peak(i: int) -> float:
        return statistics.median(max(r[i]["rss_self"], r[i]["rss_children"]) for r in rows)

    print(f"file: {args.file.name}, {size / 1e6:.0f} MB, {args.repeat} runs, medians, "
          f"{os.cpu_count()} cores, --jobs {args.jobs or 'default'}")
    what = "load_trace" if args.load_only else "attn-tui stats"
    labels = ("orjson.loads", f"{what} (first)", f"{what} (reopen)")
    for i, label in enumerate(labels):
        print(f"  {label:24}{med(i, 'wall'):7.2f} s   peak RSS {peak(i) / size:5.2f} x file")
    print(f"  load ratio   stats/orjson  = {med(1, 'wall') / med(0, 'wall'):.2f}  (goal <= 0.50)")
    print(f"  reopen ratio second/first  = {med(2, 'wall') / med(1, 'wall'):.3f} (goal <= 0.25)")
    print(f"  memory       peak RSS/file = {peak(1) / size:.2f}  (goal <= 1.50)")
    if args.hta_file:
        small = args.hta_file.stat().st_size
        clear_cache(args.hta_file)
        ours = measure(STATS, args.hta_file)
        clear_cache(args.hta_file)
        start = time.perf_counter()
        try:
            hta = measure(HTA, args.hta_file, args.hta_python)
            print(f"  HTA parser on {small / 1e6:.0f} MB: {hta['wall']:.1f} s; attn-tui stats "
                  f"{ours['wall']:.2f} s; ratio {ours['wall'] / hta['wall']:.3f}")
        except RuntimeError as exc:
            print(f"  HTA parser not measured ({exc}; {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
