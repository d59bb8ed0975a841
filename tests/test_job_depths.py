"""A merged job's depth rows per lane (``JobTrace.drawn_depths``): what the timeline's
``TrackCache.depths`` counts with a pass per lane, known without one on reopen."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import job_store
from profiling.analysis.job_store import read_job, wait_for_writes
from profiling.analysis.job_trace import JobTrace
from profiling.trace.model import Kind, Trace
from tui.job_session import load_job_session
from tui.timeline_model import TimelineModel
from tui.tracks import TrackCache

NAIVE = Path(__file__).resolve().parent.parent / "sample_traces" / "naive.json.gz"


def _ranks(folder: Path, n: int = 2) -> list[str]:
    """``n`` ranks, each the naive sample (launches with flows nested in them)."""
    doc = json.loads(gzip.decompress(NAIVE.read_bytes()))
    paths = []
    for rank in range(n):
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": n}
        path = folder / f"rank{rank}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


def _counted(trace: Trace) -> list[int]:
    """The per-lane pass, as a plain trace's ``TrackCache`` makes it."""
    out = []
    for lane in range(len(trace.lanes)):
        rows = trace.lane_rows(lane)
        depth = trace.depth[rows][trace.kind[rows] != Kind.FLOW]
        out.append(int(depth.max()) + 1 if depth.size else 1)
    return out


def test_drawn_depths_equal_the_pass_and_reopen_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_store, "MIN_JOB_BYTES", 0)
    paths = _ranks(tmp_path)
    first = load_job_session(paths, str(tmp_path))
    trace = first.trace
    assert isinstance(trace, JobTrace)
    counted = _counted(trace)
    # the case Lane.max_depth alone gets wrong: a lane whose deepest rows are flows
    assert any(d == lane.max_depth for d, lane in zip(counted, trace.lanes, strict=True))
    assert trace.drawn_depths() == counted
    wait_for_writes()
    again = read_job(paths, "clock", str(tmp_path))
    assert again is not None
    assert getattr(again.trace, "_drawn_depths", None) == counted  # stored, no pass
    model = TimelineModel(again.trace)
    assert model.depths == counted
    plain = TrackCache(Trace(**{f: getattr(again.trace, f) for f in _fields()}), 0)
    assert [plain.depths(i) for i in range(len(counted))] == counted


def test_an_index_without_them_computes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_store, "MIN_JOB_BYTES", 0)
    paths = _ranks(tmp_path)
    counted = _counted(load_job_session(paths, str(tmp_path)).trace)
    wait_for_writes()
    meta = job_store.job_folder(paths, "clock") / "meta.json"
    doc = json.loads(meta.read_text())
    doc.pop("drawn_depths")  # as written before they were stored
    meta.write_text(json.dumps(doc))
    again = read_job(paths, "clock", str(tmp_path))
    assert again is not None and getattr(again.trace, "_drawn_depths", None) is None
    assert TimelineModel(again.trace).depths == counted
    assert np.all(np.asarray(counted) >= 1)


def _fields() -> list[str]:
    from dataclasses import fields

    return [f.name for f in fields(Trace) if f.init]
