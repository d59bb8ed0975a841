"""Jobs of several ranks: detection, clock alignment, the merged trace, the breakdown
(against a brute-force interval count), collectives, stragglers and ``attn-tui ranks``."""

from __future__ import annotations

import json
import multiprocessing
import random
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.collectives import match_collectives, wait_by_rank
from profiling.analysis.job import group_paths, sniff_rank
from profiling.analysis.job_merge import ID_STRIDE, load_job
from profiling.analysis.job_report import job_report
from profiling.analysis.rank_breakdown import gpu_breakdown, union_length
from profiling.trace import load_trace
from profiling.trace.model import Kind
from tests.job_fixtures import Gpu, Step, rank_doc, straggler_job, write
from tui.cli import main
from tui.job_session import open_targets

REAL = Path(__file__).resolve().parents[2] / "shared" / "real_traces"
DLRM = REAL / "multi_rank" / "param_dlrm_8ranks"


def _load(path: str):
    return load_trace(path, use_cache=False)


# ---- detection ----

def test_job_detection_groups_ranks_and_leaves_the_rest(tmp_path: Path) -> None:
    step = [Step(0, 100, [Gpu("k", 10, 5)])]
    ranks = [write(tmp_path / f"w{r}.json", rank_doc(r, 4, step)) for r in (2, 0, 3, 1)]
    plain = write(tmp_path / "plain.json", rank_doc(None, None, step))
    single = write(tmp_path / "single.json", rank_doc(0, 1, step))
    other_world = write(tmp_path / "other.json", rank_doc(0, 2, step))
    groups = group_paths([plain, *ranks, single, other_world])
    assert groups == [[plain], [ranks[1], ranks[3], ranks[0], ranks[2]], [single], [other_world]]
    assert sniff_rank(ranks[0]).rank == 2  # type: ignore[union-attr]


