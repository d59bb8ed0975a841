"""Commands on a reopened trace read its stored regions by column: ``ranks`` of one
trace (the one-trace job shares the trace's columns and reads its stored analysis,
and says what a fresh analysis of the merged copy says; stored regions split by rank
give what the instance objects give) and ``diff``'s median instance."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.job_merge import merge_ranks
from profiling.analysis.job_report import job_report, load_ranks
from profiling.analysis.rank_breakdown import rank_regions, region_figures
from profiling.analysis.regions import Regions
from profiling.analysis.stored_regions import StoredRegions
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_one_trace_ranks_are_those_of_a_fresh_merge(path: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions is not None  # stored
    job = load_ranks([str(path)], lambda p: load_trace(p, min_cache_bytes=0))
    if len(job.ranks) > 1:  # a file that merges several ranks: split, not shared
        assert job.rows_of is None
        return
    assert job.rows_of is not None
    assert np.shares_memory(job.trace.ts_ns, job.rows_of.ts_ns)
    assert isinstance(AnalysedTrace(job.rows_of).regions, StoredRegions)
    fresh = job_report(job, AnalysedTrace(job.trace))  # the merged copy, analysed anew
    assert job_report(job).ranks == fresh.ranks


def test_a_moved_trace_is_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A time offset (or names numbered otherwise) changes the rows: no sharing."""
    from profiling.analysis.job import RankInfo

    trace = load_trace(SAMPLE_TRACES / "naive.json.gz")
    info = RankInfo(trace.path, 0, None, "")
    moved = merge_ranks([trace], [info], [1000], trace.path, "clock", "one trace")
    assert moved.rows_of is None
    assert not np.shares_memory(moved.trace.ts_ns, trace.ts_ns)
    assert (moved.trace.ts_ns == trace.ts_ns + 1000).all()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_stored_regions_split_by_rank_as_the_objects_are(path: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions is not None  # stored
    trace = load_trace(path, min_cache_bytes=0)
    stored = AnalysedTrace(trace).regions
    assert isinstance(stored, StoredRegions)
    objects = Regions(list(stored.instances))
    for lane_rank in (np.zeros(len(trace.lanes), dtype=np.int64),
                      np.arange(len(trace.lanes), dtype=np.int64) % 2,
                      np.arange(len(trace.lanes), dtype=np.int64)[::-1] % 3):
        split, want = rank_regions(stored, lane_rank), rank_regions(objects, lane_rank)
        assert sorted(split) == sorted(want)
        for rank, regions in want.items():
            assert region_figures(split[rank]) == region_figures(regions)
    every_other = np.arange(0, len(objects.instances), 2)  # a rank's share of a job's
    assert region_figures(stored.subset(every_other)) == region_figures(
        Regions([objects.instances[k] for k in every_other.tolist()]))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_typical_instance_of_stored_regions(path: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``diff``'s median instance, ranked by the stored table's columns, is the one
    the objects sorted by (GPU time, index) give."""
    from profiling.analysis.kernel_diff import typical_instance
    from profiling.analysis.stored_regions import InstanceRange

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions is not None  # stored
    a = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    for region in a.regions.names():
        lazy = a.lazy_instances(region)
        assert isinstance(lazy, InstanceRange)
        ranked = sorted(lazy, key=lambda i: (i.device_ns, i.index))
        want = ranked[(len(ranked) - 1) // 2]
        assert typical_instance(lazy) == want == typical_instance(list(lazy))


def test_rank_figures_are_kept_with_the_index(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``ranks``' GPU figures are computed once, stored, and read back on a reopen; a
    copy of other rows or with a figure of the wrong type is computed again."""
    from profiling.analysis import analysis_store
    from profiling.analysis import rank_breakdown as rb
    from profiling.trace.cache import index_of

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = SAMPLE_TRACES / "naive.json.gz"
    load_trace(path, min_cache_bytes=0)
    job = load_ranks([str(path)], lambda p: load_trace(p, min_cache_bytes=0))
    assert job.rows_of is not None
    comm = rb.comm_names(job.trace.strings)
    want = [rb.gpu_breakdown(job.trace, r.rows, comm) for r in job.ranks]
    assert want[0]["gpu_events"] > 0
    assert rb.rank_figures(job, comm) == want  # computed, and stored
    computed: list[object] = []

    def counted(*args: object) -> dict[str, float]:
        computed.append(args)
        return want[0]

    monkeypatch.setattr(rb, "gpu_breakdown", counted)
    assert rb.rank_figures(job, comm) == want and computed == []  # read back
    spans = [list(r.rows) for r in job.ranks]
    folder = index_of(job.rows_of)[0]  # type: ignore[index]
    for doc in ({"spans": [[0, 1]], "figures": want},
                {"spans": spans, "figures": [{**want[0], "span_us": 1}]},
                {"spans": spans, "figures": [{**want[0], "gpu_events": 1.5}]},
                {"spans": spans, "figures": [{k: v for k, v in want[0].items() if k != "comm_us"}]},
                [1, 2]):
        shutil.rmtree(folder / analysis_store.part_folder_name(rb.FIGURES_PART))
        assert analysis_store.save(job.rows_of, rb.FIGURES_PART, {}, doc)
        computed.clear()
        assert rb.rank_figures(job, comm) == want and len(computed) == len(job.ranks)
