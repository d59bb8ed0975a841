"""``attn-tui sql``: the views give the numbers ``stats``, ``kernels`` and ``table`` print.

Every figure is read twice on every sample trace, once through the command that
prints it (its ``--json``) and once through DuckDB, and the two must agree: the
views are built from the same analysis, so any difference is a bug in the views.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SAMPLE_TRACES
from tui.cli import main

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

SAMPLES = sorted(str(p) for p in SAMPLE_TRACES.glob("*.json.gz"))


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def sql(capsys: pytest.CaptureFixture[str], paths: list[str], query: str) -> list[dict]:
    return run_json(capsys, "sql", *paths, query, "--json")


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: Path(p).name)
def test_kernels_view_equals_kernels_json(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    for region in ("attn_fwd", "ProfilerStep*"):
        want = run_json(capsys, "kernels", path, "--region", region, "--json")
        rows = sql(capsys, [path], "SELECT * FROM kernels WHERE region_group = "
                   f"'{region}' ORDER BY region, instance, seq")
        got: dict[tuple[str, int], list[dict]] = {}
        for r in rows:
            got.setdefault((r["region"], r["instance"]), []).append(r)
        assert sorted(got) == sorted((i["region"], i["instance"]) for i in want)
        assert sum(len(i["kernels"]) for i in want) == len(rows) > 0
        for inst in want:
            mine = got[(inst["region"], inst["instance"])]
            for k, r in zip(inst["kernels"], mine, strict=True):
                for field in ("name", "kind", "start_offset_us", "dur_us", "stream",
                              "launched_by", "attribution", "launch_chain"):
                    assert r[field] == k[field], (inst["region"], inst["instance"], field)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: Path(p).name)
def test_regions_view_equals_kernels_and_stats(path: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    want = run_json(capsys, "kernels", path, "--region", "attn_fwd", "--json")
    rows = sql(capsys, [path], "SELECT * FROM regions WHERE region_group = 'attn_fwd' "
               "ORDER BY instance")
    assert [(r["instance"], r["start_us"], r["cpu_time_us"], r["device_time_us"])
            for r in rows] == [(i["instance"], i["start_us"], i["cpu_time_us"],
                                i["device_time_us"]) for i in want]
    stats = run_json(capsys, "stats", path, "--json")
    summary = sql(capsys, [path], """
        SELECT region_group, count(*) AS instances, avg(cpu_time_us) AS cpu,
               avg(device_time_us) AS dev, avg(kernels) AS k, avg(memcpys) AS c,
               avg(memsets) AS s
        FROM regions WHERE row IN (SELECT row FROM events WHERE kind = 'user_annotation'
                                   OR name LIKE 'ProfilerStep#%')
        GROUP BY region_group""")
    by_name = {r["region_group"]: r for r in summary}
    assert set(by_name) == set(stats["regions"])
    for name, s in stats["regions"].items():
        r = by_name[name]
        assert r["instances"] == s["instances"]
        assert r["cpu"] == pytest.approx(s["cpu_time_avg_us"], rel=1e-12)
        assert r["dev"] == pytest.approx(s["device_time_avg_us"], rel=1e-12)
        assert (r["k"], r["c"], r["s"]) == pytest.approx(
            (s["kernels_per_instance"], s["memcpy_per_instance"], s["memset_per_instance"]))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: Path(p).name)
def test_ops_view_equals_table_json(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    want = run_json(capsys, "table", path, "--json")
    rows = sql(capsys, [path], "SELECT * EXCLUDE (trace, cpu_time, device_time) FROM ops")
    key = lambda r: (r["key"], r["device_type"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(want, key=key)
    totals = sql(capsys, [path], "SELECT sum(self_cpu_time_total) AS c, "
                 "sum(self_device_time_total) AS d FROM ops")[0]
    assert totals["c"] == pytest.approx(sum(r["self_cpu_time_total"] for r in want))
    assert totals["d"] == pytest.approx(sum(r["self_device_time_total"] for r in want))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: Path(p).name)
def test_events_lanes_copies_equal_stats(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    stats = run_json(capsys, "stats", path, "--json")
    t = sql(capsys, [path], "SELECT * FROM traces")[0]
    assert (t["events"], t["rows"], t["duration_us"]) == (
        stats["events"], stats["rows"], stats["duration_us"])
    n = sql(capsys, [path], "SELECT count(*) AS n, count(DISTINCT row) AS d, "
            "count(*) FILTER (WHERE kind IN ('kernel', 'memcpy', 'memset')) AS gpu FROM events")[0]
    assert n["n"] == n["d"] == stats["rows"]
    assert n["gpu"] == stats["gpu_events"]
    lanes = sql(capsys, [path], "SELECT kind, pid, tid, label, events FROM lanes ORDER BY lane")
    assert lanes == [{**lane, "pid": str(lane["pid"]), "tid": str(lane["tid"])}
                     for lane in stats["lanes"]]
    copies = sql(capsys, [path], "SELECT name, kind, count(*) AS count, sum(dur_ns) AS ns "
                 "FROM events WHERE kind IN ('memcpy', 'memset') GROUP BY name, kind")
    assert {c["name"]: (c["kind"], c["count"], c["ns"] / 1000.0) for c in copies} == {
        name: (c["kind"], c["count"], pytest.approx(c["total_us"]))
        for name, c in stats["copies"].items()}


def test_one_query_spans_files(capsys: pytest.CaptureFixture[str]) -> None:
    rows = sql(capsys, SAMPLES, "SELECT trace, count(*) AS n FROM events GROUP BY trace")
    assert sorted(r["trace"] for r in rows) == sorted(Path(p).name.split(".")[0]
                                                      for p in SAMPLES)
    for path in SAMPLES[:3]:
        stats = run_json(capsys, "stats", path, "--json")
        label = Path(path).name.split(".")[0]
        assert {r["trace"]: r["n"] for r in rows}[label] == stats["rows"]


def test_same_label_twice_is_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    rows = sql(capsys, [SAMPLES[0], SAMPLES[0]], "SELECT DISTINCT trace FROM traces ORDER BY 1")
    label = Path(SAMPLES[0]).name.split(".")[0]
    assert [r["trace"] for r in rows] == [label, f"{label}~2"]


def test_output_formats(capsys: pytest.CaptureFixture[str]) -> None:
    query = "SELECT trace, name, dur_us FROM kernels WHERE region = 'attn_fwd' ORDER BY ts_us"
    path = str(SAMPLE_TRACES / "sdpa_flash.json.gz")
    assert main(["sql", path, query, "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "trace,name,dur_us" and len(lines) == 4
    assert main(["sql", path, query, "--markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[1] == "|---|---|---:|" and md[2].endswith("| 96.928 |")
    assert main(["sql", path, query]) == 0
    out = capsys.readouterr().out
    assert "96.928" in out and "3 rows" in out


def test_the_table_shows_a_page_and_the_formats_every_row(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.commands import sql as sql_command

    monkeypatch.setattr(sql_command, "TABLE_ROWS", 4)
    query = "SELECT row FROM events ORDER BY row LIMIT 10"
    assert main(["sql", SAMPLES[0], query]) == 0
    out = capsys.readouterr().out
    assert "4+ rows (the first 4 shown: add a LIMIT" in out
    assert "    3  " in out and "    4  " not in out  # rows 0..3 only
    assert len(sql(capsys, [SAMPLES[0]], query)) == 10
    assert main(["sql", SAMPLES[0], "SELECT row FROM events ORDER BY row LIMIT 4"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("4 rows")


def test_the_formats_write_every_row_a_batch_at_a_time(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from profiling.sql.engine import TraceDB

    query = "SELECT row, name, ts_us FROM events ORDER BY row LIMIT 50"
    whole = TraceDB.batches
    outs = {}
    for size in (65_536, 7, 50):
        monkeypatch.setattr(TraceDB, "batches", lambda db, q, n=size: whole(db, q, n))
        for fmt in ("--json", "--csv", "--markdown"):
            assert main(["sql", SAMPLES[0], query, fmt]) == 0
            outs[size, fmt] = capsys.readouterr().out
    for fmt in ("--json", "--csv", "--markdown"):
        assert outs[7, fmt] == outs[50, fmt] == outs[65_536, fmt]
    assert [r["row"] for r in json.loads(outs[7, "--json"])] == list(range(50))
    assert outs[7, "--csv"].count("\n") == 51 and outs[7, "--markdown"].count("\n") == 52


def test_names_stay_data_in_the_table(write_trace: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_trace([{"ph": "X", "name": "[bold red]x\x1b[2J|", "cat": "cpu_op", "ts": 1,
                         "dur": 2, "pid": 1, "tid": 1}])
    assert main(["sql", str(path), "SELECT name FROM events", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "[bold red]x\\\\x1b[2J\\|" in out and "\x1b" not in out


@pytest.mark.parametrize(("query", "words"), [
    ("SELECT * FROM nope", "the views are: events"),
    ("SELEC 1", "syntax error"),
    ("SELECT no_such_column FROM events", "no_such_column"),
    ("   ", "the query is empty"),
])
def test_query_errors_are_one_line_exit_2(query: str, words: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", SAMPLES[0], query]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("attn-tui sql: ") and words in err.lower()


def test_missing_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb -> ImportError
    assert main(["sql", SAMPLES[0], "SELECT 1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install 'attn-tui[sql]'" in err and "duckdb" in err


def test_headless_import_needs_no_extra_nor_ui() -> None:
    code = ("import sys, profiling.sql.engine, profiling.sql.export, tui.commands.sql\n"
            "bad = {'duckdb', 'pyarrow', 'textual', 'torch'} & set(sys.modules)\n"
            "print(sorted(bad))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_events_columns_are_not_copied() -> None:
    from profiling.sql.tables import events_table
    from profiling.trace.loader import load_trace

    trace = load_trace(SAMPLES[0])
    table = events_table(trace)
    for name in ("ts_ns", "dur_ns", "lane", "correlation"):
        column = table.column(name).chunk(0)
        assert column.buffers()[1].address == getattr(trace, name).ctypes.data, name
    names = table.column("name").chunk(0)
    assert names.indices.buffers()[1].address == trace.name_id.ctypes.data


def test_query_from_stdin(monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("SELECT count(*) AS n\nFROM traces\n"))
    assert main(["sql", SAMPLES[0], "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 1}]


def test_an_empty_trace_has_empty_views(write_trace: Any, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    empty = str(write_trace([], name="empty.json"))
    for view in ("events", "kernels", "ops", "regions", "lanes"):
        assert sql(capsys, [empty], f"SELECT count(*) AS n FROM {view}") == [{"n": 0}], view
    assert main(["export", empty, "--parquet", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert sql(capsys, [str(tmp_path / "out")], "SELECT rows FROM traces") == [{"rows": 0}]


def test_bench_sql_runs_on_a_sample() -> None:
    """bench/bench_sql.py still runs (its figures are not asserted: they are timings)."""
    done = subprocess.run([sys.executable, "bench/bench_sql.py", SAMPLES[0]], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "first row of events" in done.stdout and "DuckDB adds" in done.stdout
