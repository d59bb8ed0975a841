"""``attn-tui findings PATH... [--json | --markdown]``: what an expert would point out.

The findings come from ``profiling.analysis.findings`` (plain dataclasses the
TUI's Findings panel renders too).  ``--json`` prints ``{path, regions,
findings, notes}`` with every finding's evidence rows (trace ``row`` numbers
the TUI jumps to); ``--markdown`` a list for an issue or a PR; otherwise Rich
text.  Names are data: always ``Text`` or escaped, never markup.

A job (its folder, or its rank traces) gives its straggler findings first, then
each rank's own, labelled by rank (``profiling.analysis.job_findings``): the
JSON object gains ``job`` and a ``rank`` per finding (null: about the whole job);
the text and Markdown title each rank's findings ``rank 3 · ...``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.findings import trace_findings
    from profiling.analysis.job_split import merged_file_job
    from tui.loading import analysed_for_command

    paths: list[str] = list(getattr(args, "paths", None) or [args.path])
    if len(paths) > 1:
        return _run_job(args, paths)
    analysed = analysed_for_command(paths[0], args)
    merged = merged_file_job(analysed.trace, paths[0], getattr(args, "align", "clock"))
    if merged is not None:  # one file of several ranks: its job's findings, as the app's
        return _print_job(args, merged)
    result = trace_findings(analysed)
    if args.json:  # json.dumps(indent=1)'s text, its long instance lists written in C
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(result.as_json(), allow_nan=False, default=str))
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(markdown(result))
    else:
        _print(result)
    return 0


def _run_job(args: argparse.Namespace, paths: list[str]) -> int:
    """Several traces: the ranks of one job (``job_findings``), else one clear line.
    The heads are read first, so a capture folder is refused before anything loads."""
    from profiling.analysis.job import group_paths
    from profiling.analysis.job_merge import job_path
    from profiling.errors import AttnTuiError
    from tui.loading import load_job_for_command

    if len(group_paths(paths)) != 1:
        shown = ", ".join(os.path.basename(p) for p in paths[:4]) + (", ..." if len(paths) > 4
                                                                      else "")
        raise AttnTuiError(f"holds {len(paths)} traces ({shown}) that are not the ranks of one "
                           "job; this command reads one trace or one job", job_path(paths),
                           "name one of them, or give the folder to 'attn-tui compare', 'open' "
                           "or 'ranks' (a job's ranks)")
    return _print_job(args, load_job_for_command(paths, args, "findings"))


def _print_job(args: argparse.Namespace, job: Any) -> int:
    """A job's findings (``job_findings``) as JSON, Markdown or text."""
    from profiling.analysis.job_findings import job_findings

    found = job_findings(job)
    if args.json:
        from profiling.analysis.json_text import dumps_indent1

        sys.stdout.write(dumps_indent1(found.as_json(), allow_nan=False, default=str))
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(markdown(found.labelled(), found.header))
    else:
        _print(found.labelled(), found.header)
    return 0


def _md(text: str) -> str:
    """Inline code for trace names: backticks inside are doubled out, controls escaped."""
    from tui.names import visible

    text = visible(text).replace("`", "'")
    return f"`{text}`"


def _plain(text: str) -> str:
    from tui.names import visible

    text = visible(text).replace("\\", "\\\\")
    for ch in "|_*[]`":
        text = text.replace(ch, "\\" + ch)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def markdown(result: object, job: str = "") -> str:
    """Findings as a Markdown list: title, detail, suggestion and the evidence rows
    (``job``: a job's header line, under the title)."""
    from profiling.analysis.findings import TraceFindings
    from tui.fmt import fmt_time
    from tui.names import short_name

    assert isinstance(result, TraceFindings)
    lines = [f"## Findings: {_md(result.path)}", ""]
    if job:
        lines += [_plain(job), ""]
    if result.regions:
        lines.append("Regions examined: " + ", ".join(_md(r) for r in result.regions))
        lines.append("")
    if not result.findings:
        lines += [f"_{_plain(n)}_" for n in result.notes] + [""]
        return "\n".join(lines)
    for f in result.findings:
        inst = f.instances_text()
        lines.append(f"- **{f.severity}** · {_plain(f.title)} ({_md(f.id)}, {_md(f.region)} "
                     f"{inst})")
        if f.detail:
            lines.append(f"  - {_plain(f.detail)}")
        lines.append(f"  - Try: {_plain(f.suggestion)}")
        for e in f.evidence:
            via = f" ← {_md(e.launched_by)}" if e.launched_by else ""
            note = f" ({_plain(e.note)})" if e.note else ""
            lines.append(f"  - row {e.row}: {_md(short_name(e.name, 70))} {e.kind}, "
                         f"{fmt_time(e.dur_us, 'us')} at {fmt_time(e.start_us, 'us', digits=4)}"
                         f"{via}{note}")
    lines.append("")
    return "\n".join(lines)


_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}


def _print(result: object, job: str = "") -> None:
    from rich.console import Console
    from rich.text import Text

    from profiling.analysis.findings import TraceFindings
    from tui.fmt import fmt_time
    from tui.names import short_name, visible

    assert isinstance(result, TraceFindings)
    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 160
    head = Text(visible(result.path), style="bold")
    if result.regions:
        head.append("  regions: " + ", ".join(visible(r) for r in result.regions))
    console.print(head)
    if job:
        console.print(Text(visible(job)))
    for note in result.notes:
        console.print(Text(visible(note), style="dim"))
    for f in result.findings:
        line = Text()
        line.append(f"{f.severity:>6} ", style=_STYLE.get(f.severity, ""))
        line.append(visible(f.title), style="bold")
        line.append(f"  [{f.id}] {visible(f.region)}, {f.instances_text()}", style="dim")
        console.print(line)
        if f.detail:
            console.print(Text("       " + visible(f.detail)))
        console.print(Text("       try: " + visible(f.suggestion), style="green"))
        for e in f.evidence:
            row = Text(f"         row {e.row:>7} ", style="dim")
            row.append(short_name(e.name, 60))
            row.append(f"  {e.kind} {fmt_time(e.dur_us, 'us')} @ "
                       f"{fmt_time(e.start_us, 'us', digits=4)}", style="dim")
            if e.note:
                row.append(f"  {visible(e.note)}")
            if e.launched_by:
                row.append(f"  ← {visible(e.launched_by)}", style="dim")
            console.print(row)
