"""Bugs a demanding new user met on the command line (QA sweep), one test each.

Each test failed before its fix; see the commit that added it.
"""

from __future__ import annotations

import pytest

from tui.cli import build_parser


@pytest.mark.parametrize(
    ("argv", "dest", "want"),
    [
        (["compare", "a.json", "--region", "attn_fwd", "b.json"], "paths", ["a.json", "b.json"]),
        (
            ["diff", "a.json", "--instance", "0", "b.json", "c.json"],
            "paths",
            ["a.json", "b.json", "c.json"],
        ),
        (["ranks", "a.json", "--json", "b.json"], "paths", ["a.json", "b.json"]),
        (["sql", "a.json", "--json", "b.json", "select 1"], "inputs", ["a.json", "b.json"]),
        (["export", "a.json", "--parquet", "out", "b.json"], "inputs", ["a.json", "b.json"]),
        (["open", "a.json", "--no-cache", "b.json"], "paths", ["a.json", "b.json"]),
    ],
)
def test_paths_may_follow_options(argv: list[str], dest: str, want: list[str]) -> None:
    """``compare a.json --region r b.json`` is how people type: argparse alone took only
    ``a.json`` as a PATH and refused ``b.json`` as an unrecognized argument (exit 2)."""
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == want
    if argv[0] == "sql":
        assert args.query == "select 1" and args.json


def test_unknown_option_still_refused_after_intermixed_paths() -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["compare", "a.json", "--bogus", "b.json"])
    assert exc.value.code == 2
