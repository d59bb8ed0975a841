"""A job's first open in the app: its largest rank first, then the whole job.

Small synthetic ranks take the two-stage path with ``ATTN_TUI_JOB_PROGRESSIVE_MIN_BYTES=0``
(``profiling.analysis.job_progressive``); the Pilot tests are in
``tests/test_tui_job_progressive.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.job_index import THREADS_ENV
from profiling.analysis.job_progressive import MIN_BYTES_ENV, first_rank, ranks_in_job
from profiling.analysis.rank_breakdown import rank_breakdown
from tests.job_fixtures import Gpu, Step, rank_doc, write
from tui.job_progressive import header_of, pending, still_loading
from tui.job_session import job_of, load_job_session, open_targets

COLUMNS = ("ts_ns", "dur_ns", "name_id", "cat_id", "kind", "lane", "depth", "correlation",
           "external_id", "stream", "source_index")


def uneven_job(folder: Path, big: int = 2, ranks: int = 4) -> list[str]:
    """``ranks`` ranks on clocks 3 µs apart; rank ``big`` has twice the steps (the
    largest file), so it is the one shown first."""
    paths = []
    for r in range(ranks):
        steps = [Step(1000 + s * 2000, 2800 + s * 2000,
                      [Gpu("attn_kernel", 1010 + s * 2000, 400 + 10 * r),
                       Gpu("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
                           1500 + s * 2000, 200, stream=20)])
                 for s in range(6 if r == big else 3)]
        doc = rank_doc(r, ranks, steps, base_ns=1_000_000_000 + 3_000 * r)
        paths.append(write(folder / f"job.rank{r}.json", doc))
    return paths


@pytest.fixture
def progressive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MIN_BYTES_ENV, "0")  # small ranks count as parsed
    monkeypatch.delenv(THREADS_ENV, raising=False)


def test_first_rank_is_the_largest_and_only_when_two_would_be_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = uneven_job(tmp_path)
    assert first_rank(paths) is None  # small ranks, the default threshold: one stage
    monkeypatch.setenv(MIN_BYTES_ENV, "0")
    assert first_rank(paths) == 2
    assert first_rank(paths, use_index=False) is None  # --no-cache
    monkeypatch.setenv(THREADS_ENV, "1")
    assert first_rank(paths) is None
    monkeypatch.delenv(THREADS_ENV)
    (tmp_path / "same").mkdir()
    same = uneven_job(tmp_path / "same", big=-1)  # every rank alike: the lowest rank
    assert first_rank(same) == 0
    size = Path(paths[0]).stat().st_size
    monkeypatch.setenv(MIN_BYTES_ENV, str(Path(paths[2]).stat().st_size))
    assert size < Path(paths[2]).stat().st_size and first_rank(paths) is None  # one to parse


def _trace_rows(session) -> dict:
    t = session.trace
    return {
        "columns": {c: np.asarray(getattr(t, c)).tolist() for c in COLUMNS},
        "strings": [t.strings[i] for i in np.asarray(t.name_id).tolist()],
        "lanes": list(t.lanes),
        "groups": [(g.index, g.label, g.kind, list(g.lanes)) for g in t.groups],
        "ranks": [(r.rank, r.rows, r.lanes, r.groups, r.offset_ns) for r in session.job.ranks],
    }


def test_the_loader_gives_the_largest_rank_first_then_the_whole_job(
    tmp_path: Path, progressive: None
) -> None:
    paths = uneven_job(tmp_path)
    targets, load = open_targets(paths)
    seen: list[str] = []
    first = load(targets[0], lambda stage, fraction: seen.append(stage))
    rest = pending(first)
    assert rest is not None and rest.ranks == 4
    job = job_of(first)
    assert job is not None and [r.rank for r in job.ranks] == [2] and ranks_in_job(job) == 4
    assert {g.label.split(" · ")[0] for g in first.trace.groups} == {"rank 2"}
    assert header_of(job) == "rank 2 of 4 shown · loading 3 more ranks …"
    assert "still loading" in still_loading(first) and still_loading(first.trace)
    assert any("largest rank first" in s for s in seen)
    whole = rest.wait(timeout=120)
    assert pending(whole) is None and not still_loading(whole)
    assert [r.rank for r in whole.job.ranks] == [0, 1, 2, 3]
    # the same as an open in one stage (--no-cache parses every rank again)
    one_stage = load_job_session(paths, targets[0], no_cache=True)
    assert _trace_rows(whole) == _trace_rows(one_stage)
    assert rank_breakdown(whole.job) == rank_breakdown(one_stage.job)
    # the first rank's job is that rank alone, aligned as the whole job aligns it
    r2 = whole.job.ranks[2]
    lo, hi = r2.rows
    assert np.array_equal(whole.trace.ts_ns[lo:hi], first.trace.ts_ns)
    assert np.array_equal(whole.trace.dur_ns[lo:hi], first.trace.dur_ns)


def test_no_cache_threads_small_ranks_and_headless_open_in_one_stage(
    tmp_path: Path, progressive: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = uneven_job(tmp_path)
    targets, load = open_targets(paths)
    assert pending(load(targets[0], no_cache=True)) is None  # --no-cache
    monkeypatch.setenv(THREADS_ENV, "1")
    assert pending(load(targets[0])) is None
    monkeypatch.delenv(THREADS_ENV)
    monkeypatch.delenv(MIN_BYTES_ENV)
    assert pending(load(targets[0])) is None  # small ranks: below the process threshold
    assert pending(load_job_session(paths, targets[0])) is None  # headless: never
    monkeypatch.setenv(MIN_BYTES_ENV, "0")
    _, whole_at_once = open_targets(paths, progressive=False)  # tui.screenshot
    assert pending(whole_at_once(targets[0])) is None


def test_a_reopen_maps_the_stored_job_in_one_stage(
    tmp_path: Path, progressive: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from profiling.analysis import job_store

    monkeypatch.setattr(job_store, "MIN_JOB_BYTES", 0)  # small jobs are stored too
    paths = uneven_job(tmp_path)
    targets, load = open_targets(paths)
    first = load(targets[0])
    rest = pending(first)
    assert rest is not None
    whole = rest.wait(timeout=120)
    job_store.wait_for_writes()
    again = load(targets[0])
    assert pending(again) is None and list(again.timings) == ["job index"]  # nothing parsed
    assert _trace_rows(again) == _trace_rows(whole)


def test_the_rest_failing_leaves_the_first_rank(tmp_path: Path, progressive: None) -> None:
    paths = uneven_job(tmp_path)
    targets, load = open_targets(paths)
    first = load(targets[0])
    for k in (0, 1, 3):  # the others cut short after the first rank was read
        Path(paths[k]).write_text('{"traceEvents": [')
    rest = pending(first)
    assert rest is not None
    with pytest.raises(Exception):  # noqa: B017 - whatever the load raises, handed on
        rest.wait(timeout=120)
    assert rest.future.exception() is not None
    assert [r.rank for r in job_of(first).ranks] == [2]  # still usable


def test_the_swap_keeps_the_window_and_selection_where_the_rank_moved(
    tmp_path: Path, progressive: None
) -> None:
    from tui.first_screen import new_model
    from tui.widgets.job_rest import keep_place

    paths = uneven_job(tmp_path)
    targets, load = open_targets(paths, "step")  # each rank's first step: rank 2 moves
    first = load(targets[0])
    rest = pending(first)
    assert rest is not None
    whole = rest.wait(timeout=120)
    part_rank, whole_rank = first.job.ranks[0], whole.job.ranks[2]
    shift = whole_rank.offset_ns - part_rank.offset_ns
    assert shift == -6_000  # rank 2's clock is 6 µs ahead of rank 0's, whose step leads
    old, new = new_model(first), new_model(whole)
    kernel = next(i for i in range(len(old.trace)) if old.trace.name(i) == "attn_kernel")
    old.select(kernel)
    t0 = int(old.trace.ts_ns[kernel]) - 1_000
    old.viewport.show(t0 - old.origin, t0 + 50_000 - old.origin, margin=0.0)
    keep_place(first.job, whole.job)(old, new)
    assert new.origin + new.viewport.start == pytest.approx(t0 + shift)
    assert new.viewport.span == pytest.approx(old.viewport.span)
    assert new.selected == kernel + whole_rank.rows[0]
    assert int(new.trace.ts_ns[new.selected]) == int(old.trace.ts_ns[kernel]) + shift


def test_the_other_ranks_parse_once_the_first_has_decoded_at_the_lowest_priority(
    tmp_path: Path, progressive: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import tui.job_progressive as jp

    paths = uneven_job(tmp_path)
    calls: list[tuple[list[str], dict[str, object]]] = []
    started, gate = threading.Event(), threading.Event()

    def parse_others(others: list[str], **kwargs: object) -> int:
        calls.append((list(others), kwargs))
        started.set()
        gate.wait(60)  # the other ranks "still parsing" until the test says
        return 0

    at_load: list[tuple[bool, bool]] = []  # (started when the load began, when it ended)

    def load_trace(path: str, **kwargs: object):  # noqa: ANN202
        began = started.is_set()
        trace = real_load(path, **kwargs)
        at_load.append((began, started.wait(60)))
        return trace

    real_load = jp.load_trace
    monkeypatch.setattr(jp, "index_in_processes", parse_others)
    monkeypatch.setattr(jp, "load_trace", load_trace)
    targets, load = open_targets(paths)
    first = load(targets[0])
    rest = pending(first)
    assert rest is not None
    assert calls == [([paths[0], paths[1], paths[3]],
                      {"min_bytes": 0, "niceness": jp.REST_NICENESS, "min_ranks": 1})]
    # not while the first rank decodes; from its column build on (its "build" stage)
    assert at_load == [(False, True)]
    rest.start()
    with pytest.raises(TimeoutError):  # the whole job waits for the other ranks' parse
        rest.future.result(timeout=0.5)
    gate.set()
    whole = rest.wait(timeout=120)
    assert [r.rank for r in whole.job.ranks] == [0, 1, 2, 3]


def _niceness_after(steps: int) -> int:
    """In a child process: its niceness after ``job_index.lower_priority(steps)``."""
    import os

    from profiling.analysis.job_index import lower_priority

    before = os.nice(0)
    lower_priority(steps)
    return os.nice(0) - before


def test_lower_priority_makes_the_process_nicer() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(_niceness_after, 5).result(timeout=120) == 5
        assert pool.submit(_niceness_after, 0).result(timeout=120) == 0
