"""Arrow columns built from buffers (profiling/sql/arrow_build.py), never through
``pyarrow.array``, whose every call imports pandas where pandas is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

from profiling.sql import arrow_build  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32",
                                   "float32", "float64"])
def test_numeric_same_values_and_buffer(dtype: str) -> None:
    values = (np.arange(37) * 3 - 20).astype(dtype)
    mask = values % 5 == 0
    plain = arrow_build.numeric(values)
    assert plain.type == getattr(pa, dtype)()
    assert plain.to_pylist() == values.tolist()
    assert plain.buffers()[1].address == values.ctypes.data  # no copy
    masked = arrow_build.numeric(values, mask)
    assert masked.null_count == int(mask.sum())
    assert masked.to_pylist() == [None if m else v for v, m in zip(values.tolist(), mask,
                                                                     strict=True)]


def test_bools_lists_and_strings() -> None:
    flags = np.array([True, False, True] * 5)
    assert arrow_build.numeric(flags).to_pylist() == flags.tolist()
    assert arrow_build.of_list([3, None, -1], np.int64).to_pylist() == [3, None, -1]
    assert arrow_build.of_list([], np.float64).to_pylist() == []
    text = ["", "attn_fwd", None, "naïve › copy", "[bold]x[/]", "\x1b[31m"]
    built = arrow_build.strings(text)
    assert built.type == pa.string()
    assert built.to_pylist() == text
    assert built.equals(pa.array(text, type=pa.string()))
    surrogate = arrow_build.strings(["ok"])  # strict UTF-8 path
    assert surrogate.to_pylist() == ["ok"]


def test_dictionary_with_nulls() -> None:
    built = arrow_build.dictionary(np.array([1, 0, 1, 2], dtype=np.int32), ["a", "b", "c"],
                                   np.array([False, False, True, False]))
    assert built.to_pylist() == ["b", "a", None, "c"]


def test_every_view_built_without_pyarrow_array(monkeypatch: pytest.MonkeyPatch) -> None:
    """The views of a sample, queried with ``pyarrow.array`` made to fail: nothing on
    the way to a first row calls it (so pandas is never imported for it)."""
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.sql.engine import Loaded, TraceDB
    from profiling.sql.tables import TABLES
    from profiling.trace import load_trace

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("pyarrow.array was called")

    trace = load_trace(ROOT / "sample_traces" / "naive.json.gz", use_cache=False)
    monkeypatch.setattr(pa, "array", refuse)
    db = TraceDB([Loaded("naive", AnalysedTrace(trace))])
    for name in TABLES:
        result = db.query(f"SELECT * FROM {name} LIMIT 3")
        assert result.rows, name
    kinds = dict(db.query("SELECT kind, count(*) FROM events GROUP BY kind").rows)
    assert kinds["kernel"] == int(np.count_nonzero(
        trace.kind == arrow_build_kind("KERNEL")))


def arrow_build_kind(name: str) -> int:
    from profiling.trace.model import Kind

    return int(Kind[name])


def test_no_pandas_import_where_pandas_is_installed() -> None:
    """Where pandas is installed, a query over every view does not import it."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("pandas") is None:
        pytest.skip("pandas is not installed here: nothing could import it")
    code = (
        "import sys\n"
        "from profiling.analysis.analysed import AnalysedTrace\n"
        "from profiling.sql.engine import Loaded, TraceDB\n"
        "from profiling.sql.tables import TABLES\n"
        "from profiling.trace import load_trace\n"
        f"t = load_trace({str(ROOT / 'sample_traces' / 'naive.json.gz')!r}, use_cache=False)\n"
        "db = TraceDB([Loaded('naive', AnalysedTrace(t))])\n"
        "for name in TABLES: db.query(f'SELECT * FROM {name} LIMIT 3')\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
