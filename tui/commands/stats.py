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
    from profiling.analysis.correlation import ranks_in
    from profiling.analysis.ranks import rank_text
    from tui.fmt import fmt_time
    from tui.names import visible
    from tui.plain_text import Column, Item, Table, print_items

    rank = rank_text({"distributedInfo": {"rank": stats.get("rank"),
                                          "world_size": stats.get("world_size")}})
    merged = ranks_in([lane["pid"] for lane in stats["lanes"]])
    if merged:  # one file of several ranks (profiling.analysis.job_split)
        rank = f"{merged} ranks merged in one file (attn-tui ranks shows each)"
    items: list[Item] = [
        f"{visible(stats['path'])}: {rank + ', ' if rank else ''}{stats['events']} events, "
        f"{stats['rows']} rows, {fmt_time(stats['duration_us'], 'us', digits=4)}, "
        f"{stats['gpu_events']} GPU events ({stats['orphans']} with no launch in the trace)"]
    shown = busiest(stats["lanes"], LANE_ROWS)
    items.append(Table(
        [Column("kind"), Column("pid", "right"), Column("tid", "right"), Column("label"),
         Column("events", "right")],
        [[lane["kind"], visible(str(lane["pid"])), visible(str(lane["tid"])),
          visible(lane["label"]), str(lane["events"])] for lane in shown], "lanes"))
    if len(shown) < len(stats["lanes"]):
        rest = len(stats["lanes"]) - len(shown)
        events = sum(lane["events"] for lane in stats["lanes"]) - sum(x["events"] for x in shown)
        items.append(f"{rest} more lanes with {events} events (the {len(shown)} busiest "
                     "shown; --json lists every lane)")
    items += _regions(stats["regions"])
    if stats["copies"]:
        items.append(Table(
            [Column("name", max_width=45), Column("count", "right"), Column("total", "right"),
             Column("launched by", fold=True), Column("regions", fold=True)],
            [[visible(name), str(c["count"]), fmt_time(c["total_us"], "us"),
              visible(_some(c["launched_by"])), visible(_some(c["regions"]))]
             for name, c in stats["copies"].items()], "copies and fills"))
    items += ["warning: " + visible(warning) for warning in stats["warnings"]]
    print_items(items, 200)


def _regions(found: dict[str, dict[str, Any]]) -> list[Any]:
    """The regions table: those with the most CPU time (``REGION_ROWS``), and how many
    more there are."""
    from tui.fmt import fmt_time
    from tui.names import visible
    from tui.plain_text import Column, Table

    if not found:
        return ["no record_function regions in this trace"]
    listed = [{"name": n, **r} for n, r in found.items()]
    shown = busiest(listed, REGION_ROWS, _cpu_total)
    out: list[Any] = [Table(
        [Column("name", max_width=60)] + [Column(h, "right") for h in (
            "instances", "CPU avg", "GPU avg", "kernels/inst", "memcpy/inst", "memset/inst")],
        [[visible(r["name"]), str(r["instances"]), fmt_time(r["cpu_time_avg_us"], "us"),
          fmt_time(r["device_time_avg_us"], "us"), f"{r['kernels_per_instance']:g}",
          f"{r['memcpy_per_instance']:g}", f"{r['memset_per_instance']:g}"] for r in shown],
        "regions")]
    if len(shown) < len(listed):
        out.append(f"{len(listed) - len(shown)} more regions (the {len(shown)} with "
                   "the most CPU time shown; --json lists every region)")
    return out
