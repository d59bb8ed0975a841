"""One file that merges a job's ranks (SGLang's ProfileMerger) opens as that job.

``profiling.analysis.job_split``: the file is cut into one trace per rank label and
merged back as a job, so ``ranks`` and the Ranks view give each rank's own figures,
not one row that mixes every GPU of the job.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from profiling.analysis.job_split import merged_file_job, rank_groups, rank_traces
from profiling.trace import load_trace
from tests.conftest import REAL_TRACES, cli_json, needs_real_traces
from tests.fixtures.sglang_merge import merged_like_sglang
from tests.job_fixtures import straggler_job, write
from tui.job_session import JobSession, open_targets


def _merged(tmp_path: Path, paths: list[str]) -> str:
    doc = merged_like_sglang([json.loads(Path(p).read_text()) for p in paths])
    return write(tmp_path / "merged-x.trace.json", doc)


def _without_path(objs: list[dict]) -> list[dict]:
    return [{k: v for k, v in o.items() if k != "path"} for o in objs]


def test_ranks_of_a_merged_file_are_the_folder_s(tmp_path):
    """Each rank's figures, its stragglers' counts and collective waits: as the same
    ranks give in their own files (a slow rank 2 of 4, whose peers wait)."""
    (tmp_path / "job").mkdir()
    paths = straggler_job(tmp_path / "job")
    merged = _merged(tmp_path, paths)
    got = cli_json("ranks", merged)
    assert [r["rank"] for r in got] == [0, 1, 2, 3]
    assert [r["device"] for r in got] == ["GPU 0", "GPU 1", "GPU 2", "GPU 3"]
    assert _without_path(got) == _without_path(cli_json("ranks", str(tmp_path / "job")))
    assert max(got, key=lambda r: r["slowest_in"])["rank"] == 2


def test_rank_traces_partition_the_rows_and_keep_each_event(tmp_path):
    """Every row goes to exactly one rank, sorted within it; a row's args (read through
    the job's entry offsets) are those of the same event in the file."""
    (tmp_path / "job").mkdir()
    trace = load_trace(_merged(tmp_path, straggler_job(tmp_path / "job", ranks=3)))
    groups = rank_groups(trace)
    assert groups is not None and len(groups) == 3
    parts = rank_traces(trace, groups)
    assert sum(len(p) for p in parts) == len(trace)
    seen = np.sort(np.concatenate([np.asarray(p.source_index) for p in parts]))
    assert np.array_equal(seen, np.sort(np.asarray(trace.source_index)))
    for p in parts:
        key = p.lane.astype(np.int64) * (1 << 40) + p.ts_ns
        assert np.all(np.diff(key) >= 0)
        assert {str(g.pid).split()[0] for g in p.groups} == {str(p.groups[0].pid).split()[0]}
    job = merged_file_job(trace, trace.path)
    assert job is not None and len(job.trace) == len(trace)
    by_entry = {int(e): r for r, e in enumerate(np.asarray(trace.source_index).tolist())}
    kernels = np.flatnonzero(np.asarray(job.trace.correlation) >= 0)[:20]
    for row in kernels.tolist():
        rank = job.rank_of_row(row)
        entry = int(job.trace.source_index[row]) - rank.entries[0]
        assert job.trace.args(row) == trace.args(by_entry[entry])


def test_one_rank_s_own_file_is_no_merged_job(tmp_path):
    (tmp_path / "job").mkdir()
    path = straggler_job(tmp_path / "job", ranks=2)[0]
    trace = load_trace(path)
    assert rank_groups(trace) is None and merged_file_job(trace, path) is None
    (one,) = cli_json("ranks", path)
    assert one["rank"] == 0


def test_the_app_opens_a_merged_file_as_a_job(tmp_path):
    (tmp_path / "job").mkdir()
    merged = _merged(tmp_path, straggler_job(tmp_path / "job", ranks=2))
    targets, load = open_targets([merged])
    assert targets == [merged]
    session = load(merged)
    assert isinstance(session, JobSession) and session.job is not None
    assert [r.rank for r in session.job.ranks] == [0, 1]
    assert "job: 2 ranks" in session.job.header()


@needs_real_traces
def test_the_dlrm_job_merged_into_one_file_reads_as_its_folder(tmp_path):
    folder = REAL_TRACES / "multi_rank" / "param_dlrm_8ranks"
    merged = _merged(tmp_path, sorted(str(p) for p in folder.glob("*.json")))
    got = cli_json("ranks", merged)
    assert len(got) == 8
    assert _without_path(got) == _without_path(cli_json("ranks", str(folder)))


def test_findings_on_a_merged_file_are_its_job_s(tmp_path):
    """As the app's Findings view of the job: the straggler findings, then each rank's,
    the same as on the ranks' own files."""
    (tmp_path / "job").mkdir()
    merged = _merged(tmp_path, straggler_job(tmp_path / "job"))
    got, folder = cli_json("findings", merged), cli_json("findings", str(tmp_path / "job"))
    assert got["job"]["ranks"] == [0, 1, 2, 3]
    assert [(f["rank"], f["title"]) for f in got["findings"]] == \
        [(f["rank"], f["title"]) for f in folder["findings"]]
    assert any(f["rank"] is None for f in got["findings"])  # about the whole job


def test_stats_on_a_merged_file_names_no_single_rank(tmp_path):
    """The file keeps its first rank's distributedInfo only: "rank 0 of 4" was false."""
    import subprocess
    import sys

    (tmp_path / "job").mkdir()
    merged = _merged(tmp_path, straggler_job(tmp_path / "job"))
    stats = cli_json("stats", merged)
    assert stats["rank"] is None and stats["world_size"] == 4
    assert cli_json("stats", str(tmp_path / "job" / "job.rank2.json"))["rank"] == 2
    out = subprocess.run([sys.executable, "-m", "tui.cli", "stats", merged], text=True,
                         capture_output=True, check=True).stdout
    assert "4 ranks merged in one file" in out.splitlines()[0]


def test_compare_on_a_merged_file_compares_its_ranks(tmp_path):
    """As ``compare DIR`` on the job's folder, each rank labelled ``<file> · rank K``."""
    (tmp_path / "job").mkdir()
    merged = _merged(tmp_path, straggler_job(tmp_path / "job"))
    got, folder = cli_json("compare", merged), cli_json("compare", str(tmp_path / "job"))
    assert [c["label"] for c in got] == [f"merged-x.trace · rank {k}" for k in range(4)]

    def numbers(items: list[dict]) -> list[dict]:
        return [{k: v for k, v in c.items() if k not in ("path", "label")} for c in items]

    assert numbers(got) == numbers(folder)
