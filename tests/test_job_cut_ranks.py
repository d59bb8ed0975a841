"""Rank files cut mid-write, as a killed profiler leaves them, in a job.

Kineto writes ``distributedInfo`` first and ``baseTimeNanoseconds`` last, after the
events, and newer Kineto's ``ts`` count from that base.  A rank cut before its end
so has relative ``ts`` and no base: read as wall-clock times it sat 56 years before
the other ranks, and ``ranks`` gave it a collective wait of 7e15 µs.  It is now
placed by its first ProfilerStep (else its first event) and the header says so.

A gzip rank cut short whose whole text is under the sniff's 256 KiB was seen as not
a trace (``GzipFile.read`` raised EOFError) and left out of a folder's job without
a word; it now stays in the job, with the loader's "cut short" warning.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from profiling.analysis.job import lost_bases, offsets_of
from profiling.analysis.job_align import realign
from profiling.analysis.job_merge import load_job
from profiling.trace import load_trace
from profiling.trace.gzip_head import gzip_head
from tests.job_fixtures import Gpu, Step, rank_doc
from tui.cli import main

BASE = 1_764_000_000_000_000_000  # newer Kineto: epoch ns of the profiler's start
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def _kineto_bytes(rank: int, world: int, base: int) -> bytes:
    """A rank as newer Kineto orders it: distributedInfo, events, then the base."""
    steps = [Step(t, t + 900, [Gpu("gemm", t + 20, 300),
                               Gpu(NCCL, t + 400, 200, stream=20)])
             for t in (1000, 2000, 3000)]
    doc = rank_doc(rank, world, steps)
    ordered = {"schemaVersion": 1, "distributedInfo": doc.pop("distributedInfo"),
               "traceEvents": doc.pop("traceEvents"), "baseTimeNanoseconds": base}
    return json.dumps(ordered).encode()


def _job(folder: Path, cut: int, *, gz: bool = False) -> list[Path]:
    folder.mkdir()
    paths = []
    for r in range(3):
        data = _kineto_bytes(r, 3, BASE + 1_000 * r)  # hosts' clocks 1 µs apart
        path = folder / f"trace_rank{r}.json"
        if gz:
            data = gzip.compress(data)
            path = path.with_name(path.name + ".gz")
        if r == cut:
            data = data[: len(data) * 7 // 10]
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.mark.parametrize("align", ["clock", "step"])
def test_a_rank_cut_before_its_base_is_placed_by_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    align: str,
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    _job(tmp_path / "job", cut=1)
    for _ in range(2):  # first open, then the stored job
        assert main(["ranks", str(tmp_path / "job"), "--align", align, "--json"]) == 0
        ranks = json.loads(capsys.readouterr().out)
        assert [r["rank"] for r in ranks] == [0, 1, 2]
        # its first step starts where rank 0's does: rank 0's base, not 0
        assert ranks[1]["offset_ns"] == BASE
        assert all(0 <= r["collective_wait_us"] < 1000 for r in ranks), ranks
    assert main(["ranks", str(tmp_path / "job"), "--align", align]) == 0
    out, err = capsys.readouterr()
    assert "rank 1: file cut short" in err
    if align == "clock":
        assert "1 rank without baseTimeNanoseconds, a file cut short" in out.splitlines()[0]


def test_realigning_keeps_a_cut_rank_placed(tmp_path: Path) -> None:
    paths = [str(p) for p in _job(tmp_path / "job", cut=2)]
    job = load_job(paths, lambda p: load_trace(p, min_cache_bytes=1 << 40), "step")
    back = realign(job, "clock")
    assert [r.offset_ns for r in back.ranks] == [BASE, BASE + 1_000, BASE]
    assert "without baseTimeNanoseconds" in back.alignment_note
    again = load_job(paths, lambda p: load_trace(p, min_cache_bytes=1 << 40), "clock")
    assert [r.offset_ns for r in again.ranks] == [r.offset_ns for r in back.ranks]


def test_lost_bases_rule() -> None:
    wall = 1_700_000_000_000_000_000
    # older Kineto: epoch ts and no base anywhere; nothing lost
    assert lost_bases([0, 0], [wall, wall + 5]) == []
    # a rank without a base whose ts are epoch times is on the wall clock already
    assert lost_bases([wall, 0], [10, wall + 7]) == []
    # relative ts and no base, beside a rank on the wall clock: lost
    assert lost_bases([wall, 0, wall + 3], [10, 12, 11]) == [1]
    # bases that put no rank on the wall clock (hand-made traces): nothing to place
    assert lost_bases([5_000, 0], [150, 100]) == []
    # no step on the lost rank: its first event meets the earliest first event
    offsets, note = offsets_of([wall, 0], [], "clock", [10, 40])
    assert offsets == [wall, wall - 30] and "first event" in note


def test_a_cut_gzip_rank_stays_in_its_folders_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    _job(tmp_path / "job", cut=0, gz=True)
    assert main(["ranks", str(tmp_path / "job"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [r["rank"] for r in json.loads(out)] == [0, 1, 2]
    assert "rank 0: file cut short" in err


def test_gzip_head_reads_what_a_cut_stream_holds() -> None:
    text = b'{"traceEvents": [' + b'{"ph": "X"}, ' * 5000
    whole = gzip.compress(text)
    assert gzip_head(io.BytesIO(whole), 100) == text[:100]
    cut = whole[: len(whole) // 2]
    head = gzip_head(io.BytesIO(cut), 1 << 20)
    assert 0 < len(head) < len(text) and text.startswith(head)
    two = gzip.compress(b"ab") + gzip.compress(b"cd")  # members, as `cat a.gz b.gz`
    assert gzip_head(io.BytesIO(two), 10) == b"abcd"
