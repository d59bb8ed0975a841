"""The first open's serial analysis, part by part, and the nesting walk side by side.

    python bench/bench_nest.py FILE.json [--repeat 3]

Loads the trace once (``load_trace``; the index is written or mapped as usual),
then in this one process:

1. ``nesting.nest`` on the arrays ``links.op_nesting`` builds (every cpu_op and
   user_annotation, in row order) beside ``nesting._nest_walk``, the stack walk
   it replaced (kept as its fallback), checking the two answers are identical;
2. each part the first open of ``stats`` builds, in dependency order: the op
   nesting (``OpTree``), the links, the regions, the copies, the summaries.

Best of ``--repeat`` runs each, in milliseconds.  Run it with
``ATTN_TUI_CACHE_DIR`` pointing at a scratch folder to keep the index out of the
user's cache.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def best(repeat: int, fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls (ms) and the last result."""
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t)
    return min(times) * 1e3, out


def main() -> None:
    from profiling.analysis import nesting
    from profiling.analysis.async_events import async_rows
    from profiling.analysis.copies import copy_stats
    from profiling.analysis.links import OpTree, link_gpu_events
    from profiling.analysis.regions import find_regions
    from profiling.trace.loader import load_trace
    from profiling.trace.model import Kind

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t = time.perf_counter()
    trace = load_trace(args.path)
    print(f"load_trace: {time.perf_counter() - t:.2f} s, {len(trace):,} events")

    ops = np.flatnonzero((trace.kind == Kind.CPU_OP) | (trace.kind == Kind.USER_ANNOTATION))
    ops = ops[~async_rows(trace, ops)]
    start = trace.ts_ns[ops]
    end = start + trace.dur_ns[ops]
    lane = trace.lane[ops]
    walk_ms, walk = best(args.repeat, nesting._nest_walk, start, end, lane)
    nest_ms, new = best(args.repeat, nesting.nest, start, end, lane)
    for name in ("parent", "stop", "depth"):
        assert np.array_equal(getattr(walk, name), getattr(new, name)), name
    print(
        f"nest over {ops.shape[0]:,} ops: walk {walk_ms:.1f} ms, vectorised {nest_ms:.1f} ms "
        f"({walk_ms / nest_ms:.1f}x), answers identical"
    )

    ms, tree = best(args.repeat, OpTree.of, trace)
    print(f"ops (OpTree.of)      {ms:7.1f} ms")
    ms, links = best(args.repeat, link_gpu_events, trace, tree)
    print(f"links                {ms:7.1f} ms")
    ms, regions = best(args.repeat, find_regions, trace, links)
    print(f"regions              {ms:7.1f} ms ({len(regions.instances):,} instances)")
    ms, _ = best(args.repeat, copy_stats, trace, links, regions)
    print(f"copies               {ms:7.1f} ms")
    ms, _ = best(args.repeat, regions.summaries)
    print(f"summaries            {ms:7.1f} ms")


if __name__ == "__main__":
    main()
