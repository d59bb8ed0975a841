"""``attn-tui diff A B [...] [--region NAME] [--instance K] [--json | --markdown]``.

The kernel sequences of one typical instance of a region (the median by GPU
time, or ``--instance K``) in each trace, aligned like ``git diff`` aligns lines
(``profiling.analysis.kernel_diff``): ``=`` in both, ``-`` only in A (the first
trace, the base), ``+`` only in the other.  With more than two traces the base
is set against each other one and the table has one column group per other
trace.  ``--json`` prints a list of pairwise diffs (one for two traces);
``--markdown`` a GitHub table; otherwise a Rich table.  Names are data: cells
are ``Text`` and markdown cells are escaped, so no name reads as markup.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Cell = tuple[str, float | None, float | None]
"""A merged line's cell for one other trace: (op, its µs, its difference from the base)."""


@dataclass
class _Line:
    """One row of the merged table: a base kernel, or a kernel only another trace has."""

    name: str
    base_us: float | None
    chain: tuple[str, ...]
    cells: list[Cell] = field(default_factory=list)


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.kernel_diff import MissingRegion, diff_traces
    from profiling.analysis.region_choice import choose_regions
    from profiling.errors import AttnTuiError
    from tui.loading import analysed_each

    paths: list[str] = list(args.paths)
    if len(paths) < 2:
        raise AttnTuiError("diff needs two traces or more", "",
                           "give a base trace and one or more to set against it")
    traces = analysed_each(paths, args)
    if args.region is not None and not any(t.instances(args.region) for t in traces):
        names = traces[0].regions.names()
        raise AttnTuiError(f"no region named {args.region!r} in any of the traces", "",
                           "regions in the base: " + ", ".join(names[:8])
                           if names else "give --region NAME of a region they have")
    if args.region is None and not choose_regions(traces[0]).names:
        # as kernels does: a trace with no region at all has nothing to list, not an error
        return _nothing(args, f"{paths[0]}: no --region given and this trace has no "
                        "record_function regions")
    left_out: list[MissingRegion] = []
    try:
        diffs = diff_traces(traces, args.region, args.instance, left_out)
    except MissingRegion as exc:  # the base lacks the region another trace has
        return _nothing(args, f"the base, {exc}")
    if not diffs:  # every other trace lacks it: the same as a base without a region
        return _nothing(args, "; ".join(str(e) for e in left_out))
    from tui.names import visible

    for missing in left_out:
        sys.stderr.write(visible(f"{missing}: left out of the diff") + "\n")
    if args.json:
        doc = [d.as_json() for d in diffs]
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(doc, allow_nan=False) + "\n")
    elif args.markdown:
        sys.stdout.write(markdown(diffs))
    else:
        _print(diffs)
    return 0


def _nothing(args: argparse.Namespace, why: str) -> int:
    """Nothing can be compared: one line on stderr, ``[]`` for ``--json``, exit 0."""
    from tui.names import visible

    sys.stderr.write(visible(f"{why}: nothing to diff") + "\n")
    if args.json:
        sys.stdout.write("[]\n")
    return 0


def merged_lines(diffs: Sequence[Any]) -> list[_Line]:
    """Base kernels in order, each other trace's ``+`` kernels where its diff put them.
    A cell is (op, that trace's µs, its difference from the base)."""
    n = sum(r.op != "+" for r in diffs[0].rows) if diffs else 0
    at: list[list[Any]] = []
    before: list[list[list[Any]]] = []
    for d in diffs:
        row_at: list[Any] = [None] * n
        ins: list[list[Any]] = [[] for _ in range(n + 1)]
        i = 0
        for r in d.rows:
            if r.op == "+":
                ins[i].append(r)
            else:
                row_at[i] = r
                i += 1
        at.append(row_at)
        before.append(ins)
    lines: list[_Line] = []
    for i in range(n + 1):
        for k, ins in enumerate(before):
            for r in ins[i]:
                cells: list[Cell] = [("", None, None)] * len(diffs)
                cells[k] = ("+", r.b_us, r.diff_us)
                lines.append(_Line(r.b_name or "", None, r.b_launch_chain, cells))
        if i < n:
            first = at[0][i]
            line = _Line(first.a_name or "", first.a_us, first.a_launch_chain)
            for k in range(len(diffs)):
                r = at[k][i]
                op = "≈" if r.op == "=" and r.same_args is False else r.op
                line.cells.append((op, r.b_us, r.diff_us if r.op == "=" else None))
            lines.append(line)
    return lines


