"""The op table's faster pieces against the brute force they replaced (issue 13).

``key_averages`` groups its events without joining them or sorting them all
(``event_groups``), nests its host events for their parents only (``nesting.parents``)
and sums device time up the parents (``ancestor_sums``); ``_holders_of`` sorts
only the ids some op asks for; ``cpu_rows_flat`` reads a stored region's columns
instead of making an object per instance, and ``compare`` reads the op names
inside a region's instances a block at a time (``instance_ops``).  Each is held here to the plain
computation on handmade input with ties, several parts, devices and deep chains.
"""

from __future__ import annotations

import numpy as np
import pytest

from profiling.analysis import instance_ops, nesting
from profiling.analysis import key_averages as ka
from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.analysis_parts import CODECS
from profiling.analysis.device_time import _asked, _holders_of
from profiling.analysis.event_groups import _DENSE, Events
from profiling.analysis.nesting import ancestor_sums, nest, parents, subtree_sums
from profiling.analysis.regions import cpu_rows_flat
from profiling.analysis.stored_regions import StoredRegions, instance_column
from profiling.trace.loader import load_trace
from profiling.trace.model import DEVICE_TYPE_NAMES
from tests.conftest import SAMPLE_TRACES
from tests.test_nesting_vectorised import sorted_events


def brute_group(parts: list[Events], keys: list[str]) -> list[ka.KeyAverage]:
    """The grouping as it was: every event joined, sorted by (start, -end), rows in order
    of their first event, times summed as floats."""
    n = sum(p.code.shape[0] for p in parts)
    if n == 0:
        return []

    def col(name: str) -> np.ndarray:
        got = [getattr(p, name) for p in parts]
        return np.concatenate([np.zeros(p.code.shape[0], np.int64) if g is None else g
                               for p, g in zip(parts, got, strict=True)]).astype(np.int64)

    start, end, code = col("start"), col("end"), col("code")
    order = np.lexsort((-end, start))
    uniq, first, inverse = np.unique(code[order], return_index=True, return_inverse=True)
    g = np.empty_like(inverse)
    g[order] = inverse.reshape(-1)
    count = np.bincount(g, minlength=uniq.shape[0])
    sums = [np.bincount(g, weights=col(f).astype(np.float64), minlength=uniq.shape[0]) / 1000.0
            for f in ("cpu_self", "cpu_total", "dev_self", "dev_total")]
    out = []
    for gi in np.argsort(first, kind="stable").tolist():
        c = int(uniq[gi])
        s0, s1, s2, s3 = (float(s[gi]) for s in sums)
        out.append(ka.KeyAverage(keys[c >> 4], DEVICE_TYPE_NAMES[(c >> 1) & 7], int(count[gi]),
                                 s0, s1, s2, s3, is_user_annotation=bool(c & 1)))
    return out


def random_part(rng: np.random.Generator, n: int, keys: int, device: bool,
                times: bool) -> Events:
    start = rng.integers(0, 6, n)  # few starts and ends: ties within and across parts
    end = start + rng.integers(0, 3, n)
    dev = rng.integers(1, len(DEVICE_TYPE_NAMES), n) if device else np.zeros(n, np.int64)
    code = (rng.integers(0, keys, n) * 8 + dev) * 2 + rng.integers(0, 2, n)

    def t() -> np.ndarray | None:
        return rng.integers(0, 10**7, n) if times else None

    return Events(start, end, code, t(), t(), t(), t())


