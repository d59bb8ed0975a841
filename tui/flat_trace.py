"""A ``Trace`` of one GPU stream with any number of back-to-back kernels, built
directly in numpy columns (no JSON): the input of the frame-time benchmark and
of the scale tests."""

from __future__ import annotations

import numpy as np

from profiling.trace.model import NO_ID, Group, Kind, Lane, LaneKind, Trace
from tui.synthetic import GEMM, MEMCPY, SOFTMAX


def flat_trace(n: int, *, seed: int = 0, memcpy_every: int = 997) -> Trace:
    """A ``Trace`` with one GPU stream of ``n`` back-to-back kernels (and a Memcpy
    every ``memcpy_every``), built directly in columns: the benchmark's input."""
    rng = np.random.default_rng(seed)
    dur = rng.integers(500, 5_000, size=n, dtype=np.int64)
    gap = rng.integers(100, 2_000, size=n, dtype=np.int64)
    ts = np.cumsum(dur + gap) - (dur + gap) + 1_000_000
    kind = np.full(n, Kind.KERNEL, dtype=np.uint8)
    names = ["", GEMM, SOFTMAX, MEMCPY, "kernel"]
    name_id = rng.integers(1, 3, size=n).astype(np.int32)
    if memcpy_every:
        kind[::memcpy_every] = Kind.MEMCPY
        name_id[::memcpy_every] = 3
    cat_id = np.full(n, 4, dtype=np.int32)
    none = np.full(n, NO_ID, dtype=np.int64)
    lane = Lane(
        index=0, pid=0, tid=7, kind=LaneKind.GPU, label="stream 7", group=0, events=n, max_depth=0
    )
    group = Group(index=0, pid=0, kind=LaneKind.GPU, label="GPU 0", lanes=[0])
    return Trace(
        path=f"<flat {n}>",
        n_entries=n,
        strings=names,
        ts_ns=ts,
        dur_ns=dur,
        name_id=name_id,
        cat_id=cat_id,
        kind=kind,
        ph=np.full(n, ord("X"), dtype=np.uint8),
        lane=np.zeros(n, dtype=np.int32),
        depth=np.zeros(n, dtype=np.int16),
        correlation=none,
        external_id=none,
        stream=np.full(n, 7, dtype=np.int64),
        source_index=np.arange(n, dtype=np.int64),
        lanes=[lane],
        lane_start=np.array([0, n], dtype=np.int64),
        groups=[group],
        metadata={},
    )
