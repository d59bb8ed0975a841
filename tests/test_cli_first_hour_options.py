"""What a new user meets in the first hour with the options (issue 12, items 3 and 6).

``--debug`` is taken before or after the subcommand, by every subcommand; every
option has help, and the help's sort keys and defaults are the ones the code uses.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from profiling.errors import AttnTuiError
from tui.cli import build_parser, main

# ---- 3: --debug anywhere ----


def test_debug_is_accepted_before_and_after_the_subcommand(tmp_path: Path, capsys) -> None:
    missing = str(tmp_path / "missing.json")
    assert main(["stats", missing]) == 2
    assert "no such file" in capsys.readouterr().err
    for argv in (["--debug", "stats", missing], ["stats", missing, "--debug"],
                 ["stats", "--debug", missing]):
        with pytest.raises(AttnTuiError, match="no such file"):
            main(argv)


def _positionals(p: argparse.ArgumentParser) -> list[str]:
    """Placeholder values for a subcommand's positional arguments."""
    out: list[str] = []
    for action in p._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            out += ["x", "y"] if action.nargs == "+" else ["x"]
    return out


def test_every_subcommand_takes_debug() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"open", "stats", "table", "kernels", "compare", "findings", "capture",
            "variants"} <= set(sub.choices)
    for name, p in sub.choices.items():
        rest = _positionals(p)
        assert parser.parse_args([name, *rest, "--debug"]).debug is True, name
        assert parser.parse_args(["--debug", name, *rest]).debug is True, name
        assert parser.parse_args([name, *rest]).debug is False, name


# ---- 6: help ----


def test_every_option_of_every_subcommand_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in [("attn-tui", parser), *sub.choices.items()]:
        for action in p._actions:
            assert action.help and action.help.strip(), (name, action.dest)


def test_sort_help_lists_the_keys_table_accepts() -> None:
    from profiling.analysis.key_averages import SORT_KEYS
    from tui import cli_options as cli

    assert tuple(cli.SORT_KEYS) == tuple(SORT_KEYS)
    text = build_parser().parse_args(["table", "x"])  # the parser builds
    assert text.sort == "self_device_time_total"
    for key in SORT_KEYS:
        assert key in cli.SORT_HELP


def test_help_defaults_match_capture_config() -> None:
    from profiling.capture.config import CPU_DEFAULTS, GPU_DEFAULTS, VARIANT_NAMES
    from tui import cli_options as cli

    for key, (gpu_default, cpu_default) in cli.SHAPE_DEFAULTS.items():
        assert (GPU_DEFAULTS[key], CPU_DEFAULTS[key]) == (gpu_default, cpu_default), key
    assert tuple(cli.VARIANTS) == tuple(VARIANT_NAMES)


# ---- NumPy's huge-page hint (bench/bench_hugepage.py) ----


def test_the_command_line_turns_numpy_s_huge_page_hint_off_unless_the_user_set_it() -> None:
    """Set before numpy is first imported (nothing in ``tui`` imports it earlier), so it
    takes effect; a value the user set is theirs."""
    import os
    import subprocess
    import sys

    code = ("import sys, tui; before = 'numpy' in sys.modules; import os, tui.cli; "
            "print(before, os.environ['NUMPY_MADVISE_HUGEPAGE'])")
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    for given, want in ((None, "False 0"), ("1", "False 1")):
        run_env = env if given is None else {**env, "NUMPY_MADVISE_HUGEPAGE": given}
        out = subprocess.run([sys.executable, "-c", code], env=run_env, text=True,
                             capture_output=True, check=True).stdout.strip()
        assert out == want
