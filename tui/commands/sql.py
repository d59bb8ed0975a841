"""``attn-tui sql TRACE... "QUERY"`` and ``attn-tui export TRACE... --parquet DIR``.

DuckDB over the model (``profiling.sql``): views ``events``, ``kernels``, ``ops``,
``regions``, ``lanes`` and ``traces``, each with a ``trace`` column (the file's
label) so one query spans every file given.  A TRACE may be a trace, a folder of
traces, or a folder written by ``export`` (its Parquet files are read, not the
traces).  Output: a table, or ``--json`` (a list of objects), ``--markdown``,
``--csv``.  A query DuckDB rejects is one line on stderr and exit status 2; so is
a missing ``[sql]`` extra, with the command that installs it.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
from collections.abc import Iterator
from typing import Any

from profiling.errors import AttnTuiError

SQL_DESCRIPTION = (
    "Run a DuckDB query over traces (the [sql] extra: pip install 'attn-tui[sql]'). Views: "
    "events (every event: trace, row, name, category, kind, device_type, pid, tid, lane, "
    "ts_us, dur_us, depth, correlation, external_id, stream, ts_ns, dur_ns), kernels (the rows "
    "of 'kernels --json' for every region instance, with seq, row, launch_row, op_row, ts_us), "
    "ops (the rows of 'table --json'), regions (one row per region instance: CPU and GPU "
    "figures), lanes, traces. Times are µs from each trace's first event; every view has a "
    "trace column (the file's label)."
)


def sql_options(p: argparse.ArgumentParser) -> None:
    """``sql``'s description and options (called by ``tui.cli.build_parser``)."""
    from tui.cli_options import common_options

    p.description = SQL_DESCRIPTION
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="TRACE",
        help="a trace, a folder of traces, or a folder written by 'export'",
    )
    p.add_argument(
        "query", metavar="QUERY", help="the SQL query (quote it; '-' reads it from stdin)"
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print a list of row objects")
    fmt.add_argument("--markdown", action="store_true", help="print a Markdown table")
    fmt.add_argument("--csv", action="store_true", help="print CSV with a header row")
    common_options(p, cache=True)


def export_options(p: argparse.ArgumentParser) -> None:
    """``export``'s options (called by ``tui.cli.build_parser``)."""
    from tui.cli_options import common_options

    p.add_argument("inputs", nargs="+", metavar="TRACE", help="a trace or a folder of traces")
    p.add_argument(
        "--parquet",
        metavar="DIR",
        help="folder to write (needed): DIR/<trace label>/<view>.parquet and a manifest",
    )
    p.add_argument("--force", action="store_true", help="overwrite files already there")
    common_options(p, cache=True)


def open_db(inputs: list[str], args: Any = None, *, exports: bool = True) -> Any:
    """A ``TraceDB`` over ``inputs`` (traces, folders of traces, export folders)."""
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.analysis.compare import trace_label
    from profiling.sql.engine import Loaded, TraceDB, require, unique_labels
    from profiling.sql.export import is_export, read_export
    from tui.inputs import resolve_paths
    from tui.loading import load_for_command
    from tui.names import visible

    require()  # before loading: a missing extra should not wait for a big file

    def say(line: str) -> None:
        print(f"attn-tui {getattr(args, 'command', 'sql')}: {visible(line)}", file=sys.stderr)

    sources: list[Any] = []
    traces = []
    for item in inputs:
        if exports and is_export(item):
            sources.append(read_export(item))
            continue
        for path in resolve_paths([item], say, many=True):
            trace = load_for_command(path, args)
            traces.append(len(sources))
            sources.append(AnalysedTrace(trace))
    exported = [label for s in sources if not isinstance(s, AnalysedTrace) for label in s.files]
    labels = unique_labels(
        [trace_label(sources[i].trace.path, sources[i].trace.metadata) for i in traces], exported
    )
    for i, label in zip(traces, labels, strict=True):
        sources[i] = Loaded(label, sources[i])
    return TraceDB(sources)


def run(args: argparse.Namespace) -> int:
    if args.command == "export":
        return _export(args)
    if args.query == "-":
        args.query = sys.stdin.read()
    if not args.query.strip():
        raise AttnTuiError(
            "the query is empty",
            "QUERY",
            'give a query, e.g. "SELECT kind, count(*) FROM events GROUP BY kind"',
        )
    db = open_db(list(args.inputs), args)
    if args.json or args.csv or args.markdown:  # every row, a batch at a time
        _write(args, db.batches(args.query))
    else:  # for a person: a page of rows
        _print(db.query(args.query, limit=TABLE_ROWS + 1))
    return 0


def _write(args: argparse.Namespace, batches: Iterator[Any]) -> None:
    """The answer as ``--json`` (what ``json.dumps(rows, indent=1)`` writes), ``--csv`` or
    ``--markdown``, written batch by batch."""
    from profiling.analysis.json_text import dumps_indent1
    from tui.sql_cells import csv_value, json_value

    first = next(batches)
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        if first.columns:
            writer.writerow(first.columns)
    elif args.markdown:
        sys.stdout.write(markdown_head(first))
    opened = False
    for batch in itertools.chain([first], batches):
        if args.json and batch.rows:
            doc = [{c: json_value(v) for c, v in zip(batch.columns, row, strict=True)}
                   for row in batch.rows]
            text = dumps_indent1(doc, allow_nan=False, ensure_ascii=False)
            sys.stdout.write((",\n" if opened else "[\n") + text[2:-2])
            opened = True
        elif args.csv:
            writer.writerows([csv_value(v) for v in row] for row in batch.rows)
        elif args.markdown and batch.columns:
            sys.stdout.write(markdown_rows(batch.rows))
    if args.json:
        sys.stdout.write("\n]\n" if opened else "[]\n")


TABLE_ROWS = 5000
"""Rows the table (no format option) shows, as the TUI's query view: a table lays out
about 5,000 rows a second, and a person reads none of three million; the formats
print every row."""


def markdown_head(result: Any) -> str:
    """The head of a GitHub table of the result ('' without columns)."""
    from tui.sql_cells import is_numeric

    if not result.columns:
        return ""
    return ("| " + " | ".join(_md_cell(c) for c in result.columns) + " |\n"
            + "|" + "|".join("---:" if is_numeric(t) else "---" for t in result.types) + "|\n")


def markdown_rows(rows: list[tuple[Any, ...]]) -> str:
    """Rows of a GitHub table (pipes and backslashes escaped)."""
    return "".join("| " + " | ".join(_md_cell(v) for v in row) + " |\n" for row in rows)


def _md_cell(value: Any) -> str:
    from tui.sql_cells import cell_text

    return cell_text(value).replace("\\", "\\\\").replace("|", "\\|") or " "


def _print(result: Any) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from tui.names import visible
    from tui.sql_cells import cell_text, is_numeric

    if not result.columns:
        return
    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 240
    t = Table(box=box.SIMPLE_HEAD)
    for name, type_name in zip(result.columns, result.types, strict=True):
        t.add_column(
            Text(visible(name)),
            justify="right" if is_numeric(type_name) else "left",
            no_wrap=True,
            overflow="ellipsis",
            max_width=80,
        )
    more = len(result.rows) > TABLE_ROWS
    rows = result.rows[:TABLE_ROWS]
    for row in rows:
        t.add_row(*[Text(cell_text(v)) for v in row])
    console.print(t)
    n = len(rows)
    console.print(Text(f"{n}{'+' if more else ''} row{'s' if n != 1 else ''}" + (
        f" (the first {n} shown: add a LIMIT or an aggregate, or print every row with "
        "--csv, --json or --markdown)" if more else "")))


def _export(args: argparse.Namespace) -> int:
    from profiling.sql.export import export, plan

    if not args.parquet:  # checked here, not by argparse: every subcommand parses bare
        raise AttnTuiError(
            "needs --parquet DIR",
            "export",
            "the folder to write: attn-tui export TRACE... --parquet DIR",
        )
    db = open_db(list(args.inputs), args, exports=False)
    plan(db, args.parquet, args.force)  # refuse before the work, not after it
    written = export(db, args.parquet, args.force)
    from tui.names import visible

    n = len(db.labels())
    print(
        f"wrote {len(written)} Parquet files for {n} trace{'s' if n != 1 else ''} "
        f"to {visible(args.parquet)} (query them: attn-tui sql {visible(args.parquet)} "
        '"SELECT ...")'
    )
    return 0
