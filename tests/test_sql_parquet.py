"""``attn-tui export --parquet``: the views written as Parquet read back the same, and
``attn-tui sql DIR`` answers over several traces' exports as it does over the traces."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REAL_TRACES, SAMPLE_TRACES, needs_real_traces
from tui.cli import main

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

SAMPLES = sorted(str(p) for p in SAMPLE_TRACES.glob("*.json.gz"))
VIEWS = ("events", "kernels", "ops", "regions", "lanes", "traces")
DLRM = REAL_TRACES / "multi_rank" / "param_dlrm_8ranks"


def sql(capsys: pytest.CaptureFixture[str], inputs: list[str], query: str) -> list[dict]:
    assert main(["sql", *inputs, query, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def export(capsys: pytest.CaptureFixture[str], inputs: list[str], out: Path,
           *extra: str) -> int:
    code = main(["export", *inputs, "--parquet", str(out), *extra])
    capsys.readouterr()
    return code


def test_roundtrip_every_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "exp"
    assert export(capsys, SAMPLES[:3], out) == 0
    manifest = json.loads((out / "attn-tui-export.json").read_text())
    assert len(manifest["traces"]) == 3
    for entry in manifest["traces"].values():
        assert sorted(os.listdir(out / entry["folder"])) == sorted(f"{v}.parquet" for v in VIEWS)
    for view in VIEWS:
        query = f"SELECT * FROM {view} ORDER BY ALL"
        from_traces = sql(capsys, SAMPLES[:3], query)
        assert from_traces, view
        assert sql(capsys, [str(out)], query) == from_traces, view
    assert not [p for p in out.rglob(".*")], "a temp file was left behind"


def test_never_overwrites_without_force(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "exp"
    assert export(capsys, SAMPLES[:1], out) == 0
    events = next(out.glob("*/events.parquet"))
    before = events.stat().st_mtime_ns, events.read_bytes()
    assert main(["export", SAMPLES[0], "--parquet", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "would overwrite" in err and "--force" in err and "\n" not in err
    assert (events.stat().st_mtime_ns, events.read_bytes()) == before
    assert export(capsys, SAMPLES[:1], out, "--force") == 0
    # another trace goes beside it; the manifest keeps both
    assert export(capsys, SAMPLES[1:2], out) == 0
    assert len(json.loads((out / "attn-tui-export.json").read_text())["traces"]) == 2


def test_export_into_a_file_is_an_error(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["export", SAMPLES[0], "--parquet", str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_query_over_several_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One folder per export run, queried together and with a live trace beside them."""
    assert export(capsys, SAMPLES[:2], tmp_path / "a") == 0
    assert export(capsys, SAMPLES[2:4], tmp_path / "b") == 0
    query = ("SELECT trace, sum(dur_us) AS gpu_us, count(*) AS n FROM events "
             "WHERE kind IN ('kernel', 'memcpy', 'memset') GROUP BY trace ORDER BY trace")
    want = sql(capsys, SAMPLES[:5], query)
    got = sql(capsys, [str(tmp_path / "a"), str(tmp_path / "b"), SAMPLES[4]], query)
    assert got == want and len(got) == 5


def test_a_broken_manifest_is_one_line(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "attn-tui-export.json").write_text("{not json")
    assert main(["sql", str(tmp_path), "SELECT 1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "export manifest" in err and "\n" not in err


def _rank_totals(capsys: pytest.CaptureFixture[str], inputs: list[str]) -> dict[int, Any]:
    rows = sql(capsys, inputs, """
        SELECT t.rank, sum(e.dur_us) FILTER (WHERE e.kind = 'kernel') AS kernel_us,
               sum(e.dur_us) FILTER (WHERE e.kind = 'memcpy') AS memcpy_us,
               sum(e.dur_us) FILTER (WHERE e.kind = 'memset') AS memset_us,
               count(*) AS events
        FROM events e JOIN traces t USING (trace) GROUP BY t.rank ORDER BY t.rank""")
    return {r.pop("rank"): r for r in rows}


@needs_real_traces
@pytest.mark.real_traces
@pytest.mark.skipif(not DLRM.is_dir(), reason="the 8-rank DLRM job is absent")
def test_eight_ranks_export_and_per_rank_totals(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from profiling.trace.loader import load_trace
    from profiling.trace.model import Kind

    out = tmp_path / "job"
    assert export(capsys, [str(DLRM)], out) == 0
    totals = _rank_totals(capsys, [str(out)])
    assert sorted(totals) == list(range(8))
    assert _rank_totals(capsys, [str(DLRM)]) == totals
    for path in sorted(DLRM.iterdir()):
        trace = load_trace(str(path))
        rank = trace.metadata["distributedInfo"]["rank"]
        kernel = trace.kind == int(Kind.KERNEL)
        assert totals[rank]["events"] == len(trace)
        assert totals[rank]["kernel_us"] == pytest.approx(trace.dur_ns[kernel].sum() / 1000.0)
    try:
        import tui.commands.ranks  # noqa: F401  (issue 14: compare when it is there)
    except ImportError:
        return
    assert main(["ranks", str(DLRM), "--json"]) == 0
    ranks = json.loads(capsys.readouterr().out)
    unions = {(r["rank"], r["what"]): r["union_us"] for r in sql(capsys, [str(out)], UNIONS)}
    assert len(ranks) == 8
    for r in ranks:
        for what in ("comm", "compute", "memcpy", "memset"):
            assert unions.get((r["rank"], what), 0.0) == pytest.approx(r[f"{what}_us"]), what


UNIONS = """
WITH g AS (
  SELECT trace, ts_ns AS s, ts_ns + dur_ns AS e,
         CASE WHEN kind = 'kernel' AND (name ILIKE '%nccl%' OR name ILIKE '%rccl%') THEN 'comm'
              WHEN kind = 'kernel' THEN 'compute' ELSE kind END AS what
  FROM events WHERE kind IN ('kernel', 'memcpy', 'memset')),
w AS (
  SELECT *, max(e) OVER (PARTITION BY trace, what ORDER BY s, e
                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
  FROM g),
i AS (
  SELECT *, sum(CASE WHEN before IS NULL OR s > before THEN 1 ELSE 0 END)
              OVER (PARTITION BY trace, what ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
  FROM w),
spans AS (SELECT trace, what, island, max(e) - min(s) AS ns FROM i GROUP BY ALL)
SELECT t.rank, what, sum(ns) / 1000.0 AS union_us
FROM spans JOIN traces t USING (trace) GROUP BY ALL ORDER BY ALL
"""
"""Per rank, the union of its communication kernels, other kernels, copies and sets:
what ``ranks`` reports as ``comm_us``, ``compute_us``, ``memcpy_us``, ``memset_us``."""


def test_a_trace_beside_its_own_export_gets_its_own_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export(capsys, SAMPLES[:1], tmp_path / "a") == 0
    rows = sql(capsys, [str(tmp_path / "a"), SAMPLES[0]],
               "SELECT trace, count(*) AS n FROM events GROUP BY trace ORDER BY trace")
    label = Path(SAMPLES[0]).name.split(".")[0]
    assert [r["trace"] for r in rows] == [label, f"{label}~2"]
    assert rows[0]["n"] == rows[1]["n"]


def test_export_without_a_folder_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", SAMPLES[0]]) == 2
    err = capsys.readouterr().err.strip()
    assert "--parquet DIR" in err and "\n" not in err
