"""A trace's rank (``distributedInfo``) in ``stats --json`` and the status line's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling.analysis.ranks import rank_text, trace_rank, world_size
from tests.test_compare_fixtures import variant_doc, write_doc
from tui.cli import main


@pytest.mark.parametrize(("info", "rank", "world", "text"), [
    ({"rank": 3, "world_size": 8}, 3, 8, "rank 3 of 8"),
    ({"rank": "5", "world_size": 1}, 5, 1, "rank 5"),
    ({"rank": 0}, 0, None, "rank 0"),
    ({"rank": True, "world_size": True}, None, None, ""),
    ({"rank": -1, "world_size": 0}, None, None, ""),
    ({"rank": "[bold]x", "world_size": "8"}, None, 8, ""),
    ("not a dict", None, None, ""),
])
def test_rank_is_read_as_data(info: object, rank: int | None, world: int | None,
                              text: str) -> None:
    metadata = {"distributedInfo": info}
    assert (trace_rank(metadata), world_size(metadata), rank_text(metadata)) == \
        (rank, world, text)


def test_stats_json_has_rank_and_world_size(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    doc = variant_doc("sdpa_flash", 1)
    doc["distributedInfo"] = {"backend": "nccl", "rank": 6, "world_size": 8}
    ranked = write_doc(tmp_path / "ranked.json", doc)
    del doc["distributedInfo"]
    plain = write_doc(tmp_path / "plain.json", doc)
    for path, want in ((ranked, (6, 8)), (plain, (None, None))):
        assert main(["stats", str(path), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["rank"], out["world_size"]) == want
    assert main(["stats", str(ranked)]) == 0
    assert "rank 6 of 8" in capsys.readouterr().out.splitlines()[0]
