"""Opening a job of N ranks against loading its largest rank alone (issue 14's goal).

    python bench/bench_job.py --make /tmp/job8 --ranks 8 --size-mb 1000 --seed SEED.json[.gz]
    python bench/bench_job.py /tmp/job8 [--repeat 1] [--size 140x45] [--no-tui] [--no-threads]

``--make`` writes N rank traces ``rank<k>.json`` (``bench/make_big_trace.py`` from
SEED, each with ``distributedInfo`` rank k of N) and exits.  Then, side by side in
one run, each in a fresh process and with the same page-cache state (every file
read once before timing), first open (no index: the ranks' and the job's are
removed) and reopen (the indexes mapped):

- rank:        ``load_trace`` of the largest rank alone, plus its timeline model
               (what its first frame needs);
- job:         ``tui.job_session.load_job_session`` plus the merged timeline model:
               on first open big ranks parsed in processes of their own, mapped,
               merged (the merged job is then written as an index of its own, off
               the measured path); on reopen the merged index mapped; each job
               line says its stages;
- threads:     on first open also with every rank loaded in the one process
               (``ATTN_TUI_JOB_THREADS=1``: big ranks parsed there one at a time),
               to compare (``--no-threads`` skips it);
- frames:      ``attn-tui open DIR`` in a private tmux server (``bench/job_frames.py``,
               on ``bench/tui_first_frame.py``'s harness; ``--no-tui`` skips it): its
               first frame (on a first open, the largest rank drawn alone, the status
               line saying the other ranks are loading: ``tui.job_progressive``) and
               the whole job's frame (the job's first two process groups on screen,
               their labels' heads, and the header ``job: N ranks``); on a reopen the
               two are one.  And ``attn-tui open LARGEST`` until its first frame.

Before a reopen, the job and the largest rank are opened once untimed with their
analysis run (``Session.analyse``), so that both reopen as they would after a first
open in the app: indexes and analysis parts stored (the app the bench quits after
its first frame may not have written them yet).

Every measured process has a time limit (``--limit``, default 20x the rank's load,
at least 120 s); one that passes it dumps its threads' stacks (``faulthandler``)
into the file the bench names, is killed, and the bench goes on.

The goal: the job's first frame within the largest rank's load plus 20 % on a
machine with 8 or more cores.  Two ratios say it: job frame / rank load (the
load call alone, so the app's start-up counts against the job) and job frame /
rank frame (both through the app); the same two for the whole job's frame.
Absolute seconds only make them readable.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from job_frames import time_job_frames  # noqa: E402
from make_big_trace import load_seed, write_big_trace  # noqa: E402
from tui_first_frame import clear_cache, time_first_frame  # noqa: E402

from profiling.analysis.job_index import THREADS_ENV, WORKERS_ENV  # noqa: E402

_GUARD = r"""
import faulthandler, os, sys
_stacks = open(os.environ["BENCH_STACKS"], "w")
faulthandler.dump_traceback_later(float(os.environ["BENCH_LIMIT"]), exit=True, file=_stacks)
"""

_RANK = _GUARD + r"""
import json, os, sys, time
t = time.perf_counter()
from profiling.trace import load_trace
from tui.timeline_model import TimelineModel
trace = load_trace(sys.argv[1])
model = TimelineModel(trace)
wall = time.perf_counter() - t
labels = [s.label for s in model.rows[:40] if s.kind == "group"][:2]
print(json.dumps({"wall": wall, "labels": labels}), flush=True)
if os.environ.get("BENCH_ANALYSE"):  # untimed: what the app stores after its first frame
    from profiling.analysis.analysed import AnalysedTrace
    from tui.session import Session
    Session(sys.argv[1], AnalysedTrace(trace)).analyse()
"""

_JOB = _GUARD + r"""
import json, os, sys, time
t = time.perf_counter()
from tui.job_session import open_targets, load_job_session
from tui.timeline_model import TimelineModel
imported = time.perf_counter() - t
targets, _ = open_targets(sys.argv[1:])
assert len(targets) == 1, targets
session = load_job_session(sys.argv[1:], targets[0])
t_model = time.perf_counter()
model = TimelineModel(session.trace)
wall = time.perf_counter() - t
stages = {"import": imported, **session.timings, "timeline": time.perf_counter() - t_model}
labels = [s.label for s in model.rows[:40] if s.kind == "group"][:2]
print(json.dumps({"wall": wall, "labels": labels, "rows": len(session.trace),
                  "stages": stages}), flush=True)
if os.environ.get("BENCH_ANALYSE"):  # untimed: what the app stores after its first frame
    from profiling.analysis.job_store import wait_for_writes
    wait_for_writes()
    session.analyse()