def test_duplicate_ranks_are_not_one_job(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    step = [Step(0, 100, [Gpu("k", 10, 5)])]
    a = write(tmp_path / "a.json", rank_doc(0, 2, step))
    b = write(tmp_path / "b.json", rank_doc(0, 2, step))
    assert group_paths([a, b]) == [[a], [b]]
    assert main(["ranks", a, b]) == 2
    assert "rank 0 more than once" in capsys.readouterr().err
    c = write(tmp_path / "c.json", rank_doc(None, None, step))
    assert main(["ranks", a, c]) == 2
    assert "1 of them has no rank in distributedInfo" in capsys.readouterr().err


# ---- alignment and the merged trace ----

def _two_ranks(tmp_path: Path) -> list[str]:
    # Same local times; rank 1's clock base is 5 ms later, its first step 40 µs later.
    s0 = [Step(100, 300, [Gpu("k0", 150, 50)]), Step(300, 500, [Gpu("k1", 350, 50)])]
    s1 = [Step(140, 340, [Gpu("k0", 190, 50)]), Step(340, 540, [Gpu("k1", 390, 50)])]
    return [write(tmp_path / "r0.json", rank_doc(0, 2, s0, base_ns=1_000_000_000)),
            write(tmp_path / "r1.json", rank_doc(1, 2, s1, base_ns=1_005_000_000))]


def test_clock_alignment_adds_each_rank_base(tmp_path: Path) -> None:
    job = load_job(_two_ranks(tmp_path), _load, "clock")
    t = job.trace
    assert [r.offset_ns for r in job.ranks] == [1_000_000_000, 1_005_000_000]
    k0 = [int(t.ts_ns[i]) for i in range(len(t)) if t.name(i) == "k0"]
    assert k0 == [1_000_000_000 + 150_000, 1_005_000_000 + 190_000]
    assert "baseTimeNanoseconds" in job.header()


def test_step_alignment_starts_first_steps_together(tmp_path: Path) -> None:
    job = load_job(_two_ranks(tmp_path), _load, "step")
    t = job.trace
    steps = [int(t.ts_ns[i]) for i in range(len(t)) if t.name(i) == "ProfilerStep#1"]
    assert steps[0] == steps[1] == 1_000_000_000 + 100_000
    assert "first ProfilerStep" in job.header()


def test_merged_trace_keeps_links_within_each_rank(tmp_path: Path) -> None:
    job = load_job(_two_ranks(tmp_path), _load)
    t = job.trace
    assert [g.label for g in t.groups if g.kind == "gpu"] == ["rank 0 · GPU 0", "rank 1 · GPU 1"]
    a = AnalysedTrace(t)
    gpu = a.links.gpu_rows
    assert gpu.shape[0] == 4 and a.links.orphans.shape[0] == 0
    for row in gpu.tolist():
        assert job.rank_of_row(row) is job.rank_of_row(int(a.links.launch[row]))
    corr = t.correlation[gpu]
    assert sorted((corr // ID_STRIDE).tolist()) == [0, 0, 1, 1]
    # args come from each rank's own file
    assert [t.args(r)["device"] for r in sorted(gpu.tolist())] == [0, 0, 1, 1]


# ---- the breakdown against brute force ----

def _brute(intervals: list[tuple[int, int]]) -> set[int]:
    """Every microsecond tick covered, written plainly."""
    covered: set[int] = set()
    for lo, hi in intervals:
        covered.update(range(lo, hi))
    return covered


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_breakdown_matches_brute_force(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    names = ["gemm", "ncclKernel_AllReduce", "RCCL_sendrecv", "Memcpy HtoD", "Memset", "flash"]
    gpu = []
    for _ in range(60):
        name = rnd.choice(names)
        cat = ("gpu_memcpy" if name.startswith("Memcpy") else
               "gpu_memset" if name == "Memset" else "kernel")
        gpu.append(Gpu(name, rnd.randrange(0, 3000), rnd.randrange(1, 200),
                       stream=rnd.choice([7, 20, 21]), cat=cat))
    path = write(tmp_path / "r.json", rank_doc(0, 1, [Step(0, 4000, gpu)]))
    got = gpu_breakdown(_load(path))
    comm = _brute([(g.start, g.start + g.dur) for g in gpu
                   if g.cat == "kernel" and ("nccl" in g.name.lower() or "rccl" in g.name.lower())])
    compute = _brute([(g.start, g.start + g.dur) for g in gpu if g.cat == "kernel"
                      and not ("nccl" in g.name.lower() or "rccl" in g.name.lower())])
    every = _brute([(g.start, g.start + g.dur) for g in gpu])
    span = max(g.start + g.dur for g in gpu) - min(g.start for g in gpu)
    assert got["comm_us"] == len(comm)
    assert got["compute_us"] == len(compute)
    assert got["overlap_us"] == len(comm & compute)
    assert got["idle_us"] == span - len(every)
    assert got["span_us"] == span
    assert got["memcpy_us"] == len(_brute([(g.start, g.start + g.dur) for g in gpu
                                           if g.cat == "gpu_memcpy"]))
    assert got["memset_us"] == len(_brute([(g.start, g.start + g.dur) for g in gpu
                                           if g.cat == "gpu_memset"]))


def test_union_length_small_cases() -> None:
    s, e = np.array([0, 5, 2, 20]), np.array([3, 10, 4, 21])
    assert union_length(s, e) == 3 + 5 + 1 + 1
    assert union_length(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0
    assert union_length(np.array([0, 1]), np.array([10, 2])) == 10  # nested


# ---- collectives and stragglers ----

def test_straggler_found_with_evidence_and_waits(tmp_path: Path) -> None:
    job = load_job(straggler_job(tmp_path, slow=2), _load)
    report = job_report(job)
    waits = wait_by_rank(job, report.collectives)
    assert len(report.collectives) == 3
    assert waits == [3 * 200_000, 3 * 200_000, 0, 3 * 200_000]
    steps = [s for s in report.stragglers if s.kind == "step"]
    assert [s.slowest for s in steps] == [2, 2, 2]
    assert steps[0].excess_ns == 200_000
    attn = [s for s in report.stragglers if s.region == "attn_fwd"]
    assert [s.slowest for s in attn] == [2, 2, 2] and attn[0].excess_ns == 200_000
    found = {(f.region, f.title) for f in report.findings}
    assert ("ProfilerStep*", "rank 2 is the slowest in 3 of 3 steps") in found
    assert ("attn_fwd", "rank 2 is the slowest in 3 of 3 attn_fwd instances") in found
    step_finding = next(f for f in report.findings if f.region == "ProfilerStep*")
    for e in step_finding.evidence:
        assert job.rank_of_row(e.row).rank == 2 and e.name.startswith("ProfilerStep#")


def test_no_straggler_when_ranks_are_even(tmp_path: Path) -> None:
    job = load_job(straggler_job(tmp_path, slow=-1), _load)
    report = job_report(job)
    assert report.findings == []
    assert all(c.skew_ns == 0 for c in report.collectives)


def test_collectives_match_by_sequence_number_when_present(tmp_path: Path) -> None:
    paths = []
    for r in range(2):
        # rank 0's Seq 7 starts 50 µs early and runs until rank 1 arrives, as NCCL's does
        doc = rank_doc(r, 2, [Step(0, 500, [Gpu("ncclKernel_A", 10 + 50 * r, 70 - 50 * r),
                                            Gpu("ncclKernel_A", 200, 20)])])
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        seqs = [7, 8] if r == 0 else [8, 7]  # rank 1 lists them the other way round
        for e, seq in zip(kernels, seqs, strict=True):
            e["args"]["Seq"] = seq
        if r == 1:
            kernels[0]["ts"], kernels[1]["ts"] = 200, 60
        paths.append(write(tmp_path / f"s{r}.json", doc))
    job = load_job(paths, _load)
    found = {c.index: c for c in match_collectives(job)}
    assert set(found) == {7, 8} and all(c.by_seq for c in found.values())
    assert found[7].wait_ns == (50_000, 0)


# ---- the command ----

def test_ranks_json_lists_ranks_in_order(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    straggler_job(tmp_path, slow=1)
    assert main(["ranks", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in doc] == [0, 1, 2, 3]
    for r in doc:
        for key in ("path", "device", "span_us", "comm_us", "compute_us", "overlap_us",
                    "idle_us", "memcpy_us", "memset_us", "regions"):
            assert key in r
        assert list(r["regions"])[0] == "attn_fwd"  # attention regions first
    assert doc[1]["collective_wait_us"] == 0 and doc[0]["collective_wait_us"] == 600
    assert [r["slowest_in"] for r in doc] == [0, 6, 0, 0]  # 3 steps and 3 attn_fwd
    assert main(["ranks", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rank 1 is the slowest in 3 of 3 steps" in out


# ---- the real 8-rank job ----

@pytest.mark.skipif(not DLRM.is_dir(), reason="real traces not present")
def test_real_dlrm_job(capsys: pytest.CaptureFixture[str]) -> None:
    paths = sorted(str(p) for p in DLRM.glob("*.json"))
    assert group_paths(paths) == [paths]
    job = load_job(paths, _load)
    assert [r.rank for r in job.ranks] == list(range(8))
    a = AnalysedTrace(job.trace)
    singles = [_load(p) for p in paths]
    assert len(job.trace) == sum(len(t) for t in singles)
    assert a.links.orphans.shape[0] == sum(AnalysedTrace(t).links.orphans.shape[0]
                                           for t in singles)
    report = job_report(job, a)
    for row, single in zip(report.ranks, singles, strict=True):
        assert {k: row[k] for k in ("comm_us", "compute_us", "idle_us")} == \
            {k: gpu_breakdown(single)[k] for k in ("comm_us", "compute_us", "idle_us")}
        gpu = np.flatnonzero(np.isin(single.kind, [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET]))
        ticks = _brute(list(zip((single.ts_ns[gpu] // 1000).tolist(),
                                ((single.ts_ns[gpu] + single.dur_ns[gpu]) // 1000).tolist(),
                                strict=True)))
        assert row["span_us"] - row["idle_us"] == len(ticks)  # whole-µs trace: exact
        assert row["comm_us"] > 0 and row["device"] == f"GPU {row['rank']}"
    assert len(report.collectives) == 8
    assert all(-1 not in c.rows for c in report.collectives)
    assert main(["ranks", str(DLRM), "--json"]) == 0
    assert [r["rank"] for r in json.loads(capsys.readouterr().out)] == list(range(8))


def test_jobs_of_several_variants_in_one_folder(tmp_path: Path) -> None:
    step = [Step(0, 100, [Gpu("k", 10, 5)])]
    paths = [write(tmp_path / f"{v}.rank{r}.json", rank_doc(r, 2, step))
             for v in ("ring", "sdpa_cp") for r in (1, 0)]
    assert group_paths(paths) == [[paths[1], paths[0]], [paths[3], paths[2]]]
    targets, _ = open_targets(paths)
    assert targets == [str(tmp_path / "ring.rank*.json"), str(tmp_path / "sdpa_cp.rank*.json")]


def test_compare_on_a_job_lists_ranks_in_rank_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = [Step(0, 100, [Gpu("k", 10, 5)], region=("attn_fwd", 1, 50))]
    for name, rank in (("w1", 10), ("w2", 1), ("w10", 2)):  # name order gives 10, 1, 2
        write(tmp_path / f"{name}.json", rank_doc(rank, 16, step))
    assert main(["compare", str(tmp_path), "--json"]) == 0
    assert [c["rank"] for c in json.loads(capsys.readouterr().out)] == [1, 2, 10]


def test_time_bar_adds_up_to_the_span() -> None:
    from tui.ranks_data import bar_parts, time_bar

    row = {"span_us": 100.0, "comm_us": 30.0, "compute_us": 50.0, "overlap_us": 10.0,
           "idle_us": 25.0}
    assert bar_parts(row) == [40.0, 10.0, 20.0, 5.0, 25.0]
    bar = "".join(text for text, _ in time_bar(row, 200.0, 40))
    assert bar == "█" * 8 + "▓" * 2 + "▒" * 4 + "░" + "·" * 5


def test_gloo_collectives_are_host_ranges_and_count_in_busy(tmp_path: Path) -> None:
    paths = []
    for r in range(2):
        steps = [Step(1000 + 1000 * s, 1900 + 1000 * s) for s in range(2)]
        doc = rank_doc(r, 2, steps, backend="gloo")
        for s in range(2):
            t0 = 1000 + 1000 * s
            start = t0 + (300 if r == 1 else 100)  # rank 1 arrives 200 µs late
            doc["traceEvents"] += [
                {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce",
                 "pid": 100 + r, "tid": 2, "ts": start, "dur": t0 + 350 - start},
                {"ph": "X", "cat": "user_annotation", "name": "gloo:send",
                 "pid": 100 + r, "tid": 2, "ts": t0 + 400, "dur": 10},
            ]
        paths.append(write(tmp_path / f"g.rank{r}.json", doc))
    report = job_report(load_job(paths, _load))
    assert [c.name for c in report.collectives] == ["gloo:all_reduce"] * 2  # not send
    assert [r["collective_wait_us"] for r in report.ranks] == [400, 0]
    assert [r["device"] for r in report.ranks] == ["CPU", "CPU"]
    steps = [s for s in report.stragglers if s.kind == "step"]
    assert [s.values_ns for s in steps] == [(700_000, 900_000)] * 2
    assert {f.title for f in report.findings} == {"rank 1 is the slowest in 2 of 2 steps"}
    assert not [s for s in report.stragglers if s.region.startswith("gloo:")]


@pytest.mark.parametrize("command", ["stats", "table", "kernels", "slices"])
def test_one_trace_commands_on_a_job_folder_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    straggler_job(tmp_path)
    assert main([command, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds 4 traces" in err and "'ranks'" in err and len(err.splitlines()) == 1


def test_rank_read_from_the_tail_and_gzip_head(tmp_path: Path) -> None:
    import gzip

    steps = [Step(0, 100, [Gpu(f"k{i}_" + "x" * 200, 10, 5) for i in range(800)])]
    doc = rank_doc(None, None, steps)
    doc["distributedInfo"] = {"backend": "nccl", "rank": 5, "world_size": 8}  # after the events
    tail = write(tmp_path / "tail.json", doc)
    assert Path(tail).stat().st_size > 300_000
    info = sniff_rank(tail)
    assert info is not None and (info.rank, info.world_size) == (5, 8)
    head_doc = rank_doc(6, 8, [Step(0, 10, [Gpu("k", 1, 2)])])
    gz = tmp_path / "head.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(head_doc).encode()))
    assert sniff_rank(str(gz)).rank == 6  # type: ignore[union-attr]
    assert sniff_rank(str(tmp_path / "missing.json")) is None


def test_step_alignment_with_a_rank_without_steps(tmp_path: Path) -> None:
    s0 = [Step(100, 300, [Gpu("k0", 150, 50)])]
    r1 = rank_doc(1, 2, [Step(100, 300, [Gpu("k0", 150, 50)])], base_ns=5_000)
    r1["traceEvents"] = [e for e in r1["traceEvents"] if not e["name"].startswith("Profiler")]
    paths = [write(tmp_path / "a.json", rank_doc(0, 2, s0)), write(tmp_path / "b.json", r1)]
    job = load_job(paths, _load, "step")
    assert [r.offset_ns for r in job.ranks] == [0, 5_000]  # rank 1 falls back to its clock
    assert "1 ranks without one: by clock" in job.header()


def test_big_ranks_are_indexed_in_processes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from profiling.analysis.job_index import THREADS_ENV, has_index, index_in_processes, to_index
    from tui.job_session import load_job_session

    paths = []
    for r in range(2):  # about 5 MB each: over the index's minimum
        gpu = [Gpu(f"k{i}_" + "x" * 120, 10 + i, 5) for i in range(18_000)]
        paths.append(write(tmp_path / f"big.rank{r}.json", rank_doc(r, 2, [Step(0, 50_000, gpu)])))
    small = write(tmp_path / "small.json", rank_doc(0, 2, [Step(0, 10, [Gpu("k", 1, 2)])]))
    assert to_index([*paths, small], min_bytes=0) == paths  # the small one: no index
    seen: list[tuple[int, int]] = []
    # children this process had already (a decoder pool an earlier test's loads left)
    before = set(multiprocessing.active_children())
    monkeypatch.setenv(THREADS_ENV, "1")  # asked for threads: no process, no index
    assert index_in_processes(paths, min_bytes=0) == 0 and not any(map(has_index, paths))
    monkeypatch.delenv(THREADS_ENV)
    assert index_in_processes(paths, lambda done, n: seen.append((done, n)), min_bytes=0) == 2
    assert seen == [(1, 2), (2, 2)] and all(has_index(p) for p in paths)
    # every rank's process has ended by the time it returns: none is left to shut down
    # (other children, e.g. an earlier test's decoder pool, are none of the job's)
    assert set(multiprocessing.active_children()) <= before
    assert index_in_processes(paths, min_bytes=0) == 0  # indexed already: nothing to do
    session = load_job_session(paths, str(tmp_path))
    assert session.job is not None and len(session.trace) == 2 * (18_000 * 2 + 1)


def test_collectives_of_two_process_groups_stay_apart(tmp_path: Path) -> None:
    paths = []
    for r in range(4):  # tensor-parallel groups {0, 1} and {2, 3}, no sequence numbers
        doc = rank_doc(r, 4, [Step(0, 900, [Gpu("ncclDevKernel_AllReduce(x)", 100 + 10 * r, 50),
                                            Gpu("ncclDevKernel_AllReduce(x)", 500 + r, 50)])])
        for e in doc["traceEvents"]:
            if e.get("cat") == "kernel":
                e["args"]["Process Group Name"] = "1" if r < 2 else "2"
                e["args"]["Process Group Ranks"] = "[0, 1]" if r < 2 else "[2, 3]"
        paths.append(write(tmp_path / f"tp.rank{r}.json", doc))
    found = match_collectives(load_job(paths, _load))
    assert len(found) == 4 and not any(c.by_seq for c in found)
    on = sorted(tuple(k for k, row in enumerate(c.rows) if row >= 0) for c in found)
    assert on == [(0, 1), (0, 1), (2, 3), (2, 3)]
    first = found[0]
    assert first.wait_ns[:2] == (10_000, 0) and first.name == "ncclDevKernel_AllReduce"


def test_a_rank_that_cannot_be_read_is_left_out(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    paths = straggler_job(tmp_path, ranks=3, slow=0)
    Path(paths[1]).write_text("this is not a trace")
    job = load_job(paths, _load)
    assert [r.rank for r in job.ranks] == [0, 2]
    assert job.trace.warnings[0].startswith(paths[1]) and "left out" in job.trace.warnings[0]
    assert main(["ranks", *paths, "--json"]) == 0
    assert [r["rank"] for r in json.loads(capsys.readouterr().out)] == [0, 2]
    Path(paths[2]).write_text("nor is this")
    assert main(["ranks", *paths]) == 2  # one rank left: the first failure, one line
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
