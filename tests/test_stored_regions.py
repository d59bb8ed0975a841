"""``StoredRegions`` (the regions of a reopened trace, over the stored table) answers
what ``Regions`` answers for the same instances: names, summaries, select, instances."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.analysis_parts import CODECS
from profiling.analysis.regions import STEP_GROUP, Regions
from profiling.analysis.stored_regions import StoredRegions, instance_names, instance_table
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


def stored_twin(a: AnalysedTrace) -> StoredRegions:
    encode, decode = CODECS["regions"]
    found = decode(a.trace, *encode(a.regions))
    assert isinstance(found, StoredRegions)
    return found


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_stored_regions_answer_as_regions_do(path: Path):
    a = AnalysedTrace(load_trace(path, use_cache=False))
    regions: Regions = a.regions
    stored = stored_twin(a)
    assert stored.names() == regions.names()
    assert stored.summaries() == regions.summaries()
    for s, r in zip(stored.summaries(), regions.summaries(), strict=True):
        assert [type(v) for v in vars(s).values()] == [type(v) for v in vars(r).values()]
    exact = {i.name for i in regions.instances}
    for name in [*regions.names(), *sorted(exact)[:5], "no such region", STEP_GROUP]:
        got = stored.select(name)
        assert got == regions.select(name), name
        assert all(type(i) is type(j) for i, j in zip(got, regions.select(name), strict=True))
    assert stored.instances == regions.instances
    assert stored == regions and regions == stored


def test_one_object_per_instance_whichever_asks_first():
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False))
    stored = stored_twin(a)
    picked = stored.select("attn_fwd")
    assert picked
    every = stored.instances
    assert all(any(p is e for e in every) for p in picked)
    assert stored.select("attn_fwd")[0] is picked[0]


def test_no_instances():
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False))
    empty = Regions([])
    encode, decode = CODECS["regions"]
    stored = decode(a.trace, *encode(empty))
    assert stored.names() == [] and stored.summaries() == [] and stored.instances == []
    assert stored.select("attn_fwd") == []


@pytest.mark.parametrize("path", TRACES[:3] + TRACES[-2:], ids=lambda p: p.name)
def test_lazy_selection_reads_as_the_list(path: Path):
    """``select_lazily`` is ``select`` as a sequence, and the column readers (kernels
    --json, the launch batch) give from its stored rows what they give from objects."""
    from profiling.analysis.chains import instance_launches
    from profiling.analysis.kernels_json import kernels_json

    a = AnalysedTrace(load_trace(path, use_cache=False))
    stored = stored_twin(a)
    for name in stored.names()[:4]:
        lazy, listed = stored.select_lazily(name), a.regions.select(name)
        assert len(lazy) == len(listed) and list(lazy) == listed
        assert lazy[-1] == listed[-1] and lazy[1:3] == listed[1:3]
        assert instance_names(lazy) == instance_names(listed)
        assert np.array_equal(instance_table(lazy), instance_table(listed))
        fresh = StoredRegions(a.trace, stored.table).select_lazily(name)  # no objects made
        assert kernels_json(a, fresh) == kernels_json(a, listed)
        got = instance_launches(a.trace, a.links, a.chains, fresh)
        want = instance_launches(a.trace, a.links, a.chains, listed)
        for field in ("inst_ptr", "rows", "chain_ptr", "chain"):
            assert np.array_equal(getattr(got, field), getattr(want, field))
        assert not any(stored_made for stored_made in fresh.regions._made)


def test_instances_is_one_list_and_threads_share_objects():
    """``instances`` is the same list each time (callers index it in loops), and
    instances made from several threads at once are one object each."""
    import threading

    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False))
    stored = stored_twin(a)
    got: list[list] = []
    threads = [threading.Thread(target=lambda: got.append(stored.select("attn_fwd")))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(x is y for g in got for x, y in zip(g, got[0], strict=True))
    assert stored.instances is stored.instances
    assert all(any(x is e for e in stored.instances) for x in got[0])
