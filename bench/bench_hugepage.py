"""A first open with NumPy's huge-page hint off (attn-tui's default) and on, side by side.

NumPy asks the kernel for transparent huge pages on every big array
(``madvise(MADV_HUGEPAGE)``).  A first open builds its columns once and touches
them once, so huge pages save it little; with the kernel's ``defrag`` setting
at ``madvise`` (a common default) each new huge page may first be compacted on
the spot, and on the 2-core VM this was written on a first touch of fresh
arrays took about three times as long.  ``tui/cli.py`` therefore sets
``NUMPY_MADVISE_HUGEPAGE=0`` unless the user set it.  This bench shows whether
that holds on a given machine: pairs of first opens (``attn-tui stats FILE
--json`` on an empty index), ``NUMPY_MADVISE_HUGEPAGE`` 0 and 1, in alternating
order, each in a fresh interpreter.

    python bench/bench_hugepage.py /tmp/big/t1000.json --pairs 4
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import STATS, clear_cache, measure  # noqa: E402

ENV = "NUMPY_MADVISE_HUGEPAGE"


def first_open(path: Path, hint: str) -> dict[str, float]:
    """One first open of ``path`` with the hint ``hint`` ('0' or '1')."""
    clear_cache(path)
    before = os.environ.get(ENV)
    os.environ[ENV] = hint
    try:
        return measure(STATS, path)
    finally:
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--pairs", type=int, default=4)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {"0": [], "1": []}
    rss: dict[str, list[float]] = {"0": [], "1": []}
    for k in range(args.pairs):
        for hint in ("1", "0") if k % 2 == 0 else ("0", "1"):
            got = first_open(args.file, hint)
            walls[hint].append(got["wall"])
            rss[hint].append(got["rss_self"] / 1e6)
            print(f"pair {k + 1}, {ENV}={hint}: {got['wall']:.2f} s, "
                  f"peak RSS {got['rss_self'] / 1e6:.0f} MB", flush=True)
    off, on = statistics.median(walls["0"]), statistics.median(walls["1"])
    print(f"{args.file.name}, {os.cpu_count()} cores, {args.pairs} pairs, medians: hint off "
          f"{off:.2f} s, on {on:.2f} s; off / on {off / on:.3f}; peak RSS off "
          f"{statistics.median(rss['0']):.0f} MB, on {statistics.median(rss['1']):.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
