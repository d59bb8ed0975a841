"""``attn-tui sql`` on every real trace: the views build (messy files: string pids,
missing metadata, AMD devices, files cut short) and agree with ``stats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REAL_TRACES, needs_real_traces, real_trace_files
from tui.cli import main

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

QUERY = """
SELECT (SELECT count(*) FROM events) AS rows,
       (SELECT count(*) FROM events WHERE kind IN ('kernel', 'memcpy', 'memset')) AS gpu,
       (SELECT count(*) FROM lanes) AS lanes,
       (SELECT count(DISTINCT region_group) FROM regions
         WHERE row IN (SELECT row FROM events WHERE kind = 'user_annotation'
                       OR name LIKE 'ProfilerStep#%')) AS regions,
       (SELECT count(*) FROM kernels) AS kernel_rows,
       (SELECT count(*) FROM ops) AS ops,
       (SELECT events FROM traces) AS entries
"""


@needs_real_traces
@pytest.mark.real_traces
@pytest.mark.parametrize("path", real_trace_files(), ids=lambda p: str(p.relative_to(REAL_TRACES)))
def test_views_on_a_real_trace(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert main(["sql", str(path), QUERY, "--json"]) == 0, capsys.readouterr().err
    (got,) = json.loads(capsys.readouterr().out)
    assert (got["rows"], got["gpu"], got["lanes"], got["entries"]) == (
        stats["rows"], stats["gpu_events"], len(stats["lanes"]), stats["events"])
    assert got["regions"] == len(stats["regions"])
    assert main(["table", str(path), "--json"]) == 0
    assert got["ops"] == len(json.loads(capsys.readouterr().out))


def test_readme_sql_examples_are_the_commands_output(capsys: pytest.CaptureFixture[str]) -> None:
    """Each query of the README's SQL section, run on the samples, prints the table shown
    under it (regenerate them by running the query when a change moves a figure)."""
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## SQL\n", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"```sql\n(.*?)\n```\n\n((?:\|[^\n]*\|\n)+)", section, re.DOTALL)
    assert len(pairs) == 5
    samples = str(Path(__file__).resolve().parent.parent / "sample_traces")
    for query, table in pairs:
        assert main(["sql", samples, query, "--markdown"]) == 0
        assert capsys.readouterr().out == table, query
