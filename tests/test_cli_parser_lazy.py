"""``build_parser(argv)`` adds only the chosen subcommand's options: it must parse
every command line exactly as the parser with all of them does."""

from __future__ import annotations

import argparse

import pytest

from tui.cli import build_parser
from tui.cli_options import SUBCOMMANDS

LINES = [
    ["stats", "t.json", "--json", "--jobs", "3"],
    ["--debug", "kernels", "t.json", "--region", "attn_fwd", "--instance", "2", "--json"],
    ["kernels", "t.json", "--debug", "--no-cache"],
    ["table", "t.json", "--sort", "count", "--limit", "5", "--python-functions"],
    ["compare", "a.json", "--region", "r", "b.json", "--markdown"],
    ["diff", "a.json", "b.json", "--instance", "0", "--json"],
    ["findings", "a.json", "--align", "step", "--json"],
    ["open", "--align", "step", "--screenshot-dir", "shots", "a.json", "b.json"],
    ["open"],
    ["slices", "t.json", "--from", "1.5ms", "--to", "2ms", "--lanes", "gpu"],
    ["ranks", "r0.json", "r1.json", "--align", "step", "--json"],
    ["sql", "t.json", "select 1", "--csv"],
    ["export", "t.json", "--parquet", "out", "--force"],
    ["variants"],
    ["cache", "--clear", "--json"],
    ["capture", "--variant", "naive", "--variant", "flex", "--seq", "128", "--dtype", "fp16",
     "--nproc", "2", "--gzip"],
]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("argv", LINES, ids=lambda argv: " ".join(argv))
def test_a_parser_built_for_a_line_parses_it_as_the_whole_parser(argv: list[str]) -> None:
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_every_subcommand_is_listed_but_only_the_chosen_one_has_options() -> None:
    subs = _subparsers(build_parser(["kernels", "t.json"]))
    assert list(subs) == list(SUBCOMMANDS)
    for name, sub in subs.items():
        dests = {a.dest for a in sub._actions} - {"help"}
        assert bool(dests) == (name == "kernels"), name
    assert {"region", "instance", "json", "jobs"} <= {a.dest for a in subs["kernels"]._actions}


@pytest.mark.parametrize("argv", [[], ["--debug"], ["bogus", "x"], ["--help"]])
def test_a_line_with_no_subcommand_gets_every_option(argv: list[str]) -> None:
    subs = _subparsers(build_parser(argv))
    assert all({a.dest for a in sub._actions} - {"help"} for sub in subs.values())


def test_a_usage_error_reads_as_it_did_with_every_subcommand_built(capsys) -> None:  # noqa: ANN001
    for parser in (build_parser(), build_parser(["kernels", "t.json", "--bogus"])):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(["kernels", "t.json", "--bogus"])
        assert stop.value.code == 2
    first, second = capsys.readouterr().err.splitlines()
    assert first == second and "--bogus" in first
