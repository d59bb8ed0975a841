"""A first open's regions are the instance table (``StoredRegions``), as a reopen's
are: the same instances, names, summaries and selections as the objects
``instances_at`` made before (that code is kept here verbatim), the same stored
table, and ``stats`` makes no instance object at all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.analysis_parts import CODECS, encode_instances
from profiling.analysis.links import Links, link_gpu_events
from profiling.analysis.regions import (
    STEP_GROUP,
    RegionInstance,
    Regions,
    _gpu_annotations,
    _spans,
    find_regions,
    group_name,
    instances_at,
    make_instances,
    region_rows,
)
from profiling.analysis.stats import trace_stats
from profiling.analysis.step_scope import query_lanes
from profiling.analysis.stored_regions import StoredRegions
from profiling.trace.loader import load_trace
from profiling.trace.model import Kind, Trace
from tests.conftest import SAMPLE_TRACES, real_trace_files
from tests.test_analysis_vectorised import containing, reference_containing


def reference_instances_at(trace: Trace, links: Links, rows: np.ndarray) -> list[RegionInstance]:
    """``regions.instances_at`` as it was: a Python counter per group, then objects."""
    if rows.shape[0] == 0:
        return []
    start = trace.ts_ns[rows]
    end = start + trace.dur_ns[rows]
    lane = trace.lane[rows].astype(np.int64)
    lo, hi = links.launch_range(query_lanes(trace, links.by_launch_lane, rows), start, end)
    gpu = links.by_launch
    gk = trace.kind[gpu]
    zero = np.zeros(1, dtype=np.int64)

    def cum(values: np.ndarray) -> np.ndarray:
        return np.concatenate((zero, np.cumsum(values, dtype=np.int64)))

    c_dur = cum(trace.dur_ns[gpu])
    c_kernel = cum(gk == Kind.KERNEL)
    c_memcpy = cum(gk == Kind.MEMCPY)
    c_memset = cum(gk == Kind.MEMSET)
    g_start, g_end = _spans(trace, gpu, lo, hi)
    ann = _gpu_annotations(trace, rows)
    named = {
        i: (trace.strings[i], group_name(trace.strings[i]))
        for i in np.unique(trace.name_id[rows]).tolist()
    }
    counters: dict[str, int] = {}
    index = []
    names = []
    for i in trace.name_id[rows].tolist():
        name_group = named[i]
        n = counters.get(name_group[1], 0)
        counters[name_group[1]] = n + 1
        index.append(n)
        names.append(name_group)
    table = np.stack(
        [
            np.asarray(index, dtype=np.int64),
            rows.astype(np.int64),
            lane,
            start,
            end,
            c_dur[hi] - c_dur[lo],
            c_kernel[hi] - c_kernel[lo],
            c_memcpy[hi] - c_memcpy[lo],
            c_memset[hi] - c_memset[lo],
            g_start,
            g_end,
            ann,
            lo,
            hi,
        ],
        axis=1,
    )
    return make_instances(names, table)


TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: Path(p).name)
def test_first_open_regions_as_the_objects_were(path: Path) -> None:
    trace = load_trace(path, use_cache=False)
    links = link_gpu_events(trace)
    found = find_regions(trace, links)
    assert isinstance(found, StoredRegions)
    want = Regions(reference_instances_at(trace, links, region_rows(trace)))
    encode = CODECS["regions"][0]
    table = encode(found)[0]["instances"]
    assert table.dtype == np.int64 and table.flags.c_contiguous
    assert np.array_equal(table, encode_instances(want.instances)["instances"])
    assert found.summaries() == want.summaries()
    assert found.names() == want.names()
    for name in [*want.names(), STEP_GROUP, "no such region"]:
        assert found.select(name) == want.select(name)
    rows = links.gpu_rows
    assert containing(found, links, rows) == reference_containing(want, links, rows)
    assert containing(want, links, rows) == reference_containing(want, links, rows)
    assert found.instances == want.instances
    assert all(type(i) is RegionInstance for i in found.instances)
    # instances_at (attention ops taken as regions) still hands out objects
    some = region_rows(trace)[::2]
    assert instances_at(trace, links, some) == reference_instances_at(trace, links, some)


def test_group_counts_across_interleaved_groups() -> None:
    """``index`` counts per group key: steps (one group, many names) interleaved with
    other regions, the rows in any order a caller gives."""
    trace = load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False)
    links = link_gpu_events(trace)
    rows = region_rows(trace)
    rng = np.random.default_rng(4)
    for _ in range(10):
        pick = rng.choice(rows, size=rows.shape[0] * 3)
        assert instances_at(trace, links, pick) == reference_instances_at(trace, links, pick)
    assert instances_at(trace, links, rows[:0]) == []


def test_stats_makes_no_instance_object() -> None:
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False))
    stats = trace_stats(a)
    regions = a.regions
    assert isinstance(regions, StoredRegions) and stats["regions"]
    assert len(regions.table) and all(m is None for m in regions._made)