@pytest.mark.parametrize("seed", range(60))
def test_group_as_the_sort_of_every_event(seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = int(rng.integers(1, 6))
    names = [f"k{i}" for i in range(keys)]
    parts = [random_part(rng, int(rng.integers(0, 40)), keys, device, times)
             for device, times in ((False, True), (True, True), (False, False))]
    got = ka._group(parts, names)
    assert got == brute_group(parts, names)
    assert [type(v) for r in got for v in vars(r).values()] == \
        [type(v) for r in brute_group(parts, names) for v in vars(r).values()]


def test_group_of_keys_spread_over_a_huge_string_table() -> None:
    rng = np.random.default_rng(3)
    names = [f"k{i}" for i in range(_DENSE)]  # codes up to 16x this: the sparse path
    parts = [random_part(rng, 50, 4, device, True) for device in (False, True)]
    parts = [Events(p.start, p.end, p.code + (_DENSE - 8) * 16, p.cpu_self, p.cpu_total,
                    p.dev_self, p.dev_total) for p in parts]
    got = ka._group(parts, names)
    assert {r.key for r in got} <= {f"k{i}" for i in range(_DENSE - 8, _DENSE - 4)}
    assert got == brute_group(parts, names)


def test_group_of_many_keys_each_far_from_the_next() -> None:
    """5,000 events of 5,000 keys 16 names apart: packed 16 codes at a time they stayed
    sparser than the events, and the sparse path called itself until Python's limit
    (20,000 python functions in a trace of 40,000 events did)."""
    n = 5000
    key = 16 * np.arange(n)
    start = np.arange(n, dtype=np.int64) * 10
    one = np.ones(n, dtype=np.int64)
    parts = [Events(start, start + 5, key * 16, one, one, None, None)]
    names = [f"k{i}" for i in range(16 * n)]
    got = ka._group(parts, names)
    assert len(got) == n and got == brute_group(parts, names)


def test_group_first_event_decides_the_order_across_parts() -> None:
    """A device row whose first event ties a host row's on start and end comes after
    it (host events are listed first); the longer of two same-start events comes first."""
    host = Events(np.array([5, 5]), np.array([9, 7]), np.array([0 * 16, 1 * 16]),
                      *(np.array([1, 2]),) * 4)
    dev = Events(np.array([5, 4]), np.array([9, 3]), np.array([2 * 16 + 2, 3 * 16 + 3]),
                     None, None, np.array([3, 4]), np.array([3, 4]))
    rows = ka._group([host, dev, Events(*(np.zeros(0, np.int64),) * 3, *(None,) * 4)],
                     ["a", "b", "c", "d"])
    assert [(r.key, r.device_type, r.is_user_annotation) for r in rows] == [
        ("d", "CUDA", True), ("a", "CPU", False), ("c", "CUDA", False), ("b", "CPU", False)]


@pytest.mark.parametrize("seed", range(30))
def test_parents_and_ancestor_sums_as_the_nesting(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(30):
        n = int(rng.integers(0, 150))
        s, e, g = sorted_events(rng, n, int(rng.integers(1, 4)), int(rng.choice([3, 50, 10**5])),
                                int(rng.choice([0, 2, 40, 10**5])))
        full = nest(s, e, g)
        assert np.array_equal(parents(s, e, g), full.parent)
        values = rng.integers(0, 1000, n) * (rng.random(n) < 0.3)
        assert np.array_equal(ancestor_sums(values, full.parent), subtree_sums(values, full.stop))


def test_ancestor_sums_of_a_chain_deeper_than_its_rounds() -> None:
    depth = nesting._CLIMB_ROUNDS * 3
    s = np.arange(depth)
    e = 2 * depth - s  # each inside the one before
    full = nest(s, e, np.zeros(depth, np.int64))
    values = np.zeros(depth, np.int64)
    values[-1], values[depth // 2] = 7, 5
    got = ancestor_sums(values, full.parent)
    assert np.array_equal(got, subtree_sums(values, full.stop))
    assert got[0] == 12 and got[-1] == 7


def test_parents_fall_back_to_the_walk() -> None:
    s, e, g = np.array([3, 1, 2]), np.array([9, 4, 3]), np.zeros(3, np.int64)  # unsorted
    assert np.array_equal(parents(s, e, g), nesting._nest_walk(s, e, g).parent)
    assert parents(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)).shape == (0,)


@pytest.mark.parametrize("seed", range(20))
def test_holders_of_as_a_search_of_every_id(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 80))
    frontend = rng.integers(-1, 12, m)
    lane = rng.integers(0, 3, m)
    ops = np.flatnonzero(frontend > 0)
    ops = rng.choice(ops, int(rng.integers(0, ops.shape[0] + 1))) if ops.shape[0] else ops
    owners, reps = _holders_of(frontend, lane, ops)
    want = [np.flatnonzero((frontend == frontend[o]) & (lane == lane[o])) for o in ops.tolist()]
    assert reps.tolist() == [w.shape[0] for w in want]
    assert owners.tolist() == [int(x) for w in want for x in w]


def test_cpu_rows_flat_reads_a_stored_region_without_objects() -> None:
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False))
    encode, decode = CODECS["regions"]
    stored = decode(a.trace, *encode(a.regions))
    assert isinstance(stored, StoredRegions)
    lazy = stored.select_lazily("attn_fwd")
    assert len(lazy) > 1
    rows, owner = cpu_rows_flat(a.trace, lazy)
    assert all(m is None for m in stored._made)  # no instance object made
    objects = a.regions.select("attn_fwd")
    want_rows, want_owner = cpu_rows_flat(a.trace, objects)
    assert np.array_equal(rows, want_rows) and np.array_equal(owner, want_owner)
    each = [i.cpu_rows(a.trace) for i in objects]
    assert np.array_equal(rows, np.concatenate(each))


