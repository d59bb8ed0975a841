"""What the range panel costs: ``slice_summary`` over 1 M and 10 M events.

    python bench/bench_slices.py [--events 1000000 10000000] [--repeat 5]

The issue's goal: the range panel of a 1 M-event range appears within 200 ms.
Input: ``tests.fixtures.flat_trace`` (one GPU stream of back-to-back kernels, a
Memcpy every 997), built in numpy columns.  Three ranges each: the whole trace
(every event counts, the worst case), its middle half, and 1 % of it.  The best of
``--repeat`` runs is printed (the machine is shared), with a plain NumPy pass over
the same columns (``ts < hi & end > lo``, the least any range query must do) as
the yardstick, so the ratio says what the grouping and the union add.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from profiling.analysis.slices import slice_summary, trace_span_ns  # noqa: E402
from tests.fixtures.flat_trace import flat_trace  # noqa: E402


def best_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'events':>11} {'range':>7} {'in range':>11} {'slices ms':>10} {'scan ms':>8} "
          f"{'ratio':>6}")
    for n in args.events:
        trace = flat_trace(n)
        span = trace_span_ns(trace)
        origin = trace.start_ns
        for label, lo, hi in (("all", 0, span), ("half", span // 4, span * 3 // 4),
                              ("1%", span // 2, span // 2 + span // 100)):
            summary = slice_summary(trace, lo, hi)
            ms = best_ms(lambda t=trace, lo=lo, hi=hi: slice_summary(t, lo, hi), args.repeat)

            def scan(t=trace, o=origin, lo=lo, hi=hi) -> None:
                end = t.ts_ns + t.dur_ns
                np.flatnonzero((t.ts_ns < o + hi) & (end > o + lo))

            base = best_ms(scan, args.repeat)
            print(f"{n:>11,} {label:>7} {summary.events:>11,} {ms:>10.1f} {base:>8.1f} "
                  f"{ms / base:>6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