def _title(d: Any, side: str) -> str:
    s = getattr(d, side)
    return f"{s.label}: {s.region} #{s.instance} of {s.instances}"


def totals_lines(diffs: Sequence[Any]) -> list[str]:
    """One sentence per other trace: matched time, and time in each side's own kernels."""
    from tui.fmt import fmt_time

    out = []
    for d in diffs:
        t = d.totals
        a, b = d.a.label, d.b.label
        out.append(
            f"{b} vs {a}: matched {t['matched']} ({fmt_time(t['matched_a_us'], 'us')} → "
            f"{fmt_time(t['matched_b_us'], 'us')}), only in {a} {t['only_a']} "
            f"({fmt_time(t['only_a_us'], 'us')}), only in {b} {t['only_b']} "
            f"({fmt_time(t['only_b_us'], 'us')})")
    return out


def _cells(line: _Line) -> list[str]:
    from tui.fmt import fmt_time

    out = [fmt_time(line.base_us, "us") if line.base_us is not None else ""]
    for op, us, diff in line.cells:
        out += [op, fmt_time(us, "us") if us is not None else "",
                ("+" if diff > 0 else "") + fmt_time(diff, "us") if diff is not None else ""]
    return out


def _headers(diffs: Sequence[Any]) -> list[str]:
    heads = [diffs[0].a.label]
    for d in diffs:
        heads += ["op", d.b.label, "Δ"]
    return heads


def launch_text(chain: Sequence[str], width: int) -> str:
    """The ops of a launch chain, outermost first, without the runtime call; when they
    do not fit, the innermost ones (those that say what launched it) after ``… ›``."""
    from tui.links import chain_text

    ops = list(chain[:-1])
    if not ops:
        return "-"
    text = chain_text(ops)
    for k in range(1, len(ops)):
        if len(text) <= width:
            break
        text = "… › " + chain_text(ops[k:])
    return chain_text([text], width)


def _md(text: str) -> str:
    from tui.names import visible

    out = visible(text).replace("\\", "\\\\")
    for ch in "|*_`[]<>#":
        out = out.replace(ch, "\\" + ch)
    return out or " "


def markdown(diffs: Sequence[Any]) -> str:
    """A GitHub table of the merged lines, the instances above it, totals under it."""
    from tui.names import short_name

    heads = ["kernel", *_headers(diffs), "launched by"]
    lines = [_md(f"{_title(diffs[0], 'a')}; " + "; ".join(_title(d, "b") for d in diffs)), "",
             "| " + " | ".join(_md(h) for h in heads) + " |",
             "|" + "".join("---|" if h in ("kernel", "op", "launched by") else "---:|"
                           for h in heads)]
    for line in merged_lines(diffs):
        cells = [short_name(line.name, 70), *_cells(line), launch_text(line.chain, 70)]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    lines += [""] + [f"- {_md(t)}" for t in totals_lines(diffs)]
    return "\n".join(lines) + "\n"


TABLE_ROWS = 5000
"""Rows the table (no format option) shows, as ``sql``'s: an annotation around a whole
run aligns 100,000 GPU events or more, a minute of table layout that nobody reads;
the totals still count every row, and the formats print them all."""


def _print(diffs: Sequence[Any]) -> None:
    from tui.names import short_name, visible
    from tui.plain_text import Column, Item, Line, Table, print_items

    title = visible(f"{_title(diffs[0], 'a')}; " + "; ".join(_title(d, "b") for d in diffs))
    columns = [Column("kernel", max_width=60)] + [
        Column(visible(h), "left" if h == "op" else "right") for h in _headers(diffs)]
    columns.append(Column("launched by", max_width=50))
    lines = merged_lines(diffs)
    rows = [[short_name(line.name, 60), *_cells(line), launch_text(line.chain, 50)]
            for line in lines[:TABLE_ROWS]]
    items: list[Item] = [Table(columns, rows, title, title_style="")]
    if len(lines) > TABLE_ROWS:
        items.append(Line(f"the first {TABLE_ROWS} of {len(lines)} rows shown: --markdown "
                          "or --json prints every row", "bold"))
    items += [visible(sentence) for sentence in totals_lines(diffs)]
    items.append(Line("= same kernel; ≈ same kernel stem, other template arguments; "
                      "- only in the base; + only in that trace", "dim"))
    print_items(items, 200)