"""


def make(folder: Path, ranks: int, size_mb: float, seed: Path) -> None:
    """``rank<k>.json`` for k < ranks, from ``seed`` with each one's distributedInfo.

    Rank 0 is written by ``make_big_trace``; the others are byte copies of it with the
    rank patched in its header (a placeholder of fixed width, then the rank padded
    with spaces, which JSON allows), so 8 GB cost one 1 GB write and seven copies."""
    folder.mkdir(parents=True, exist_ok=True)
    top, events = load_seed(seed)
    width = len(str(ranks - 1))
    doc = dict(top)
    doc["distributedInfo"] = {"backend": "nccl", "rank": int("9" * width), "world_size": ranks}
    doc["traceEvents"] = events
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    first = folder / "rank0.json"
    try:
        written, n = write_big_trace(Path(f.name), first, size_mb)
    finally:
        os.unlink(f.name)
    key = b'"distributedInfo": {"backend": "nccl", "rank": '
    with first.open("rb") as f:
        at = f.read(1 << 20).index(key) + len(key)
    for k in range(ranks):
        path = folder / f"rank{k}.json"
        if k:
            shutil.copyfile(first, path)
        with path.open("r+b") as out:
            out.seek(at)
            out.write(str(k).rjust(width).encode())
        print(f"{path.name}: {written / 1e6:.0f} MB, {n} events, rank {k}")


class TimedOut(Exception):
    """A measured process passed its limit (its threads' stacks are in ``stacks``)."""

    def __init__(self, limit: float, stacks: str) -> None:
        super().__init__(f"did not finish in {limit:.0f} s; its threads' stacks: {stacks}")


def _run(code: str, *args: str, limit: float, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; its last stdout line as JSON.  Past
    ``limit`` seconds its stacks go to a file (``faulthandler``) and ``TimedOut``."""
    fd, stacks = tempfile.mkstemp(prefix="bench-job-stacks-", suffix=".txt")
    os.close(fd)
    extra = {"BENCH_LIMIT": str(limit), "BENCH_STACKS": stacks, **(env or {})}
    try:
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                              text=True, check=False, env={**os.environ, **extra},
                              timeout=limit + 30)
    except subprocess.TimeoutExpired:
        raise TimedOut(limit, stacks) from None
    if done.returncode != 0:
        if os.path.getsize(stacks):
            raise TimedOut(limit, stacks)
        os.unlink(stacks)
        raise RuntimeError(done.stderr.strip()[-2000:])
    os.unlink(stacks)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _clear(paths: list[Path]) -> None:
    """No index of any rank, nor of the job (either alignment): a first open."""
    from profiling.analysis.job import ALIGNMENTS, group_paths
    from profiling.analysis.job_store import job_prefix
    from profiling.trace.cache_store import list_entries, remove_entry

    for p in paths:
        clear_cache(p)
    groups = group_paths([str(p) for p in paths])
    prefixes = tuple(job_prefix(g, a) for g in groups for a in ALIGNMENTS)
    for entry in list_entries():
        if entry.folder.name.startswith(prefixes):
            remove_entry(entry.folder)


def _stages(job: dict) -> str:
    return ", ".join(f"{k} {v:.2f}s" for k, v in job.get("stages", {}).items())


def _read_all(paths: list[Path]) -> None:
    """Read every file once: the same page-cache state for every measurement."""
    for p in paths:
        with p.open("rb") as f:
            while f.read(64 << 20):
                pass


def _traces(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--make", action="store_true", help="write the rank traces and exit")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--size-mb", type=float, default=1000)
    ap.add_argument("--seed", type=Path)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--size", default="140x45", help="terminal size WxH")
    ap.add_argument("--no-tui", action="store_true", help="skip the tmux first frame")
    ap.add_argument("--no-threads", action="store_true",
                    help=f"skip the first open with {THREADS_ENV}=1")
    ap.add_argument("--limit", type=float, help="seconds a measured process may take")
    ap.add_argument("--rank-workers", type=int,
                    help=f"decoders per rank's own process ({WORKERS_ENV}; default cores/ranks)")
    args = ap.parse_args()
    if args.make and args.seed is None:
        ap.error("--make needs --seed")
    if args.rank_workers:
        os.environ[WORKERS_ENV] = str(args.rank_workers)  # every measured process inherits it
    return args


Run = tuple[float, float, "float | None", "float | None", "float | None"]
"""rank load, job load, job's first frame, rank's frame, whole job's frame."""


def _shown_first(paths: list[Path]) -> tuple[int, int]:
    """The rank a first open shows first (the largest, ties: the lowest rank) and how
    many ranks the job has (``profiling.analysis.job_progressive.first_rank``)."""
    from profiling.analysis.job import group_paths, sniff_rank

    ordered = group_paths([str(p) for p in paths])[0]
    sizes = [os.stat(p).st_size for p in ordered]
    k = max(range(len(ordered)), key=lambda i: (sizes[i], -i))
    info = sniff_rank(ordered[k])
    return (info.rank if info is not None else k), len(ordered)


def _measure(label: str, paths: list[Path], args: argparse.Namespace,
             limit: float | None) -> tuple[Run, float | str | None, float]:
    """One first open or reopen: rank load, job load, (threads), frames."""
    largest = max(paths, key=lambda p: p.stat().st_size)
    first = label == "first open"
    if first:
        _clear(paths)
    else:  # every index there, and the analysis stored, as after a first open in the app
        for code, args_ in ((_JOB, list(map(str, paths))), (_RANK, [str(largest)])):
            _run(code, *args_, limit=limit or 600.0, env={"BENCH_ANALYSE": "1"})
    rank = _run(_RANK, str(largest), limit=limit or 600.0)
    limit = limit or max(120.0, 20 * rank["wall"])
    if first:
        _clear(paths)
    job = _run(_JOB, *map(str, paths), limit=limit)
    print(f"{label}: rank load {rank['wall']:.2f}s, job load {job['wall']:.2f}s "
          f"({_stages(job)})", flush=True)
    threads: float | str | None = None
    if first and not args.no_threads:  # the same, every rank loaded in this one process
        _clear(paths)
        try:
            threads = _run(_JOB, *map(str, paths), limit=limit, env={THREADS_ENV: "1"})["wall"]
        except TimedOut as exc:
            threads = str(exc)
        print(f"{label}, {THREADS_ENV}=1: " + (f"job load {threads:.2f}s" if isinstance(
            threads, float) else str(threads)), flush=True)
    frame = rank_frame = whole = None
    if not args.no_tui:
        w, h = (int(x) for x in args.size.lower().split("x"))
        if first:
            _clear(paths)
        shown, n = _shown_first(paths)
        frame, whole = time_job_frames(paths[0].parent, job["labels"], shown, n, (w, h),
                                       rank["wall"], job["wall"])
        if first:
            clear_cache(largest)
        rank_frame = time_first_frame(largest, rank["labels"], (w, h), rank["wall"])
        print(f"{label}: frames: job first {frame:.2f}s (rank {shown} drawn), whole job "
              f"{whole:.2f}s; rank alone {rank_frame:.2f}s", flush=True)
    return (rank["wall"], job["wall"], frame, rank_frame, whole), threads, limit


def main() -> int:
    args = _args()
    if args.make:
        make(args.folder, args.ranks, args.size_mb, args.seed)
        return 0
    folder = args.folder.resolve()
    paths = _traces(folder)
    largest = max(paths, key=lambda p: p.stat().st_size)
    _read_all(paths)
    runs: dict[str, list[Run]] = {"first open": [], "reopen": []}
    on_threads: list[float | str] = []
    limit = args.limit
    for _ in range(args.repeat):
        for label in runs:
            run, threads, limit = _measure(label, paths, args, limit)
            runs[label].append(run)
            if threads is not None:
                on_threads.append(threads)
    total = sum(p.stat().st_size for p in paths) / 1e6
    print(f"job: {len(paths)} ranks, {total:.0f} MB in all, largest {largest.name} "
          f"{largest.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} cores; decoders per "
          f"rank's process {os.environ.get(WORKERS_ENV) or 'cores / ranks'}; "
          f"{args.repeat} run(s), medians")
    _table(runs, on_threads)
    return 0


def _table(runs: dict[str, list[Run]], on_threads: list[float | str]) -> None:
    print(f"  {'':12}{'rank load':>10}{'job load':>10}{'ratio':>7}{'rank frame':>11}"
          f"{'job frame':>10}{'/load':>7}{'/frame':>7}{'whole':>9}{'/load':>7}{'/frame':>7}"
          "   goal: job frame <= 1.2 x rank load")
    for label, rs in runs.items():
        rank = statistics.median(r[0] for r in rs)
        job_s = statistics.median(r[1] for r in rs)
        line = f"  {label:12}{rank:9.2f}s{job_s:9.2f}s{job_s / rank:7.2f}"
        frames = [(r[2], r[3], r[4]) for r in rs if None not in (r[2], r[3], r[4])]
        if frames:
            frame = statistics.median(f[0] for f in frames)  # type: ignore[type-var]
            rank_frame = statistics.median(f[1] for f in frames)  # type: ignore[type-var]
            whole = statistics.median(f[2] for f in frames)  # type: ignore[type-var]
            line += (f"{rank_frame:10.2f}s{frame:9.2f}s{frame / rank:7.2f}"
                     f"{frame / rank_frame:7.2f}{whole:8.2f}s{whole / rank:7.2f}"
                     f"{whole / rank_frame:7.2f}")
        print(line)
    print("  job frame: its first rank drawn (a first open) or the whole job (a reopen); "
          "whole: every rank drawn")
    done = [t for t in on_threads if isinstance(t, float)]
    rank = statistics.median(r[0] for r in runs["first open"])
    if done:
        t = statistics.median(done)
        print(f"  first open, every rank loaded in one process ({THREADS_ENV}=1, big ranks "
              f"parsed one at a time): job load {t:.2f}s, ratio {t / rank:.2f}")
    for failed in on_threads:
        if isinstance(failed, str):
            print(f"  first open, {THREADS_ENV}=1: {failed}")


if __name__ == "__main__":
    sys.exit(main())
