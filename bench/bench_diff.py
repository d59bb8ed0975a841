"""What ``attn-tui diff``'s alignment costs on two 10,000-kernel instances.

    python bench/bench_diff.py [--kernels 10000] [--changes 200] [--repeat 3]

The issue's goal: the alignment of two 10,000-kernel instances takes under a
second.  Printed: each case's time, the ratio to difflib and the share of the
1 s goal; then the scaling ratio (10x the kernels) and what the Diff view's
layout of the lanes adds.  Input: a transformer-like instance (one layer's 12 kernels, repeated),
and a copy with ``--changes`` kernels deleted, as many inserted and as many
rebuilt with other template arguments, so both the exact and the stem pass
work.  Also the worst case for the LCS: two unrelated random sequences.  The
yardstick is ``difflib.SequenceMatcher`` on the same keys (time, and how many
kernels it matches: it is not a longest common subsequence).
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.analysis.instance_kernels import KernelEntry  # noqa: E402
from profiling.analysis.kernel_diff import diff_kernels, kernel_key  # noqa: E402

LAYER = [f"void at::native::k{i}<128, 4, at::native::F{i}<float> >(int)" for i in range(10)]
LAYER += ["Memcpy DtoD (Device -> Device)", "gemm_sm90_tile_128x128"]


def entry(name: str, at: int = 0) -> KernelEntry:
    """A kernel of 1 µs; ``at``: its start in µs (the alignment does not look at it)."""
    kind = "memcpy" if name.startswith("Memcpy") else "kernel"
    return KernelEntry(row=0, name=name, kind=kind, start_offset_us=float(at), dur_us=1.0,
                       stream=7, launched_by="aten::op")


def instances(n: int, changes: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    a = [LAYER[i % len(LAYER)] for i in range(n)]
    b = list(a)
    for _ in range(changes):
        del b[rng.randrange(len(b))]
        b.insert(rng.randrange(len(b)), f"void extra_kernel_{rng.randrange(50)}<1>(int)")
        i = rng.randrange(len(b))
        b[i] = b[i].replace("<128, 4,", "<256, 2,")
    return a, b


def best_s(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=10_000)
    ap.add_argument("--changes", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.kernels
    rng = random.Random(1)
    cases = {
        "layers": instances(n, args.changes, 0),
        "random": ([rng.choice(LAYER) for _ in range(n)], [rng.choice(LAYER) for _ in range(n)]),
    }
    print(f"{'case':>7} {'kernels':>8} {'diff s':>8} {'matched':>8} {'difflib s':>10} "
          f"{'matched':>8} {'difflib/diff':>13} {'of 1 s goal':>12}")
    for label, (a, b) in cases.items():
        ea, eb = [entry(x) for x in a], [entry(x) for x in b]
        took = best_s(lambda ea=ea, eb=eb: diff_kernels(ea, eb), args.repeat)
        matched = sum(r.op == "=" for r in diff_kernels(ea, eb))
        ka = [kernel_key(x, e.kind) for x, e in zip(a, ea, strict=True)]
        kb = [kernel_key(x, e.kind) for x, e in zip(b, eb, strict=True)]
        sm = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
        start = time.perf_counter()
        dl = sum(m.size for m in sm.get_matching_blocks())
        dl_s = time.perf_counter() - start
        print(f"{label:>7} {n:>8} {took:>8.3f} {matched:>8} {dl_s:>10.3f} {dl:>8} "
              f"{dl_s / took:>12.1f}x {took:>11.1%}")
    scaling(n, args.changes, args.repeat)
    return 0


def scaling(n: int, changes: int, repeat: int) -> None:
    """How the time grows with the instance (a tenth of the kernels, then all), and
    what the Diff view adds on top (its lanes' layout and one 200-cell strip each)."""
    from profiling.analysis.kernel_diff import KernelDiff, Side
    from tui.diff_data import layout, strip

    small = instances(n // 10, changes // 10, 0)
    big = instances(n, changes, 0)
    times = []
    for a, b in (small, big):
        ea, eb = [entry(x) for x in a], [entry(x) for x in b]
        times.append(best_s(lambda ea=ea, eb=eb: diff_kernels(ea, eb), repeat))
    print(f"scaling: {n // 10} kernels {times[0]:.4f} s, {n} kernels {times[1]:.4f} s, "
          f"ratio {times[1] / times[0]:.1f} (linear: 10, quadratic: 100)")
    ea = [entry(x, i) for i, x in enumerate(big[0])]
    eb = [entry(x, i) for i, x in enumerate(big[1])]
    side = Side("a", "a", "attn_fwd", 0, 1, 0.0)
    diff = KernelDiff(side, side, tuple(diff_kernels(ea, eb)))

    def view() -> None:
        data = layout(diff, ea, eb)
        strip(data.a_lane, data.span_us, 200)
        strip(data.b_lane, data.span_us, 200)

    took = best_s(view, repeat)
    print(f"Diff view layout of the {n}-kernel diff: {took:.4f} s, "
          f"ratio to the alignment {took / times[1]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
