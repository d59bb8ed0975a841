"""``attn-tui table PATH``: torch's ``key_averages()`` op table, from the trace alone.

``--json`` prints the rows of DESIGN.md section 5 (one per name and device
type, times in microseconds); without it the table is laid out as torch's
``key_averages().table()``: the same columns, the same time formatting, the
same two footer totals.  ``--sort`` takes torch's ``sort_by`` keys
(``self_cuda_time_total``, ``cpu_time_total``, ``count``...), ``--limit`` its
``row_limit``.
"""

from __future__ import annotations

import argparse
import sys

from profiling.errors import AttnTuiError

TIME_COLUMNS = ("Self CPU", "CPU total", "CPU time avg")


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.key_averages import SORT_KEYS, key_averages, sort_rows
    from tui.loading import analysed_for_command

    analysed = analysed_for_command(args.path, args)
    if getattr(args, "python_functions", False):
        table = key_averages(analysed.trace, python_functions=True)
    else:  # the analysis' own table: stored with the index, mapped on reopen
        table = analysed.key_averages
    try:
        rows = sort_rows(table.rows, args.sort) if args.sort else list(table.rows)
    except KeyError:
        raise AttnTuiError(
            f"unknown sort key {args.sort!r}",
            "--sort",
            "use one of: " + ", ".join(SORT_KEYS) + " (torch's cuda_/xpu_ spellings work too)",
        ) from None
    if args.limit:
        rows = rows[: args.limit]
    if args.json:
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1([r.as_json() for r in rows], allow_nan=False))
        sys.stdout.write("\n")
        return 0
    shown = rows if args.limit else rows[:TABLE_ROWS]  # --limit N: N rows, however many
    _print_table(shown, table.self_cpu_time_total, table.self_device_time_total,
                 table.has_device_time)
    if len(shown) < len(rows):
        print(f"(the first {len(shown)} of {len(rows)} rows shown: --limit N shows N, "
              "--json every row)")
    return 0


TABLE_ROWS = 1000
"""Rows the table (no ``--json``) shows without ``--limit``:
each takes half a millisecond of layout, and a trace of 20,000 python functions
(``--python-functions``) took 9.7 s; torch's own ``table()`` shows 100 by default."""


def format_share(us: float, total: float) -> str:
    """torch's ``_format_time_share``."""
    if total == 0:
        return "NaN"
    return f"{us * 100.0 / total:.2f}%"


def _print_table(rows: list, self_cpu_total: float, self_device_total: float,
                 has_device: bool) -> None:
    from tui.fmt import fmt_us  # torch's _format_time: us below 1 ms, ms below 1 s, else s
    from tui.names import visible
    from tui.plain_text import Column, Item, Table, print_items

    columns = [Column("Name", max_width=55)] + [Column(h, "right") for h in (
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")]
    if has_device:
        columns += [Column(h, "right") for h in ("Self CUDA", "Self CUDA %", "CUDA total",
                                                  "CUDA time avg")]
    columns.append(Column("# of Calls", "right"))
    cells = []
    for r in rows:
        row = [visible(r.key), format_share(r.self_cpu_time_total, self_cpu_total),
               fmt_us(r.self_cpu_time_total), format_share(r.cpu_time_total, self_cpu_total),
               fmt_us(r.cpu_time_total), fmt_us(r.cpu_time)]
        if has_device:
            row += [fmt_us(r.self_device_time_total),
                    format_share(r.self_device_time_total, self_device_total),
                    fmt_us(r.device_time_total), fmt_us(r.device_time)]
        cells.append([*row, str(r.count)])
    items: list[Item] = [Table(columns, cells, edge=False),
                         f"Self CPU time total: {fmt_us(self_cpu_total)}"]
    if has_device:
        items.append(f"Self CUDA time total: {fmt_us(self_device_total)}")
    print_items(items, 240)
