"""A rank whose GPU work was not recorded is left out of the straggler comparisons.

Found on a synthetic 4-rank job where one rank's trace has its host events but no
kernel (CUPTI busy or off on that rank): with no collective to subtract, its whole
step counted as busy, so it was "the slowest in 4 of 4 steps", and its device time
of 0 pulled the attn_fwd medians down.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.job_fixtures import straggler_job
from tui.cli import main

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def test_a_rank_without_gpu_events_is_not_the_straggler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    paths = straggler_job(tmp_path, slow=2, ranks=4, steps=3)
    doc = json.loads(Path(paths[0]).read_text())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in GPU_CATS]
    Path(paths[0]).write_text(json.dumps(doc))
    assert main(["findings", *paths, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["findings"]
    titles = [f["title"] for f in found if f["id"] == "straggler-rank"]
    assert titles and all(t.startswith("rank 2 is the slowest") for t in titles), titles
    assert main(["ranks", *paths]) == 0
    out = capsys.readouterr().out
    table = out[out.index("stragglers"):out.index("collectives whose")]
    lines = [line.strip() for line in table.splitlines()]
    rows = [line.split() for line in lines if line.startswith(("Prof", "attn"))]
    assert rows
    slowest = [r[2] if r[0].startswith("Prof") else r[3] for r in rows]
    assert set(slowest) == {"2"}, rows
