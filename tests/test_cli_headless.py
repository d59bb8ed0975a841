"""The headless commands ``stats``, ``table`` and ``kernels`` end to end (tui.cli.main)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_TRACES, needs_real_traces, real_trace_files
from tests.test_analysis_links import call, gpu, op
from tui.cli import main

NASTY = "[bold red]boom[/] \x01\x1b[31m\"quoted\"\n\\ \u00e9\u4e2d"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(write_trace) -> Path:
    return write_trace([
        op("ProfilerStep#1", 0, 500, ext=1, cat="user_annotation"),
        op("attn_fwd", 10, 300, ext=2, cat="user_annotation"),
        op(NASTY, 20, 100, ext=3),
        call("cudaLaunchKernel", 30, 5, corr=40, ext=3),
        op("aten::copy_", 150, 50, ext=4),
        call("cudaMemcpyAsync", 160, 5, corr=41, ext=4),
        gpu(NASTY + " kernel", 400, 20, corr=40, ext=3),
        gpu("Memcpy HtoD (Pageable -> Device)", 430, 3, corr=41, ext=4, cat="gpu_memcpy"),
    ])


def test_table_json_rows_and_names_with_control_chars_and_markup(capsys, small):
    code, out, _ = run(capsys, "table", str(small), "--json")
    assert code == 0
    rows = json.loads(out)
    keys = {(r["key"], r["device_type"]) for r in rows}
    assert (NASTY, "CPU") in keys and (NASTY + " kernel", "CUDA") in keys
    assert set(rows[0]) == {"key", "device_type", "count", "self_cpu_time_total",
                            "cpu_time_total", "self_device_time_total", "device_time_total"}
    assert rows[0]["self_device_time_total"] == max(r["self_device_time_total"] for r in rows)


def test_table_text_is_torch_layout_and_names_are_not_markup(capsys, small):
    code, out, _ = run(capsys, "table", str(small), "--sort", "cpu_time_total")
    assert code == 0
    for header in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                   "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls"):
        assert header in out
    assert "[bold red]boom[/]" in out  # printed as text, not styled
    assert "Self CPU time total:" in out and "Self CUDA time total:" in out
    lines = out.splitlines()
    assert lines.index(next(x for x in lines if "ProfilerStep*" in x)) < lines.index(
        next(x for x in lines if "aten::copy_" in x))


def test_table_sort_accepts_torch_keys_and_limit(capsys, small):
    for key in ("self_cuda_time_total", "cuda_time_total", "cpu_time", "count",
                "self_device_time_total"):
        code, out, _ = run(capsys, "table", str(small), "--json", "--sort", key, "--limit", "2")
        assert code == 0 and len(json.loads(out)) == 2


def test_table_unknown_sort_key_is_one_clear_line(capsys, small):
    code, out, err = run(capsys, "table", str(small), "--sort", "flops")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "unknown sort key 'flops'" in err
    assert "self_cpu_time_total" in err


def test_kernels_json_and_text(capsys, small):
    code, out, _ = run(capsys, "kernels", str(small), "--json")
    assert code == 0
    (inst,) = json.loads(out)
    assert inst["region"] == "attn_fwd" and inst["instance"] == 0
    assert [k["kind"] for k in inst["kernels"]] == ["kernel", "memcpy"]
    assert inst["kernels"][0]["launched_by"] == NASTY
    assert inst["kernels"][1]["launched_by"] == "aten::copy_"
    code, out, _ = run(capsys, "kernels", str(small), "--region", "ProfilerStep#1")
    assert code == 0 and "Memcpy HtoD" in out and "[bold red]boom[/]" in out


def test_kernels_unknown_region_lists_the_regions_there_are(capsys, small):
    code, out, err = run(capsys, "kernels", str(small), "--region", "attn_bwd")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "no region named 'attn_bwd'" in err and "ProfilerStep*, attn_fwd" in err


def test_kernels_instance_out_of_range(capsys, small):
    code, _, err = run(capsys, "kernels", str(small), "--instance", "3")
    assert code == 2 and "no instance 3" in err and err.count("\n") == 1
    code, out, _ = run(capsys, "kernels", str(small), "--instance", "0", "--json")
    assert code == 0 and len(json.loads(out)) == 1


def test_stats_json_and_text(capsys, small):
    code, out, _ = run(capsys, "stats", str(small), "--json")
    assert code == 0
    stats = json.loads(out)
    assert stats["events"] == 8
    assert stats["regions"]["attn_fwd"]["memcpy_per_instance"] == 1.0
    assert stats["copies"]["Memcpy HtoD (Pageable -> Device)"]["launched_by"] == ["aten::copy_"]
    code, out, _ = run(capsys, "stats", str(small))
    assert code == 0 and "attn_fwd" in out and "Memcpy HtoD" in out


def test_table_text_shows_a_page_unless_limit_asks(capsys, write_trace, monkeypatch):
    from tui.commands import table as table_command

    path = write_trace([{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1,
                         "ts": 10 * i, "dur": 1} for i in range(5)])
    monkeypatch.setattr(table_command, "TABLE_ROWS", 2)
    code, out, _ = run(capsys, "table", str(path), "--no-cache")
    assert code == 0 and "(the first 2 of 5 rows shown" in out and "op2" not in out
    code, out, _ = run(capsys, "table", str(path), "--no-cache", "--limit", "4")
    assert code == 0 and "op3" in out and "rows shown" not in out


def test_stats_text_lists_the_busiest_lanes(capsys, write_trace, monkeypatch):
    from tui.commands import stats as stats_command

    events = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": tid, "ts": 10 * i,
               "dur": 1} for tid in range(1, 6) for i in range(tid)]  # thread t: t events
    path = write_trace(events)
    monkeypatch.setattr(stats_command, "LANE_ROWS", 2)
    code, out, _ = run(capsys, "stats", str(path), "--no-cache")
    assert code == 0 and "3 more lanes with 6 events (the 2 busiest shown" in out
    assert "thread 5" in out and "thread 4" in out and "thread 1 " not in out
    assert len(json.loads(run(capsys, "stats", str(path), "--json", "--no-cache")[1])["lanes"]) == 5


def test_missing_path_is_one_line(capsys, tmp_path):
    for command in ("stats", "table", "kernels"):
        code, out, err = run(capsys, command, str(tmp_path / "nope.json"))
        assert code == 2 and out == "" and err.count("\n") == 1


def _entries(path: Path) -> int | None:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        doc = json.loads(raw)
    except ValueError:
        return None  # the derived, deliberately broken files
    return len(doc["traceEvents"] if isinstance(doc, dict) else doc)


@needs_real_traces
@pytest.mark.real_traces
@pytest.mark.parametrize("path", real_trace_files(), ids=lambda p: p.name[:40])
def test_every_real_trace_through_stats_table_kernels(capsys, path):
    code, out, _ = run(capsys, "stats", str(path), "--json")
    assert code == 0
    stats = json.loads(out)
    expected = _entries(path)
    if expected is not None:
        assert stats["events"] == expected
    else:
        assert stats["warnings"]  # the loader says what it repaired
    assert run(capsys, "stats", str(path))[0] == 0
    code, out, _ = run(capsys, "table", str(path), "--json")
    assert code == 0 and json.loads(out)
    assert run(capsys, "table", str(path), "--limit", "20")[0] == 0
    names = list(stats["regions"])
    if names:
        code, out, _ = run(capsys, "kernels", str(path), "--region", names[0], "--json")
        assert code == 0 and len(json.loads(out)) == stats["regions"][names[0]]["instances"]
        assert run(capsys, "kernels", str(path), "--region", names[0], "--instance", "0")[0] == 0
    code, out, err = run(capsys, "kernels", str(path), "--json")  # no --region: chosen
    assert code == 0 and err.count("\n") == 1 and "no --region given" in err
    assert isinstance(json.loads(out), list)
    assert run(capsys, "kernels", str(path))[0] == 0


SAMPLES = SAMPLE_TRACES / "manifest.json"


@pytest.mark.skipif(not SAMPLES.exists(), reason="no sample_traces/manifest.json")
def test_naive_shows_one_memcpy_per_attn_fwd_with_its_op_and_inplace_none(capsys):
    variants = json.loads(SAMPLES.read_text())["variants"]
    for variant, memcpys in (("naive", 1), ("inplace", 0)):
        path = SAMPLE_TRACES / variants[variant]["trace"]
        code, out, _ = run(capsys, "kernels", str(path), "--region", "attn_fwd", "--json")
        assert code == 0
        instances = json.loads(out)
        assert instances
        for inst in instances:
            copies = [k for k in inst["kernels"] if k["kind"] == "memcpy"]
            assert len(copies) == memcpys, (variant, inst["instance"])
            assert all(k["launched_by"] for k in copies)
