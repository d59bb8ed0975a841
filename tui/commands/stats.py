"""``attn-tui stats PATH``: what is in a trace (lanes, regions, copies, warnings).

``--json`` prints the object of DESIGN.md section 5 (``profiling.analysis.stats``);
without it the same facts are printed as Rich tables.  Names come from the
trace and are data: they are always wrapped in ``Text``, never parsed as markup.
"""

from __future__ import annotations

import argparse
import sys
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


def busiest(lanes: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The ``limit`` lanes with the most events, in their own order."""
    if len(lanes) <= limit:
        return lanes
    keep = sorted(range(len(lanes)), key=lambda i: (-lanes[i]["events"], i))[:limit]
    return [lanes[i] for i in sorted(keep)]


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

    if stats["regions"]:
        regions = Table(title="regions", title_justify="left", box=box.SIMPLE_HEAD)
        regions.add_column("name", no_wrap=True, overflow="ellipsis", max_width=60)
        for header in ("instances", "CPU avg", "GPU avg", "kernels/inst", "memcpy/inst",
                       "memset/inst"):
            regions.add_column(header, justify="right", no_wrap=True)
        for name, r in stats["regions"].items():
            regions.add_row(
                Text(visible(name)), Text(str(r["instances"])),
                Text(fmt_time(r["cpu_time_avg_us"], "us")),
                Text(fmt_time(r["device_time_avg_us"], "us")),
                Text(f"{r['kernels_per_instance']:g}"), Text(f"{r['memcpy_per_instance']:g}"),
                Text(f"{r['memset_per_instance']:g}"),
            )
        console.print(regions)
    else:
        console.print(Text("no record_function regions in this trace"))

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
                           Text(visible(", ".join(c["launched_by"]))),
                           Text(visible(", ".join(c["regions"]))))
        console.print(copies)

    for warning in stats["warnings"]:
        console.print(Text("warning: " + visible(warning)))
