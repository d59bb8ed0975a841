"""The scale issue's table in one run: every command on a big trace, as ratios.

    python bench/bench_scale.py FILE.json [--jobs N] [--repeat 1] [--region attn_fwd] [--more]

Measured side by side in this one run, each in a fresh interpreter (its wall
time from before ``tui.cli`` is imported to the end; stdout to /dev/null):

1. ``orjson.loads`` of the file into Python objects (the baseline);
2. ``attn-tui stats FILE --json``, first open (no index: parses, writes the index);
3. ``stats`` again (reopen: maps the index);
4. ``kernels``, ``findings``, ``compare``, ``table``, ``slices`` (``--json``), each
   twice on the reopened trace.  Both runs map the analysis the first open stored
   (``profiling.analysis.warm``: these commands write nothing to the index), so the
   two rows show the run-to-run spread; the goal lines take the slower.

With ``--more``, the other commands and the text renderings (``MORE``: ``ranks``,
``diff``, ``kernels``, ``stats``, ``table``, ``compare --markdown``, ``findings``
without ``--json``) are measured the same way after them, twice each, and their
slowest is set against the first open too.

With ``--profile DIR``, each command on the reopened trace is
then run once more under cProfile and once with ``-X importtime``, into
``DIR/<command>.prof``, ``DIR/<command>.txt`` (the top functions, cumulative and
own time) and ``DIR/<command>.imports.txt``: what to read when a ratio is off on
a machine that is not at hand.

The table gives seconds, peak RSS / file size, and the ratios of the issue's
goals: first open / ``orjson.loads`` (<= 0.25 on 2 cores), reopen / first open
(<= 0.1), each command on the reopened trace / ``orjson.loads`` (<= 0.1), peak
RSS / file (<= 1.0 first open, <= 0.3 reopen).  The index is cleared before each
repeat and after the last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import ORJSON, clear_cache, measure  # noqa: E402

COMMANDS = ("kernels", "findings", "compare", "table", "slices")
MORE = {"ranks --json": ["ranks", "{f}", "--json"], "ranks (text)": ["ranks", "{f}"],
        "diff F F --json": ["diff", "{f}", "{f}", "--json"],
        "diff F F (text)": ["diff", "{f}", "{f}"],
        "kernels --region R (text)": ["kernels", "{f}", "--region", "{r}"],
        "stats (text)": ["stats", "{f}"], "table (text)": ["table", "{f}"],
        "compare --markdown": ["compare", "{f}", "--markdown"],
        "findings (text)": ["findings", "{f}"]}
"""With ``--more``: the other commands and renderings (text, not ``--json``), twice each."""
GOALS = {"first": 0.25, "reopen": 0.1, "command": 0.1, "rss_first": 1.0, "rss_reopen": 0.3}


def command_body(argv: list[str]) -> str:
    """Run ``attn-tui ARGV`` in the measured interpreter, its stdout to /dev/null."""
    return (
        "import os\nfrom tui.cli import main\n"
        "null = os.open(os.devnull, os.O_WRONLY); os.dup2(null, 1)\n"
        f"code = main({argv!r})\n"
        "sys.stdout.flush()\n"
        "assert code == 0, code"
    )


def run_once(path: Path, extra: list[str], region: str | None,
             more: bool = False) -> dict[str, dict[str, float]]:
    """One repeat: every measurement of the table, in order."""
    out: dict[str, dict[str, float]] = {}
    clear_cache(path)
    out["orjson"] = measure(ORJSON, path)
    out["stats first"] = measure(command_body(["stats", str(path), "--json", *extra]), path)
    out["stats reopen"] = measure(command_body(["stats", str(path), "--json", *extra]), path)
    for name in COMMANDS:
        argv = argv_of(name, path, extra, region)
        out[f"{name} run 1"] = measure(command_body(argv), path)
        out[f"{name} run 2"] = measure(command_body(argv), path)
    for name, template in MORE.items() if more else ():
        argv = [a.format(f=path, r=region or "") for a in template] + extra
        if "--region" in argv and not region:
            argv = [a for a in argv if a not in ("--region", "")]
        out[f"{name} run 1"] = measure(command_body(argv), path)
        out[f"{name} run 2"] = measure(command_body(argv), path)
    return out


def argv_of(name: str, path: Path, extra: list[str], region: str | None) -> list[str]:
    """The ``attn-tui`` arguments of one command of the table."""
    argv = [name, str(path), "--json", *extra]
    if name == "kernels" and region:
        argv[2:2] = ["--region", region]
    return argv


def profile(path: Path, extra: list[str], region: str | None, out: Path) -> None:
    """Each command on the reopened trace under cProfile and ``-X importtime``."""
    import pstats

    out.mkdir(parents=True, exist_ok=True)
    for name in ("stats", *COMMANDS):
        argv = argv_of(name, path, extra, region)
        prof = out / f"{name}.prof"
        with open(os.devnull, "w") as null:
            subprocess.run([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "tui.cli",
                            *argv], stdout=null, check=True)
            with open(out / f"{name}.imports.txt", "w") as imports:
                subprocess.run([sys.executable, "-X", "importtime", "-m", "tui.cli", *argv],
                               stdout=null, stderr=imports, check=True)
        with open(out / f"{name}.txt", "w") as text:
            stats = pstats.Stats(str(prof), stream=text)
            stats.sort_stats("cumulative").print_stats(60)
            stats.sort_stats("tottime").print_stats(40)
        print(f"profiled {name}: {out / name}.txt", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--jobs", type=int, help="--jobs N for every command (default: theirs)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--region", default="attn_fwd",
                        help="kernels --region (default attn_fwd; '' for the command's choice)")
    parser.add_argument("--more", action="store_true",
                        help="also the other commands and the text renderings (MORE)")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="then profile each command on the reopened trace into DIR")
    args = parser.parse_args()
    extra = [] if args.jobs is None else ["--jobs", str(args.jobs)]
    size = args.file.stat().st_size
    runs = [run_once(args.file, extra, args.region or None, args.more)
            for _ in range(args.repeat)]
    if args.profile:
        profile(args.file, extra, args.region or None, args.profile)
    clear_cache(args.file)

    def wall(key: str) -> float:
        return statistics.median(r[key]["wall"] for r in runs)

    def rss(key: str) -> float:
        return statistics.median(max(r[key]["rss_self"], r[key]["rss_children"])
                                 for r in runs) / size

    base, first = wall("orjson"), wall("stats first")
    print(f"file: {args.file.name}, {size / 1e6:.0f} MB; {os.cpu_count()} cores; "
          f"--jobs {args.jobs or 'default'}; {args.repeat} run(s), medians")
    print()
    print("| command | seconds | / orjson.loads | / first open | peak RSS / file |")
    print("|---|---|---|---|---|")

    def row(label: str, key: str) -> None:
        print(f"| {label} | {wall(key):.2f} | {wall(key) / base:.3f} | "
              f"{wall(key) / first:.3f} | {rss(key):.2f} |")

    row("`orjson.loads` (baseline)", "orjson")
    row("`stats --json`, first open", "stats first")
    row("`stats --json`, reopen", "stats reopen")
    for name in COMMANDS:
        what = f"`{name}{' --region ' + args.region if name == 'kernels' and args.region else ''}"
        row(f"{what} --json`, reopen, run 1", f"{name} run 1")
        row(f"{what} --json`, reopen, run 2", f"{name} run 2")
    for name in MORE if args.more else ():
        row(f"`{name}`, reopen, run 1", f"{name} run 1")
        row(f"`{name}`, reopen, run 2", f"{name} run 2")
    print()
    worst = max(wall(f"{n} run {k}") for n in COMMANDS for k in (1, 2))
    print(f"first open / orjson.loads = {first / base:.3f} (goal <= {GOALS['first']} on 2 cores)")
    print(f"reopen / first open = {wall('stats reopen') / first:.3f}; slowest command on the "
          f"reopened trace / first open = {worst / first:.3f} (goal <= {GOALS['reopen']})")
    if args.more:
        most = max(wall(f"{n} run {k}") for n in MORE for k in (1, 2))
        print(f"slowest of the other commands / first open = {most / first:.3f}")
    print(f"slowest command on the reopened trace / orjson.loads = {worst / base:.3f} "
          f"(goal <= {GOALS['command']})")
    print(f"peak RSS / file: first open {rss('stats first'):.2f} (goal <= {GOALS['rss_first']}), "
          f"reopen {rss('stats reopen'):.2f} (goal <= {GOALS['rss_reopen']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
