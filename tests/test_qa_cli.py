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


SAMPLE = "sample_traces/naive.json.gz"


def test_ranks_on_one_trace_names_the_file(capsys) -> None:
    """``attn-tui ranks sample_traces/naive.json.gz`` headed its table with the folder
    (``.../sample_traces: one trace (rank 0) ...``): the job path of a one-trace job was
    the folder of its one file, not the file."""
    from tui.cli import main

    assert main(["ranks", SAMPLE, "--no-cache"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"{SAMPLE}: one trace"), first


def test_slices_on_a_trace_with_no_time_does_not_blame_options(tmp_path, capsys) -> None:
    """``attn-tui slices empty.json`` (``{"traceEvents": []}``) said ``--from 0 ns is not
    before --to 0 ns``: options the user never gave."""
    from tui.cli import main

    empty = tmp_path / "empty.json"
    empty.write_text('{"traceEvents": []}')
    assert main(["slices", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--from" not in err[0] and str(empty) in err[0], err
    assert "spans no time" in err[0]


def test_help_lists_the_view_keys_in_number_order() -> None:
    """The help (?) and README listed 6, 8, 7: the Ranks row had been added before Diff's."""
    from tui.keymap import help_rows

    digits = [k.keys for k in help_rows("app") if k.keys.isdigit()]
    assert digits == sorted(digits), digits


def test_sql_csv_writes_terminal_escapes_out(tmp_path, capsys) -> None:
    """``attn-tui sql t.json "select name from events" --csv`` sent a kernel name's raw
    ``\\x1b[2J`` to the terminal (it cleared the screen); the other formats write it out.
    Newlines stay: CSV quotes them."""
    import json as _json

    from tui.cli import main

    pytest.importorskip("duckdb")
    trace = tmp_path / "esc.json"
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "a\x1b[2Jb\nc", "pid": 1, "tid": 1, "ts": 0, "dur": 5}
    ]
    trace.write_text(_json.dumps({"traceEvents": ev}))
    assert main(["sql", str(trace), "select name from events", "--csv", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "a\\x1b[2Jb" in out and '"a\\x1b[2Jb\nc"' in out


@pytest.mark.parametrize("command", ["stats", "compare", "open"])
def test_an_export_folder_given_as_traces_points_to_sql(tmp_path, capsys, command) -> None:
    """``attn-tui stats DIR`` on a folder ``export --parquet DIR`` wrote said its
    ``attn-tui-export.json`` was 'JSON, but not a trace: no traceEvents list': the
    export's manifest was taken for a trace. It is recognised and the line says to use sql."""
    import json as _json

    from tui.cli import main

    out = tmp_path / "pq"
    (out / "naive").mkdir(parents=True)
    doc = {
        "format": "attn-tui parquet export",
        "version": 1,
        "traces": {"naive": {"path": "x.json", "folder": "naive", "tables": ["events"]}},
    }
    (out / "attn-tui-export.json").write_text(_json.dumps(doc))
    assert main([command, str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a trace" not in err[0], err
    assert "export" in err[0] and "attn-tui sql" in err[0] and str(out) in err[0], err


@pytest.mark.parametrize("option", [["--from", "1e400"], ["--to", "99999999999999999999s"]])
def test_slices_time_too_large_is_a_usage_error(capsys, option) -> None:
    """``slices --from 1e400`` ended in 'internal error (OverflowError ...)', exit 70."""
    from tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["slices", SAMPLE, *option])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error" not in err[0] and "too large" in err[0], err


@pytest.mark.parametrize("command", ["kernels", "diff"])
def test_stderr_notes_write_a_path_s_escapes_out(tmp_path, capsys, command) -> None:
    """``attn-tui kernels $'e\\x1b[31mvil.json.gz'`` printed its 'no --region given' note
    with the raw escape (the terminal turned red); errors and stdout already wrote it out.
    ``diff``'s 'nothing to diff' note did the same."""
    import json as _json

    from tui.cli import main

    evil = tmp_path / "e\x1b[31mvil.json"
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]
    if command == "kernels":
        evil.write_bytes(open(SAMPLE, "rb").read())
        argv = ["kernels", str(evil)]
    else:  # a base with no region: the note, exit 0
        evil.write_text(_json.dumps({"traceEvents": ev}))
        argv = ["diff", str(evil), SAMPLE]
    assert main([*argv, "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert "no --region given" in err and "\x1b" not in err, repr(err)


@pytest.mark.parametrize("argv", [["--from", "-5us"], ["--from=-5us"], ["--to", "-1ms"]])
def test_slices_negative_time_says_it_is_before_the_trace(capsys, argv) -> None:
    """``slices --from -5us`` said 'argument --from: expected one argument' (argparse took
    -5us for an option) and ``--from=-5us`` 'give a unit' (it had one)."""
    from tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["slices", SAMPLE, *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "before the trace's first event" in err[0], err