@pytest.mark.parametrize("block", [1, 7, 1 << 17])
@pytest.mark.parametrize("trace_name", ["naive.json.gz", "sdpa_math.json.gz"])
def test_op_names_within_instances_as_their_cpu_rows(
    monkeypatch: pytest.MonkeyPatch, block: int, trace_name: str
) -> None:
    """compare's op names, read a block of instances at a time, are the names of the
    ``cpu_op`` rows of every instance's ``cpu_rows`` (blocks of one row, a few, all)."""
    monkeypatch.setattr(instance_ops, "BLOCK_ROWS", block)
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / trace_name, use_cache=False))
    for name in a.regions.names():
        instances = a.regions.select(name)
        cols = (instance_column(instances, f) for f in ("lane", "start_ns", "end_ns"))
        got = instance_ops.op_name_ids_within(a.trace, *cols)
        want = {int(a.trace.name_id[r]) for i in instances for r in i.op_rows(a.trace)}
        assert got.tolist() == sorted(want), name
    none = np.zeros(0, np.int64)
    assert instance_ops.op_name_ids_within(a.trace, none, none, none).shape == (0,)


def test_op_names_within_edges(write_trace) -> None:
    """An op ending with its instance is inside it, one ending after it is not, one
    starting with it is (two instances on two threads)."""
    def ev(name: str, ts: int, dur: int, tid: int, cat: str = "cpu_op") -> dict:
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}

    events = [
        ev("attn_fwd", 10, 10, 1, "user_annotation"), ev("aten::at_start", 10, 2, 1),
        ev("aten::at_end", 15, 5, 1), ev("aten::past_end", 18, 5, 1),
        ev("aten::before", 5, 3, 1), ev("attn_fwd", 100, 10, 2, "user_annotation"),
        ev("aten::other_thread", 101, 9, 2), ev("aten::after", 111, 1, 2),
    ]
    a = AnalysedTrace(load_trace(write_trace(events)))
    instances = a.regions.select("attn_fwd")
    assert len(instances) == 2
    cols = (instance_column(instances, f) for f in ("lane", "start_ns", "end_ns"))
    got = {a.trace.strings[i] for i in instance_ops.op_name_ids_within(a.trace, *cols).tolist()}
    assert got == {"aten::at_start", "aten::at_end", "aten::other_thread"}


@pytest.mark.parametrize("scale", [1, 10**12])
def test_asked_ids_as_isin(scale: int) -> None:
    """Small ids by a table, ids far past the events (merged files, big counters) by
    isin; ids below and above the wanted ones, none (-1) and zero among them."""
    rng = np.random.default_rng(scale % 97)
    for _ in range(50):
        ids = rng.integers(-3, 30, int(rng.integers(0, 60))) * scale
        wanted = rng.choice(ids, int(rng.integers(0, ids.shape[0] + 1))) if ids.shape[0] else ids
        wanted = np.concatenate((wanted, rng.integers(-5, 40, 2) * scale))[: wanted.shape[0] + 1]
        assert np.array_equal(_asked(ids, wanted), np.isin(ids, wanted))
