"""What a new user meets in the first hour when naming inputs (issue 12, item 4).

Capture folders, plain folders, and the oracles and manifest inside them given as
PATHs: traces are taken in manifest (or natural name) order, oracles and manifests
are told by content, and a PATH with no trace is one clear error line.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REAL_TRACES, SAMPLE_TRACES, real_trace_files
from tests.test_analysis_links import call, gpu, op
from tui import inputs
from tui.cli import main


def events() -> list[dict[str, Any]]:
    return [
        op("ProfilerStep#1", 0, 500, ext=1, cat="user_annotation"),
        op("attn_fwd", 10, 300, ext=2, cat="user_annotation"),
        op("aten::mm", 20, 100, ext=3),
        call("cudaLaunchKernel", 30, 5, corr=40, ext=3),
        gpu("gemm_kernel", 400, 20, corr=40, ext=3),
    ]


def write_json(path: Path, doc: Any, *, gz: bool = False) -> Path:
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


ORACLE_ROWS = [{"key": "aten::mm", "device_type": "CPU", "count": 3,
                "self_cpu_time_total": 1.0, "cpu_time_total": 2.0,
                "self_device_time_total": 0.0, "device_time_total": 0.0}]


@pytest.fixture
def capture_folder(tmp_path: Path) -> Path:
    """What ``capture --out`` writes: traces, their oracles, a manifest, in a folder
    whose manifest order (zeta, alpha) differs from name order."""
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("alpha", "zeta"):
        write_json(folder / f"{name}.json", {"traceEvents": events()})
        write_json(folder / f"{name}.key_averages.json", ORACLE_ROWS)
    write_json(folder / "manifest.json", {
        "tool": "attn-tui capture", "manifest_version": 1, "device": "cpu",
        "variants": {
            "zeta": {"status": "ok", "trace": "zeta.json"},
            "skipped_one": {"status": "skipped", "trace": None},
            "alpha": {"status": "ok", "trace": "alpha.json"},
        },
    })
    (folder / "CAPTURE.txt").write_text("variant status\n")
    return folder


# ---- 4: folders, oracles, manifests ----


def test_capture_folder_gives_its_traces_in_manifest_order(capture_folder: Path) -> None:
    said: list[str] = []
    got = inputs.resolve_paths([str(capture_folder)], said.append)
    assert [Path(p).name for p in got] == ["zeta.json", "alpha.json"]
    assert said == []  # the folder's oracles and manifest are expected there: no noise


def test_plain_folder_gives_its_traces_in_natural_name_order(tmp_path: Path) -> None:
    for n in (10, 2, 1):
        write_json(tmp_path / f"worker{n}.json", {"traceEvents": events()})
    write_json(tmp_path / "worker3.json.gz", {"traceEvents": events()}, gz=True)
    (tmp_path / "README.md").write_text("# not a trace\n")
    (tmp_path / "sub").mkdir()
    write_json(tmp_path / "sub" / "deeper.json", {"traceEvents": events()})
    got = [Path(p).name for p in inputs.resolve_paths([str(tmp_path)], print)]
    assert got == ["worker1.json", "worker2.json", "worker3.json.gz", "worker10.json"]


def test_globbed_capture_folder_skips_oracles_and_manifest_with_one_line_each(
    capture_folder: Path,
) -> None:
    said: list[str] = []
    paths = sorted(str(p) for p in capture_folder.glob("*.json"))
    got = inputs.resolve_paths(paths, said.append)
    assert [Path(p).name for p in got] == ["alpha.json", "zeta.json"]  # the order given
    assert len(said) == 3
    assert sum("key_averages output, not a trace" in s for s in said) == 2
    assert sum("capture manifest, not a trace" in s for s in said) == 1


def test_oracles_and_manifests_are_told_by_content_not_name(tmp_path: Path) -> None:
    oracle = write_json(tmp_path / "rows.json", ORACLE_ROWS)
    gz_oracle = write_json(tmp_path / "rows.json.gz", ORACLE_ROWS, gz=True)
    trace_named_like_oracle = write_json(tmp_path / "t.key_averages.json", events())
    manifest = write_json(tmp_path / "m.json", {"manifest_version": 1, "variants": {}})
    not_manifest = write_json(tmp_path / "manifest.json", {"traceEvents": events()})
    assert inputs.kind_of(str(oracle)) == inputs.ORACLE
    assert inputs.kind_of(str(gz_oracle)) == inputs.ORACLE
    assert inputs.kind_of(str(trace_named_like_oracle)) == inputs.TRACE
    assert inputs.kind_of(str(manifest)) == inputs.MANIFEST
    assert inputs.kind_of(str(not_manifest)) == inputs.TRACE


def test_sample_capture_folder_is_recognised() -> None:
    kinds = {p.name: inputs.kind_of(str(p)) for p in SAMPLE_TRACES.iterdir()}
    assert kinds["manifest.json"] == inputs.MANIFEST
    assert {k for n, k in kinds.items() if n.endswith(".key_averages.json")} == {inputs.ORACLE}
    assert {k for n, k in kinds.items() if n.endswith(".json.gz")} == {inputs.TRACE}
    manifest = json.loads((SAMPLE_TRACES / "manifest.json").read_text())
    expected = [v["trace"] for v in manifest["variants"].values() if v.get("trace")]
    assert [Path(p).name for p in inputs.folder_traces(str(SAMPLE_TRACES))] == expected


@pytest.mark.skipif(not REAL_TRACES.is_dir(), reason="../shared/real_traces is absent")
def test_no_real_trace_is_taken_for_an_oracle_or_manifest() -> None:
    for path in real_trace_files():
        assert inputs.kind_of(str(path)) == inputs.TRACE, path


@pytest.mark.parametrize("command", ["open", "stats", "table", "kernels", "compare", "findings"])
def test_oracle_or_manifest_named_alone_is_a_clear_error(
    capture_folder: Path, command: str, capsys
) -> None:
    oracle = capture_folder / "alpha.key_averages.json"
    assert main([command, str(oracle)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is torch's key_averages output, not a trace" in err
    assert str(capture_folder / "alpha.json") in err  # the trace it came from
    assert main([command, str(capture_folder / "manifest.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a capture manifest, not a trace" in err


@pytest.mark.parametrize("command", ["open", "stats", "compare"])
def test_folder_without_a_trace_is_an_error(tmp_path: Path, command: str, capsys) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    write_json(tmp_path / "x.key_averages.json", ORACLE_ROWS)
    assert main([command, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no trace in it" in err


def test_single_trace_commands_take_a_folder_of_one_and_refuse_several(
    tmp_path: Path, capture_folder: Path, capsys
) -> None:
    one = tmp_path / "one"
    one.mkdir()
    write_json(one / "only.json", {"traceEvents": events()})
    write_json(one / "only.key_averages.json", ORACLE_ROWS)
    assert main(["table", str(one), "--json"]) == 0
    assert any(r["key"] == "aten::mm" for r in json.loads(capsys.readouterr().out))
    assert main(["table", str(capture_folder), "--json"]) == 2
    err = capsys.readouterr().err
    assert "holds 2 traces" in err and "zeta.json" in err
