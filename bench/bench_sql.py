"""SQL over a reopened trace: time to the first row, and what DuckDB adds to memory.

    python bench/bench_sql.py TRACE [--query SQL] [--cache-dir DIR]

The issue's goals: a query over a 1 GB trace's ``events`` starts answering within
1 s of a reopen, and DuckDB never holds a second copy of the columns.  Each step
runs in a fresh process, as a user's command would:

1. ``first open``: parse the file and write its index (``--cache-dir``, default a
   private temp folder, so the run is repeatable and the user's cache is untouched);
2. ``reopen``: map the index (``load_trace``), then ``SELECT * FROM events LIMIT 5``
   through ``TraceDB``: seconds from the process's first line to the first row;
3. ``scan``: in the same process, every column the query reads paged in by one
   NumPy pass (the yardstick: the least any full scan does, and what makes the
   mapped columns resident), RSS noted, then a full-scan aggregate in DuckDB
   (``--query``), with peak RSS after it.  ``duckdb adds`` = peak RSS - RSS after the
   NumPy pass: a second copy of the columns would add about ``column bytes``.

Times are wall-clock on whatever machine runs it; the ratio (DuckDB scan / NumPy
pass) is the part that carries between machines.  Last, the first row of ``kernels``
(which needs the links and regions: computed, or mapped from the index when it has
them).  Small inputs here; the 1 GB trace on a bigger machine (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCAN = ("SELECT kind, count(*) AS n, sum(dur_us) AS total_us, max(ts_us) AS last_us "
        "FROM events GROUP BY kind ORDER BY total_us DESC")


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # KiB on Linux


def child(path: str, mode: str, query: str) -> dict:
    """One step in this (fresh) process; returns its figures."""
    from profiling.trace.loader import load_trace

    if mode == "open":
        trace = load_trace(path, min_cache_bytes=0)
        return {"open_s": time.perf_counter() - START, "events": len(trace)}
    import numpy as np

    from profiling.analysis.analysed import AnalysedTrace
    from profiling.sql.engine import Loaded, TraceDB

    trace = load_trace(path, min_cache_bytes=0)
    loaded_s = time.perf_counter() - START
    db = TraceDB([Loaded("big", AnalysedTrace(trace))])
    first = db.query("SELECT * FROM events LIMIT 5")
    first_row_s = time.perf_counter() - START
    assert first.rows, "no events"
    columns = (trace.ts_ns, trace.dur_ns, trace.kind, trace.name_id, trace.cat_id, trace.lane,
               trace.depth, trace.correlation, trace.external_id, trace.stream,
               trace.device_type)
    col_mb = sum(c.nbytes for c in columns) / 1e6
    t = time.perf_counter()
    kinds = np.bincount(trace.kind, minlength=16)
    sums = [int(c.astype(np.int64, copy=False).sum()) for c in columns]
    numpy_s = time.perf_counter() - t
    rss_touched = _rss_mb()
    t = time.perf_counter()
    scan = db.query(query)
    scan_s = time.perf_counter() - t
    peak = _peak_mb()
    t = time.perf_counter()
    db.query("SELECT * FROM kernels LIMIT 5")
    kernels_s = time.perf_counter() - t
    del kinds, sums
    return {"events": len(trace), "reopen_s": loaded_s, "first_row_s": first_row_s,
            "column_mb": col_mb, "numpy_pass_s": numpy_s, "scan_s": scan_s,
            "rss_after_numpy_mb": rss_touched, "peak_rss_mb": peak,
            "duckdb_adds_mb": peak - rss_touched, "scan_rows": len(scan.rows),
            "kernels_first_row_s": kernels_s}


def run_child(path: str, mode: str, query: str, cache_dir: str) -> dict:
    env = {**os.environ, "ATTN_TUI_CACHE_DIR": cache_dir}
    done = subprocess.run([sys.executable, __file__, path, "--child", mode, "--query", query],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        sys.exit(f"bench_sql: the {mode} step failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--query", default=SCAN, help="the full-scan query (default: %(default)s)")
    ap.add_argument("--cache-dir", help="index folder (default: a new temp folder)")
    ap.add_argument("--child", choices=("open", "reopen"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.trace, args.child, args.query)))
        return 0
    cache = args.cache_dir or tempfile.mkdtemp(prefix="attn-tui-bench-sql-")
    size_mb = os.path.getsize(args.trace) / 1e6
    try:
        opened = run_child(args.trace, "open", args.query, cache)
        r = run_child(args.trace, "reopen", args.query, cache)
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{args.trace}: {size_mb:.1f} MB, {r['events']:,} events")
    print(f"  first open (parse + index)      {opened['open_s']:8.2f} s")
    print(f"  reopen (map the index)          {r['reopen_s']:8.2f} s")
    print(f"  reopen -> first row of events   {r['first_row_s']:8.2f} s  (goal: < 1 s)")
    print(f"  NumPy pass over the columns     {r['numpy_pass_s']:8.3f} s")
    print(f"  DuckDB full-scan aggregate      {r['scan_s']:8.3f} s  "
          f"({r['scan_s'] / max(r['numpy_pass_s'], 1e-9):.1f}x the NumPy pass)")
    print(f"  then first row of kernels       {r['kernels_first_row_s']:8.2f} s  "
          "(links and regions: from the index when it holds them)")
    print(f"  column bytes                    {r['column_mb']:8.1f} MB")
    print(f"  RSS after the NumPy pass        {r['rss_after_numpy_mb']:8.1f} MB")
    print(f"  peak RSS after the DuckDB scan  {r['peak_rss_mb']:8.1f} MB")
    print(f"  DuckDB adds                     {r['duckdb_adds_mb']:8.1f} MB  "
          f"({r['duckdb_adds_mb'] / max(r['column_mb'], 1e-9):.2f}x the column bytes; "
          "a second copy would be ~1x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
