"""``attn-tui stats PATH``: what is in a trace (lanes, regions, copies, warnings).

``--json`` prints the object of DESIGN.md section 5 (``profiling.analysis.stats``);
without it the same facts are printed as Rich tables.  Names come from the
trace and are data: they are always wrapped in ``Text``, never parsed as markup.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.stats import trace_stats
    from tui.loading import analysed_for_command

    stats = trace_stats(analysed_for_command(args.path, args))
    if args.json:
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(stats, allow_nan=False, default=str))
        sys.stdout.write("\n")
        return 0
    _print(stats)
    return 0


LANE_ROWS = 200
"""Lanes the table (no ``--json``) lists: a server's trace can hold thousands of threads
(5,000 lanes took 2.4 s of table layout); the busiest are shown, in trace order."""


REGION_ROWS = 200
"""Regions the table lists: a server's trace can name each request (20,000 names took
10 s of table layout); those with the most CPU time are shown, in the trace's order."""
NAMES_IN_CELL = 8
"""Launchers and regions named in one cell of the copies table (then ``+N more``)."""


def busiest(rows: list[dict[str, Any]], limit: int,
            weight: Callable[[dict[str, Any]], float] = lambda r: r["events"],
            ) -> list[dict[str, Any]]:
    """The ``limit`` rows of the most ``weight`` (a lane's events), in their own order."""
    if len(rows) <= limit:
        return rows
    keep = sorted(range(len(rows)), key=lambda i: (-weight(rows[i]), i))[:limit]
    return [rows[i] for i in sorted(keep)]


def _cpu_total(region: dict[str, Any]) -> float:
    return region["instances"] * region["cpu_time_avg_us"]


def _some(names: list[str]) -> str:
    """The first ``NAMES_IN_CELL`` names, and how many more."""
    more = len(names) - NAMES_IN_CELL
    return ", ".join(names[:NAMES_IN_CELL]) + (f" (+{more} more)" if more > 0 else "")


def _print(stats: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from profiling.analysis.correlation import ranks_in
    from profiling.analysis.ranks import rank_text
    from tui.fmt import fmt_time
    from tui.names import visible

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 200
    rank = rank_text({"distributedInfo": {"rank": stats.get("rank"),
                                          "world_size": stats.get("world_size")}})
    merged = ranks_in([lane["pid"] for lane in stats["lanes"]])
    if merged:  # one file of several ranks (profiling.analysis.job_split)
        rank = f"{merged} ranks merged in one file (attn-tui ranks shows each)"
    console.print(Text(
        f"{visible(stats['path'])}: {rank + ', ' if rank else ''}{stats['events']} events, "
        f"{stats['rows']} rows, {fmt_time(stats['duration_us'], 'us', digits=4)}, "
        f"{stats['gpu_events']} GPU events ({stats['orphans']} with no launch in the trace)"
    ))

    lanes = Table(title="lanes", title_justify="left", box=box.SIMPLE_HEAD)
    for header in ("kind", "pid", "tid", "label", "events"):
        right = header in ("pid", "tid", "events")
        lanes.add_column(header, justify="right" if right else "left", no_wrap=True)
    shown = busiest(stats["lanes"], LANE_ROWS)
    for lane in shown:
        lanes.add_row(Text(lane["kind"]), Text(visible(str(lane["pid"]))),
                      Text(visible(str(lane["tid"]))), Text(visible(lane["label"])),
                      Text(str(lane["events"])))
    console.print(lanes)
    if len(shown) < len(stats["lanes"]):
        rest = len(stats["lanes"]) - len(shown)
        events = sum(lane["events"] for lane in stats["lanes"]) - sum(x["events"] for x in shown)
        console.print(Text(f"{rest} more lanes with {events} events (the {len(shown)} busiest "
                           "shown; --json lists every lane)"))

    _print_regions(console, stats["regions"])

    if stats["copies"]:
        copies = Table(title="copies and fills", title_justify="left", box=box.SIMPLE_HEAD)
        copies.add_column("name", no_wrap=True, overflow="ellipsis", max_width=45)
        copies.add_column("count", justify="right", no_wrap=True)
        copies.add_column("total", justify="right", no_wrap=True)
        copies.add_column("launched by", overflow="fold")
        copies.add_column("regions", overflow="fold")
        for name, c in stats["copies"].items():
            copies.add_row(Text(visible(name)), Text(str(c["count"])),
                           Text(fmt_time(c["total_us"], "us")),
                           Text(visible(_some(c["launched_by"]))),
                           Text(visible(_some(c["regions"]))))
        console.print(copies)

    for warning in stats["warnings"]:
        console.print(Text("warning: " + visible(warning)))


def _print_regions(console: Any, found: dict[str, dict[str, Any]]) -> None:
    """The regions table: those with the most CPU time (``REGION_ROWS``), and how many
    more there are."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from tui.fmt import fmt_time
    from tui.names import visible

    if not found:
        console.print(Text("no record_function regions in this trace"))
        return
    regions = Table(title="regions", title_justify="left", box=box.SIMPLE_HEAD)
    regions.add_column("name", no_wrap=True, overflow="ellipsis", max_width=60)
    for header in ("instances", "CPU avg", "GPU avg", "kernels/inst", "memcpy/inst",
                   "memset/inst"):
        regions.add_column(header, justify="right", no_wrap=True)
    listed = [{"name": n, **r} for n, r in found.items()]
    shown = busiest(listed, REGION_ROWS, _cpu_total)
    for r in shown:
        regions.add_row(
            Text(visible(r["name"])), Text(str(r["instances"])),
            Text(fmt_time(r["cpu_time_avg_us"], "us")),
            Text(fmt_time(r["device_time_avg_us"], "us")),
            Text(f"{r['kernels_per_instance']:g}"), Text(f"{r['memcpy_per_instance']:g}"),
            Text(f"{r['memset_per_instance']:g}"),
        )
    console.print(regions)
    if len(shown) < len(listed):
        console.print(Text(f"{len(listed) - len(shown)} more regions (the {len(shown)} with "
                           "the most CPU time shown; --json lists every region)"))
