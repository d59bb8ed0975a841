"""The bad-input corpus through ``attn-tui stats/table/kernels``: exit 0 with valid
JSON, or exit 2 with exactly one stderr line naming the path, never a traceback;
the input file is byte-identical and keeps its mtime afterwards.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.fixtures.bad_inputs import CASE, CASES, ERROR, fingerprint
from tests.fixtures.cli_run import assert_cli_ok_or_one_line, cli, cli_in_process

COMMANDS = (("stats", "--json"), ("table", "--json"), ("kernels", "--json"), ("stats",))

SUBPROCESS = ("stats", "--json")  # the rest run through tui.cli.main in this process


@pytest.fixture(scope="module")
def corpus_cli(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case through every command (done once): ``stats --json`` as a real
    subprocess (four at a time), the other commands in-process."""
    folder = tmp_path_factory.mktemp("corpus")
    cache = tmp_path_factory.mktemp("cache")
    paths = {}
    for case in CASES:
        paths[case.name] = folder / f"{case.name}.json"
        paths[case.name].write_bytes(case.data)
    before = {name: fingerprint(p) for name, p in paths.items()}
    env = {"ATTN_TUI_CACHE_DIR": str(cache)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        spawned = dict(zip(paths, pool.map(
            lambda name: cli(SUBPROCESS[0], str(paths[name]), *SUBPROCESS[1:], env=env), paths),
            strict=True))
    results = {}
    for name, path in paths.items():
        for command in COMMANDS:
            results[(name, command)] = spawned[name] if command == SUBPROCESS else \
                cli_in_process(command[0], str(path), *command[1:], "--no-cache")
    return {"paths": paths, "before": before, "results": results}


@pytest.mark.parametrize("name", list(CASE))
def test_cli_outcome(corpus_cli: dict[str, Any], name: str):
    case = CASE[name]
    path = corpus_cli["paths"][name]
    outputs = {}
    for command in COMMANDS:
        result = corpus_cli["results"][(name, command)]
        outputs[command] = assert_cli_ok_or_one_line(result, path, "--json" in command)
        if case.outcome == ERROR:
            assert result.returncode == 2
            assert case.expect in result.stderr.decode("utf-8", "replace")
    if case.outcome != ERROR:
        stats = outputs[("stats", "--json")]
        table = outputs[("table", "--json")]
        assert stats is not None and table is not None, "stats and table load every loadable case"
        assert isinstance(table, list)
        warnings = " | ".join(stats["warnings"])
        assert case.expect in warnings  # the loader's warnings reach stats (with its own)
        assert outputs[("stats",)] is not None
    assert fingerprint(path) == corpus_cli["before"][name]

