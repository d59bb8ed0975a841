"""``attn-tui ranks DIR|PATH... [--align clock|step] [--json]``: where each rank's time went.

The ranks of one job (``distributedInfo``) are loaded in parallel, placed on
one time axis and broken down per rank (``profiling.analysis.job_report``):
span, communication, compute, their overlap, idle time, copies, the region
figures of ``stats``, and each rank's wait in collectives.  ``--json`` prints
DESIGN.md section 5's list, in rank order; otherwise tables, then the
stragglers, the collectives whose ranks arrived furthest apart and the findings.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from profiling.errors import AttnTuiError

COLUMNS = ("rank", "device", "span", "comm", "compute", "overlap", "idle", "memcpy", "memset",
           "coll. wait", "slowest in")
FIELDS = ("span_us", "comm_us", "compute_us", "overlap_us", "idle_us", "memcpy_us", "memset_us",
          "collective_wait_us")


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.job_report import job_report
    from tui.loading import load_job_for_command

    paths: list[str] = list(args.paths)
    if not paths:
        raise AttnTuiError("no trace given", "ranks", "give a job's folder or its rank traces")
    job = load_job_for_command(paths, args, "ranks")
    report = job_report(job)
    if args.json:
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(report.ranks, allow_nan=False, default=str) + "\n")
        return 0
    _print(report)
    return 0


def _print(report) -> None:  # noqa: ANN001 - a JobReport (imported lazily)
    from tui.fmt import fmt_time
    from tui.names import visible
    from tui.plain_text import Column, Item, Line, Table, print_items

    items: list[Item] = [f"{visible(report.job.trace.path)}: {visible(report.job.header())}"]
    warning = report.alignment_warning(fmt_time)
    if warning:
        items.append(Line("warning: " + warning, "bold"))
    rows = [[str(r["rank"]), visible(r["device"])] + [fmt_time(r[f], "us") for f in FIELDS]
            + [str(r["slowest_in"] or "")] for r in report.ranks]
    items.append(Table([Column(c, "left" if c == "device" else "right") for c in COLUMNS], rows))
    if report.stragglers:
        items.append(_stragglers(report))
    worst = report.worst_collectives()
    if worst:
        items.append(Line("collectives whose ranks arrived furthest apart "
                          "(wait: last arrival minus this rank's start)", "bold"))
        for c in worst:
            last = report.job.ranks[c.last_rank_index].rank
            items.append(f"  {visible(c.name)} #{c.index}: skew {fmt_time(c.skew_ns)}, "
                         f"last rank {last}")
    for f in report.findings:
        items.append(Line(f"[{f.severity}] {visible(f.title)}: {visible(f.detail)}", "yellow"))
        items += [Line(f"  {visible(e.note)}", "dim") for e in f.evidence]
    print_items(items, 200)


def _stragglers(report) -> Any:  # noqa: ANN001
    from tui.fmt import fmt_time
    from tui.names import visible
    from tui.plain_text import Column, Table
    from tui.ranks_data import excess_cell

    columns = [Column("item", max_width=60), Column("measure")] + [
        Column(c, "right") for c in ("slowest rank", "its time", "median", "excess")]
    return Table(columns, [[visible(s.name), s.measure, str(s.slowest),
                            fmt_time(max(s.values_ns)), fmt_time(s.median_ns), excess_cell(s)]
                           for s in report.stragglers[:20]],
                 "stragglers (per step: busy = step minus collective wait)")


def add_options(p: argparse.ArgumentParser) -> None:
    """``ranks``' options (called by ``tui.cli.build_parser``)."""
    from tui.cli_options import PATHS_HELP, common_options

    p.add_argument("paths", nargs="+", metavar="PATH",
                   help=PATHS_HELP + "; the ranks of one job (distributedInfo)")
    p.add_argument("--align", choices=("clock", "step"), default="clock",
                   help="place ranks on one time axis by the traces' clocks, or on each "
                        "rank's first ProfilerStep (default: %(default)s)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per rank, in rank order (README: JSON output)")
    common_options(p, cache=True)
