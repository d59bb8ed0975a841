"""The index of a trace is at most 0.3x its text (issue 13), and the id columns and
row indexes stored narrow (int32 where every value fits) read back exactly.

The index holds the columns and every analysis part the commands store; the sizes
are measured after all of them ran, as a user's index is after a session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import PARTS, AnalysedTrace
from profiling.trace import cache
from profiling.trace.loader import load_trace
from profiling.trace.model import NARROW_COLUMNS, NO_ID
from tests.conftest import REAL_TRACES

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_traces" / "naive.json.gz"
REAL = REAL_TRACES
LIMIT = 0.3


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(folder))
    monkeypatch.delenv("ATTN_TUI_CACHE", raising=False)
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    return folder


def _index_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _run_commands(path: Path) -> None:
    """Every command that stores analysis parts, as a user runs them (each process
    reopens the index the first one wrote)."""
    for command in ("stats", "kernels", "findings", "compare", "table", "slices"):
        done = subprocess.run([sys.executable, "-m", "tui.cli", command, "--json", str(path)],
                              cwd=ROOT, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]


def _ratio(path: Path, text_bytes: int) -> float:
    folders = cache.cache_dirs(path)
    folder = next(f for f in folders if (f / "meta.json").is_file())
    assert any(p.name.startswith("analysis-") for p in folder.iterdir())
    return _index_bytes(folder) / text_bytes


def test_the_index_of_a_sample_trace_is_at_most_0_3x_its_text(tmp_path: Path, user_cache: Path):
    """naive.json.gz repeated to 8 MB (bench/make_big_trace.py, as the 1 GB benchmark
    trace is made): past the size below which no index is written.  The index was
    0.35x before the id columns and row indexes were stored as int32."""
    big = tmp_path / "naive8.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_trace.py"), str(SAMPLE),
                    str(big), "--size-mb", "8"], check=True, capture_output=True)
    _run_commands(big)
    assert _ratio(big, big.stat().st_size) <= LIMIT


def test_the_index_of_a_gzip_sample_trace_is_at_most_0_3x_its_text(tmp_path: Path,
                                                                  user_cache: Path):
    """The same 8 MB trace gzipped: its index also keeps the text (``textblocks``), and
    the naive capture's short events make it the densest trace here (0.34x with zlib
    blocks, 0.29x with xz ones)."""
    import gzip

    plain = tmp_path / "naive8.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_trace.py"), str(SAMPLE),
                    str(plain), "--size-mb", "8"], check=True, capture_output=True)
    big = tmp_path / "naive8.json.gz"
    big.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=6))
    _run_commands(big)
    assert _ratio(big, plain.stat().st_size) <= LIMIT


@pytest.mark.parametrize("name", [
    "inference_attention/tracelens_h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "single_gpu/kineto_resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
    "non_nvidia/tracelens_mi300__resnet_act_checkpoint.json.gz",
])
def test_the_index_of_a_real_trace_is_at_most_0_3x_its_text(name: str, tmp_path: Path,
                                                             user_cache: Path):
    import gzip

    source = REAL / name
    if not source.is_file():
        pytest.skip("real traces not present")
    path = tmp_path / source.name  # a copy: the index is keyed by the file's identity
    path.write_bytes(source.read_bytes())
    _run_commands(path)
    with gzip.open(path, "rb") as f:
        text_bytes = len(f.read())
    assert _ratio(path, text_bytes) <= LIMIT


def _trace_text(ids: list[int]) -> bytes:
    """Launches and kernels carrying ``ids`` as correlation and External id, plus an
    op with no ids (NO_ID in both columns)."""
    events: list[dict[str, object]] = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
         "dur": 1000},
    ]
    for k, i in enumerate(ids):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": 1 + 10 * k, "dur": 2,
                       "args": {"correlation": i, "External id": i}})
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                       "ts": 5 + 10 * k, "dur": 3,
                       "args": {"correlation": i, "External id": i, "stream": 7, "device": 0}})
    return json.dumps({"traceEvents": events}).encode()


@pytest.mark.parametrize(("ids", "wide"), [
    ([1, 2, 2**31 - 1], ()),  # every id fits: all four columns int32
    ([1, 2**31, 5], ("correlation", "external_id")),  # one past int32: those stay int64
    ([1, -2**31 - 1, 5], ("correlation", "external_id")),  # and below it
])
def test_narrowed_columns_round_trip(ids: list[int], wide: tuple[str, ...], tmp_path: Path,
                                     user_cache: Path):
    path = tmp_path / "t.json"
    path.write_bytes(_trace_text(ids))
    parsed = load_trace(path, use_cache=False)
    first = load_trace(path, min_cache_bytes=0)
    reopened = load_trace(path, min_cache_bytes=0)
    assert isinstance(reopened.correlation, np.memmap)  # mapped, not read into memory
    doc = json.loads(path.read_bytes())["traceEvents"]
    for name, narrow_dtype in NARROW_COLUMNS.items():
        want = np.int64 if name in wide else narrow_dtype
        for trace in (parsed, first, reopened):
            assert getattr(trace, name).dtype == want, name
        assert np.array_equal(getattr(parsed, name), getattr(reopened, name))
    # Exactly the file's values, the sentinel kept, row by row through source_index.
    for row in range(len(reopened)):
        args = doc[int(reopened.source_index[row])].get("args", {})
        assert int(reopened.correlation[row]) == args.get("correlation", NO_ID)
        assert int(reopened.external_id[row]) == args.get("External id", NO_ID)
    kernels = reopened.stream[reopened.stream != NO_ID]
    assert kernels.tolist() == [7] * len(ids)


def test_stored_row_indexes_round_trip_narrow(tmp_path: Path, user_cache: Path):
    """The links', op tree's and chains' row indexes come back from the store as
    int32, mapped, equal to the ones computed (int64), -1 where there is none."""
    path = tmp_path / "t.json"
    path.write_bytes(_trace_text([3, 4, 5]))
    computed = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    for name in PARTS:
        getattr(computed, name)
    stored = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    for part, fields in (("links", ("launch", "op", "gpu_rows", "by_launch")),
                         ("chains", ("ptr", "ops"))):
        for field in fields:
            got = getattr(getattr(stored, part), field)
            assert got.dtype == np.int32 and not got.flags.owndata, (part, field)
            assert np.array_equal(got, getattr(getattr(computed, part), field)), (part, field)
    assert (stored.links.launch == -1).any()
    for field in ("parent", "stop"):
        got = getattr(stored.ops.nesting, field)
        assert got.dtype == np.int32
        assert np.array_equal(got, getattr(computed.ops.nesting, field))
    assert stored.ops.rows.dtype == np.int64  # searched with np.searchsorted: kept wide
