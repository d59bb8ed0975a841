"""Timings the tests used to assert, measured here as ratios instead.

    python bench/bench_extremes.py [--events 1000000] [--mutations 200] [--repeat 3]

The tests check what does not depend on the machine (results, memory counted in
bytes); how long things take is measured here, side by side in one run, so a
busy machine slows both sides of a ratio alike:

- load:  ``load_trace`` of one lane of ``--events`` nested events
         (tests/test_extremes.py's million-event trace) against a tenth of it;
         linear loading gives a ratio near 10, a quadratic step near 100.
- fuzz:  ``load_trace`` of every seed of tests/test_fuzz_loader.py and of
         ``--mutations`` damaged copies (the same byte mutations, random but
         seeded); the slowest damaged load against its undamaged seed's.
- frame: ``track_cells`` for one timeline row of ``--events`` kernels against
         1,000 (tests/test_tui_units.py checks the allocation count instead);
         width+1 binary searches give a ratio near 1.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.errors import TraceError  # noqa: E402
from profiling.trace import load_trace  # noqa: E402
from tests.fixtures.flat_trace import flat_trace  # noqa: E402
from tests.test_extremes import write_one_lane  # noqa: E402
from tests.test_fuzz_loader import SEEDS, TOKENS, mutate_bytes  # noqa: E402
from tui.tracks import make_track, track_cells  # noqa: E402


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    """The fastest of ``repeat`` runs, in seconds (the least disturbed by other work)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_load(events: int, repeat: int, folder: Path) -> None:
    small, big = folder / "small.json", folder / "big.json"
    write_one_lane(small, events // 100)
    write_one_lane(big, events // 10)
    t_small = best_of(repeat, lambda: load_trace(small, use_cache=False))
    t_big = best_of(repeat, lambda: load_trace(big, use_cache=False))
    print(f"load   {events // 10:>9,} events {t_small:8.3f} s   {events:>9,} events "
          f"{t_big:8.3f} s   ratio {t_big / t_small:6.1f} (linear: 10)")


def _load_or_error(path: Path) -> None:
    try:
        load_trace(path, use_cache=False)
    except TraceError:
        pass


def random_ops(rng: random.Random) -> list[tuple[object, ...]]:
    """One to four byte mutations, drawn like test_fuzz_loader's ``byte_op``."""
    ops: list[tuple[object, ...]] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "truncate", "delete", "duplicate", "insert"])
        at = rng.getrandbits(31)
        extra = {"flip": rng.randint(1, 255), "delete": rng.randint(1, 400),
                 "duplicate": rng.randint(1, 400), "insert": rng.choice(TOKENS)}.get(kind)
        ops.append((kind, at) if extra is None else (kind, at, extra))
    return ops


def bench_fuzz(mutations: int, repeat: int, folder: Path) -> None:
    rng = random.Random(0)
    for name, data in sorted(SEEDS.items()):
        path = folder / "seed.json"
        path.write_bytes(data)
        t_seed = best_of(repeat, partial(_load_or_error, path))
        worst = 0.0
        for _ in range(max(1, mutations // len(SEEDS))):
            path.write_bytes(mutate_bytes(data, random_ops(rng)))
            worst = max(worst, best_of(1, partial(_load_or_error, path)))
        print(f"fuzz   {name:<32} {len(data) / 1e3:7.0f} kB  seed {t_seed * 1e3:7.1f} ms  "
              f"worst damaged {worst * 1e3:7.1f} ms   ratio {worst / t_seed:5.1f}")


def bench_frame(events: int, repeat: int) -> None:
    def per_call(n: int) -> float:
        trace = flat_trace(n, seed=2)
        track = make_track(trace, np.arange(n), trace.start_ns)
        total = float(track.end.max())

        def frame() -> None:
            for i in range(50):
                track_cells(track, total * i / 100, total / 2 / 200, 200)

        return best_of(repeat, frame) / 50

    small, big = per_call(1_000), per_call(events)
    print(f"frame  {1_000:>9,} events {small * 1e6:8.1f} µs  {events:>9,} events "
          f"{big * 1e6:8.1f} µs  ratio {big / small:6.2f} (flat: 1)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--mutations", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bench_load(args.events, args.repeat, folder)
        bench_fuzz(args.mutations, args.repeat, folder)
    bench_frame(args.events, args.repeat)
    print(f"(each figure the best of {args.repeat} runs; the ratios are the result)")


if __name__ == "__main__":
    main()
