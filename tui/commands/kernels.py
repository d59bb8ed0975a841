"""``attn-tui kernels PATH``: the GPU events of every instance of a region.

``--region`` is a group key (``attn_fwd``, ``ProfilerStep*``) or one exact name
(``ProfilerStep#3``); ``--instance K`` keeps the K-th instance (0-based).
``--json`` prints DESIGN.md section 5's list; offsets are from each instance's
first GPU event (``profiling.analysis.instance_kernels``); each event has its
``launched_by`` op and its whole ``launch_chain`` (``profiling.analysis.launch_chain``).
Without ``--region`` the regions are chosen (``profiling.analysis.region_choice``:
attention regions, else top-level annotations, else ``ProfilerStep*``) and
stderr says which, so a trace with no ``attn_fwd`` still lists something.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from profiling.errors import AttnTuiError

HINT_NAMES = 12
"""Region names a "no region named" error suggests: its one line stays a line when a
server's trace names each of 20,000 requests."""


def run(args: argparse.Namespace) -> int:
    from tui.loading import analysed_for_command

    analysis = analysed_for_command(args.path, args)
    note = ""
    selected: Sequence[Any]
    if args.region is None:
        selected, note, chosen_names = _default_instances(analysis, args.path)
    else:
        chosen_names = f"region {args.region!r}"
        selected = _select(analysis, args.region)
        if not selected:
            names = analysis.regions.names()
            more = len(names) - HINT_NAMES
            hint = ("regions in this trace: " + ", ".join(names[:HINT_NAMES])
                    + (f" and {more} more (attn-tui stats lists them)" if more > 0 else "")
                    if names else "this trace has no record_function regions")
            raise AttnTuiError(f"no region named {args.region!r}", args.path, hint)
    if args.instance is not None:
        chosen = [i for i in selected if i.index == args.instance]
        if not chosen:
            indexes = sorted({i.index for i in selected})
            raise AttnTuiError(
                f"{chosen_names} {'has' if args.region else 'have'} no instance "
                f"{args.instance}", args.path,
                f"instances are {indexes[0]}..{indexes[-1]}" if len(indexes) > 1
                else f"its only instance is {indexes[0]}" if indexes
                else "it has no instances",
            )
        selected = chosen
    if note:
        from tui.names import visible  # the path's control characters written out

        print(visible(note), file=sys.stderr)  # once the listing is sure: errors stay one line
    from profiling.trace.loader import default_jobs  # --jobs, else every usable core
    from tui.parallel_write import utf8_errors, write_parts

    parts: Sequence[Any]
    if args.json:  # the text json.dumps(indent=1) gives, written from columns (fast)
        from profiling.analysis.kernels_json import kernels_json_tasks

        parts, end = kernels_json_tasks(analysis, selected), "\n"
    else:
        from tui.kernels_text import kernels_text_tasks

        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        parts, end = kernels_text_tasks(analysis, selected, width,
                                        utf8_errors=utf8_errors()), ""

    write_parts(parts, default_jobs())  # a long listing's parts made side by side
    sys.stdout.write(end)
    return 0


def _select(analysis: Any, region: str) -> Sequence[Any]:
    """The region's instances; from a reopened trace's stored table, as a sequence
    that makes no instance object unless one is asked for (``--json`` reads columns)."""
    from profiling.analysis.stored_regions import StoredRegions

    regions = analysis.regions
    return regions.select_lazily(region) if isinstance(regions, StoredRegions) \
        else regions.select(region)


def _default_instances(analysis: Any, path: str) -> tuple[Sequence[Any], str, str]:
    """No ``--region``: the instances of ``region_choice.choose_regions``, the one
    line for stderr saying which regions were chosen and why (stdout stays data),
    and the chosen names for an error message."""
    from profiling.analysis.region_choice import choose_regions, chosen_instances
    from tui.names import visible

    choice = choose_regions(analysis)
    if not choice.names:
        return ([], f"{path}: no --region given and this trace has no record_function "
                "regions: nothing to list", "no region")
    shown = ", ".join(visible(n) for n in choice.names[:5])
    more = f" and {len(choice.names) - 5} more" if len(choice.names) > 5 else ""
    note = f"{path}: no --region given; showing the {choice.branch}: {shown}{more}"
    return (chosen_instances(analysis, choice.names), note,
            f"the {choice.branch} ({shown}{more})")
