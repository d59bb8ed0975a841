"""The bad-input corpus through ``load_trace``: every case either loads (what was
repaired or skipped is named in the trace's warnings) or raises one ``TraceError``
line that names the file; the input file is byte-identical and keeps its mtime.
Also: lazily read args once the file changed under a loaded trace.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from profiling.errors import TraceError
from profiling.trace import load_trace
from tests.fixtures.bad_inputs import CASE, ERROR, EVENTS, LOADS, Case, _rows, doc, fingerprint


def assert_outcome(case: Case, path: Path) -> None:
    """load_trace gives the case's outcome; the file is untouched."""
    before = fingerprint(path)
    if case.outcome == ERROR:
        with pytest.raises(TraceError) as info:
            load_trace(path, use_cache=False)
        line = info.value.line()
        assert case.expect in line, line
        assert str(path) in line and "\n" not in line
    else:
        trace = load_trace(path, use_cache=False)
        warnings = " | ".join(trace.warnings)
        if case.outcome == LOADS:
            assert trace.warnings == [], warnings
        else:
            assert case.expect in warnings, warnings
        if case.check:
            case.check(trace)
    assert fingerprint(path) == before


@pytest.mark.parametrize("name", list(CASE))
def test_loader_outcome(tmp_path: Path, name: str):
    case = CASE[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(case.data)
    assert_outcome(case, path)


def test_args_after_the_file_changed_are_empty_not_wrong(tmp_path: Path):
    """Lazy args are read back from the file; once it changed they read as {}."""
    path = tmp_path / "t.json"
    path.write_bytes(doc())
    trace = load_trace(path, use_cache=False)
    (mm,) = _rows(trace, "aten::mm")
    path.write_bytes(doc(EVENTS[:3]))  # rewritten in place, shorter (truncated)
    assert trace.args(mm) == {}
    fresh = load_trace(path, use_cache=False)
    assert len(fresh) == 0


def test_args_of_a_gzip_trace_survive_the_file_changing(tmp_path: Path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(doc()))
    trace = load_trace(path, use_cache=False)
    (mm,) = _rows(trace, "aten::mm")
    path.write_bytes(b"")
    assert trace.args(mm)["Input Dims"] == [[2, 3], [3, 4]]  # the text read at load


def test_nan_args_are_read_back_from_the_file(tmp_path: Path):
    path = tmp_path / "t.json"
    path.write_bytes(CASE["nan_infinity_tokens"].data)
    trace = load_trace(path, use_cache=False)
    (mm,) = _rows(trace, "aten::mm")
    assert trace.args(mm)["Input Dims"] == [[2, 3], [3, 4]]
    assert trace.metadata["schemaVersion"] == float("-inf")
