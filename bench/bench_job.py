"""Opening a job of N ranks against loading its largest rank alone (issue 14's goal).

    python bench/bench_job.py --make /tmp/job8 --ranks 8 --size-mb 1000 --seed SEED.json[.gz]
    python bench/bench_job.py /tmp/job8 [--repeat 1] [--size 140x45] [--no-tui]

``--make`` writes N rank traces ``rank<k>.json`` (``bench/make_big_trace.py`` from
SEED, each with ``distributedInfo`` rank k of N) and exits.  Then, side by side in
one run, each in a fresh process and with the same page-cache state (every file
read once before timing), first open (no index) and reopen (the indexes mapped):

- rank:        ``load_trace`` of the largest rank alone, plus its timeline model
               (what its first frame needs);
- job:         every rank loaded in parallel and merged (``tui.job_session``: big
               ranks first parsed in processes of their own), plus the merged
               timeline model; on first open also with every rank on a thread of
               one process (``ATTN_TUI_JOB_THREADS=1``), to compare;
- first frame: ``attn-tui open DIR`` in a private tmux server until the screen shows
               the job's first lanes (``bench/tui_first_frame.py``'s harness;
               ``--no-tui`` skips it), and ``attn-tui open LARGEST`` the same way.

The goal: the job's first frame within the largest rank's load plus 20 % on a
machine with 8 or more cores.  Two ratios say it: job frame / rank load (the
load call alone, so the app's start-up counts against the job) and job frame /
rank frame (both through the app).  Absolute seconds only make them readable.
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

from make_big_trace import load_seed, write_big_trace  # noqa: E402
from tui_first_frame import clear_cache, time_first_frame  # noqa: E402

from profiling.analysis.job_index import THREADS_ENV  # noqa: E402

_RANK = r"""
import json, sys, time
t = time.perf_counter()
from profiling.trace import load_trace
from tui.timeline_model import TimelineModel
trace = load_trace(sys.argv[1])
model = TimelineModel(trace)
wall = time.perf_counter() - t
labels = [s.label for s in model.rows[:12] if s.kind in ("group", "lane")][:2]
print(json.dumps({"wall": wall, "labels": labels}))
"""

_JOB = r"""
import json, sys, time
t = time.perf_counter()
from tui.job_session import open_targets, load_job_session
from tui.timeline_model import TimelineModel
targets, _ = open_targets(sys.argv[1:])
assert len(targets) == 1, targets
session = load_job_session(sys.argv[1:], targets[0])
model = TimelineModel(session.trace)
wall = time.perf_counter() - t
labels = [s.label for s in model.rows[:12] if s.kind in ("group", "lane")][:2]
print(json.dumps({"wall": wall, "labels": labels, "rows": len(session.trace)}))
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


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=False, env={**os.environ, **(env or {})})
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _read_all(paths: list[Path]) -> None:
    """Read every file once: the same page-cache state for every measurement."""
    for p in paths:
        with p.open("rb") as f:
            while f.read(64 << 20):
                pass


def _traces(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--make", action="store_true", help="write the rank traces and exit")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--size-mb", type=float, default=1000)
    ap.add_argument("--seed", type=Path)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--size", default="140x45", help="terminal size WxH")
    ap.add_argument("--no-tui", action="store_true", help="skip the tmux first frame")
    args = ap.parse_args()
    if args.make:
        if args.seed is None:
            ap.error("--make needs --seed")
        make(args.folder, args.ranks, args.size_mb, args.seed)
        return 0
    folder = args.folder.resolve()
    paths = _traces(folder)
    largest = max(paths, key=lambda p: p.stat().st_size)
    _read_all(paths)
    w, h = (int(x) for x in args.size.lower().split("x"))
    runs: dict[str, list[tuple[float, float, float | None, float | None]]] = {
        "first open": [], "reopen": []}
    on_threads: list[float] = []
    for _ in range(args.repeat):
        for label in runs:
            if label == "first open":
                for p in paths:
                    clear_cache(p)
            rank = _run(_RANK, str(largest))
            if label == "first open":
                for p in paths:
                    clear_cache(p)
            job = _run(_JOB, *map(str, paths))
            print(f"{label}: rank load {rank['wall']:.2f}s, job load {job['wall']:.2f}s",
                  flush=True)
            threads = None
            if label == "first open":  # the same, every rank on a thread of one process
                for p in paths:
                    clear_cache(p)
                threads = _run(_JOB, *map(str, paths), env={THREADS_ENV: "1"})["wall"]
            frame = rank_frame = None
            if not args.no_tui:
                if label == "first open":
                    for p in paths:
                        clear_cache(p)
                frame = time_first_frame(folder, job["labels"], (w, h), job["wall"])
                if label == "first open":
                    clear_cache(largest)
                rank_frame = time_first_frame(largest, rank["labels"], (w, h), rank["wall"])
                print(f"{label}: first frames: job {frame:.2f}s, rank {rank_frame:.2f}s",
                      flush=True)
            runs[label].append((rank["wall"], job["wall"], frame, rank_frame))
            if threads is not None:
                on_threads.append(threads)
    total = sum(p.stat().st_size for p in paths) / 1e6
    print(f"job: {len(paths)} ranks, {total:.0f} MB in all, largest {largest.name} "
          f"{largest.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} cores; "
          f"{args.repeat} run(s), medians")
    print(f"  {'':12}{'rank load':>10}{'job load':>10}{'ratio':>7}{'rank frame':>11}"
          f"{'job frame':>10}{'/load':>7}{'/frame':>7}   goal: job frame <= 1.2 x rank load")
    for label, rs in runs.items():
        rank = statistics.median(r[0] for r in rs)
        job_s = statistics.median(r[1] for r in rs)
        line = f"  {label:12}{rank:9.2f}s{job_s:9.2f}s{job_s / rank:7.2f}"
        frames = [(r[2], r[3]) for r in rs if r[2] is not None and r[3] is not None]
        if frames:
            frame = statistics.median(f[0] for f in frames)
            rank_frame = statistics.median(f[1] for f in frames)
            line += (f"{rank_frame:10.2f}s{frame:9.2f}s{frame / rank:7.2f}"
                     f"{frame / rank_frame:7.2f}")
        print(line)
    if on_threads:
        t = statistics.median(on_threads)
        rank = statistics.median(r[0] for r in runs["first open"])
        print(f"  first open, every rank on a thread of one process ({THREADS_ENV}=1): "
              f"job load {t:.2f}s, ratio {t / rank:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
