"""``StoredRegions`` (the regions of a reopened trace, over the stored table) answers
what ``Regions`` answers for the same instances: names, summaries, select, instances."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.analysis_parts import CODECS
from profiling.analysis.regions import STEP_GROUP, Regions
from profiling.analysis.stored_regions import StoredRegions
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
