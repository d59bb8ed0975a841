"""``build_parser(command)`` builds the options of the one subcommand a run takes and
lists the others: it must parse that command's line and print every help exactly as
the whole parser does."""

from __future__ import annotations

import argparse

import pytest

from tui.cli import build_parser


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


NAMES = sorted(commands(build_parser()))


@pytest.mark.parametrize("name", NAMES)
def test_the_named_command_is_built_as_in_the_whole_parser(name: str) -> None:
    whole, one = build_parser(), build_parser(name)
    assert one.format_help() == whole.format_help()
    assert commands(one)[name].format_help() == commands(whole)[name].format_help()
    others = [n for n in NAMES if n != name]
    assert all(not commands(one)[n]._actions for n in others)  # listed, never built


@pytest.mark.parametrize("argv", [
    ["stats", "t.json", "--json", "--jobs", "3"],
    ["--debug", "table", "t.json", "--sort", "count", "--limit", "5"],
    ["open", "a.json", "b.json", "--align", "step"],
    ["findings", "a.json", "--align", "step", "--markdown"],
    ["slices", "t.json", "--from", "5us", "--to", "1ms", "--lanes", "gpu"],
    ["compare", "a.json", "--region", "r", "b.json", "--json"],
    ["kernels", "t.json", "--instance", "2", "--no-cache"],
    ["sql", "t.json", "select 1", "--csv"],
    ["cache", "--clear"],
])
def test_a_command_line_parses_the_same(argv: list[str]) -> None:
    name = next(a for a in argv if not a.startswith("-"))
    assert vars(build_parser(name).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_a_usage_error_is_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    for parser in (build_parser(), build_parser("stats")):
        with pytest.raises(SystemExit) as raised:
            parser.parse_args(["stats", "t.json", "--bogus"])
        assert raised.value.code == 2
    whole, one = capsys.readouterr().err.splitlines()
    assert whole == one and "--bogus" in one
