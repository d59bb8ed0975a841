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
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from tui.fmt import fmt_time
    from tui.names import visible

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 200
    console.print(Text(f"{visible(report.job.trace.path)}: {visible(report.job.header())}"))
    warning = report.alignment_warning(fmt_time)
    if warning:
        console.print(Text("warning: " + warning, style="bold"))
    table = Table(box=box.SIMPLE_HEAD)
    for c in COLUMNS:
        table.add_column(c, justify="left" if c == "device" else "right", no_wrap=True)
    for r in report.ranks:
        cells = [str(r["rank"]), visible(r["device"])]
        cells += [fmt_time(r[f], "us") for f in FIELDS] + [str(r["slowest_in"] or "")]
        table.add_row(*(Text(c) for c in cells))
    console.print(table)
    if report.stragglers:
        _print_stragglers(console, report)
    worst = report.worst_collectives()
    if worst:
        console.print(Text("collectives whose ranks arrived furthest apart "
                           "(wait: last arrival minus this rank's start)", style="bold"))
        for c in worst:
            last = report.job.ranks[c.last_rank_index].rank
            console.print(Text(f"  {visible(c.name)} #{c.index}: skew "
                               f"{fmt_time(c.skew_ns)}, last rank {last}"))
    for f in report.findings:
        console.print(Text(f"[{f.severity}] {visible(f.title)}: {visible(f.detail)}",
                           style="yellow"))
        for e in f.evidence:
            console.print(Text(f"  {visible(e.note)}"), style="dim")


def _print_stragglers(console, report) -> None:  # noqa: ANN001
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from tui.fmt import fmt_time
    from tui.names import visible
    from tui.ranks_data import excess_cell

    table = Table(title="stragglers (per step: busy = step minus collective wait)",
                  title_justify="left", box=box.SIMPLE_HEAD)
    for c in ("item", "measure", "slowest rank", "its time", "median", "excess"):
        table.add_column(c, justify="left" if c in ("item", "measure") else "right",
                         no_wrap=True, max_width=60 if c == "item" else None)
    for s in report.stragglers[:20]:
        table.add_row(Text(visible(s.name)), Text(s.measure), Text(str(s.slowest)),
                      Text(fmt_time(max(s.values_ns))), Text(fmt_time(s.median_ns)),
                      Text(excess_cell(s)))
    console.print(table)


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
