"""``slices`` of the whole trace is kept with the index: a reopen reads it, and what
it reads is what a fresh computation gives, for every lane choice."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import analysis_store
from profiling.analysis import slices as slices_module
from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.slices import WHOLE_TRACE_PART, slice_summary, whole_trace
from profiling.analysis.warm import warm
from profiling.trace.cache import index_of
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


def summaries(trace) -> list[dict]:  # type: ignore[no-untyped-def]
    out = [slice_summary(trace, lanes=lanes).as_json() for lanes in ("all", "cpu", "gpu")]
    return out + [slice_summary(trace, 0, 10**18).as_json()]  # a range past the end


def count_groupings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = slices_module._group_columns

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(slices_module, "_group_columns", counted)
    return calls


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_reopened_slices_are_the_fresh_ones(path: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    want = summaries(load_trace(path, use_cache=False))
    assert summaries(load_trace(path, min_cache_bytes=0)) == want  # computed and stored
    calls = count_groupings(monkeypatch)
    assert summaries(load_trace(path, min_cache_bytes=0)) == want  # read
    assert calls == [], "a reopen grouped the whole trace again"


def test_a_stored_copy_that_does_not_fit_is_recomputed(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = SAMPLE_TRACES / "naive.json.gz"
    want = summaries(load_trace(path, use_cache=False))
    trace = load_trace(path, min_cache_bytes=0)
    groups, figures = whole_trace(trace)
    found = index_of(trace)
    assert found is not None
    part_folder = found[0] / analysis_store.part_folder_name(WHOLE_TRACE_PART)
    bad_names = {**groups, "name_id": groups["name_id"] + len(trace.strings)}
    short = {**groups, "count": groups["count"][:-1]}
    for arrays, doc in ((bad_names, figures), (short, figures), (groups, {"gpu_busy_ns": 1}),
                        ({**groups, "kind": np.full_like(groups["kind"], 250)}, figures)):
        shutil.rmtree(part_folder, ignore_errors=True)  # save keeps a good copy in place
        assert analysis_store.save(trace, WHOLE_TRACE_PART, arrays, doc)
        calls = count_groupings(monkeypatch)
        assert summaries(load_trace(path, min_cache_bytes=0)) == want
        assert calls, "a copy that does not fit the trace was read"
        monkeypatch.undo()
        monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))


def test_a_first_open_stores_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = SAMPLE_TRACES / "sdpa_flash.json.gz"
    trace = load_trace(path, min_cache_bytes=0)
    assert analysis_store.load(trace, WHOLE_TRACE_PART) is None
    warm(AnalysedTrace(trace))
    assert analysis_store.load(trace, WHOLE_TRACE_PART) is not None
