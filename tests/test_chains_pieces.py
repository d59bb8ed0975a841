"""``launch_chains`` and ``instance_launches`` work in pieces on threads (each GPU
event's chain and each instance's launches are their own).  With pieces of one
event or a few instances, the joined tables must equal the ones built in one
piece, on every sample and real trace; ``shares`` must cut work evenly."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis import chains, nest_cuts
from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.chains import instance_launches, launch_chains
from profiling.trace import column_threads
from profiling.trace.column_threads import shares
from profiling.trace.loader import load_trace
from tests.test_nesting_vectorised import TRACES


def one_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(column_threads, "pieces", lambda: 1)


def many_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(column_threads, "pieces", lambda: 6)
    monkeypatch.setattr(chains, "PIECE_EVENTS", 1)
    monkeypatch.setattr(nest_cuts, "pieces", lambda: 6)
    monkeypatch.setattr(nest_cuts, "PIECE_MIN", 2)
    monkeypatch.setattr(column_threads, "MIN_ROWS", 0)


def tables(trace_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """Every chain table of the trace: all GPU events', a few rows', and each region's
    instances' launches."""
    a = AnalysedTrace(load_trace(trace_path))
    every = launch_chains(a.trace, a.links, a.ops)
    some = launch_chains(a.trace, a.links, a.ops, a.links.gpu_rows[::3])
    out = [every.gpu, every.ptr, every.ops, some.gpu, some.ptr, some.ops]
    for region in a.regions.names():
        batch = instance_launches(a.trace, a.links, every, a.instances(region))
        out += [batch.inst_ptr, batch.rows, batch.chain_ptr, batch.chain]
    return out


@pytest.mark.parametrize("path", TRACES, ids=lambda p: Path(p).name)
def test_pieces_join_into_the_whole(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        one_piece(m)
        want = tables(path, m)
    many_pieces(monkeypatch)
    got = tables(path, monkeypatch)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert np.array_equal(g, w)


def test_shares_cut_by_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(column_threads, "pieces", lambda: 4)
    weight = np.array([5, 0, 1, 1, 1, 1, 9, 0, 2, 4])
    bounds = shares(weight, 1)
    assert bounds[0] == 0 and bounds[-1] == weight.shape[0]
    assert bounds == sorted(set(bounds)) and len(bounds) <= 5
    parts = [int(weight[a:b].sum()) for a, b in zip(bounds, bounds[1:], strict=False)]
    assert sum(parts) == int(weight.sum())
    assert max(parts) <= int(weight.sum()) // 4 + int(weight.max())  # near an even share
    assert shares(weight, 12) == [0, 6, 10]  # two shares of 24: cut after a total of 12
    assert shares(weight, 13) == [0, weight.shape[0]]  # 24 holds one share of 13 only
    assert shares(weight, 100) == [0, weight.shape[0]]  # too little work to hand over
    assert shares(np.zeros(0, np.int64), 1) == [0, 0]
    monkeypatch.setattr(column_threads, "pieces", lambda: 1)
    assert shares(weight, 1) == [0, weight.shape[0]]


def test_pieces_only_with_cores_to_spare(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below ``PIECES_MIN_CORES`` the command and its warm-up use every core already."""
    for cores, want in ((1, 1), (2, 1), (3, 1), (4, 4), (16, column_threads.MAX_THREADS)):
        monkeypatch.setattr(column_threads, "usable_cores", lambda c=cores: c)
        assert column_threads.pieces() == want
        assert len(shares(np.ones(10**6, np.int8), 1)) == want + 1


def test_traces_analysed_at_once_with_pieces_and_beside(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 16-core path (pieces on the shared pool, the op nesting beside the links)
    with several traces analysed at once, as the TUI does: the same facts as one by one."""
    from profiling.analysis import analysed as analysed_module
    from profiling.analysis.compare import compare_traces
    from profiling.analysis.findings import trace_findings
    from profiling.analysis.stats import trace_stats

    paths = TRACES[:6]

    def facts(path: Path) -> str:
        a = AnalysedTrace(load_trace(path, use_cache=False))
        return repr((trace_stats(a), a.key_averages.rows, trace_findings(a),
                     compare_traces([a])))

    alone = [facts(p) for p in paths]
    many_pieces(monkeypatch)
    monkeypatch.setattr(analysed_module, "BESIDE_MIN_CORES", 1)
    got: dict[Path, str] = {}
    failed: list[BaseException] = []

    def run(path: Path) -> None:
        try:
            got[path] = facts(path)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    threads = [threading.Thread(target=run, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failed and not any(t.is_alive() for t in threads)
    assert [got[p] for p in paths] == alone
