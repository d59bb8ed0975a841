"""The Findings view's content: ``profiling.analysis.findings`` per open file (pure).

The findings are the headless ``attn-tui findings`` command's, computed over the
tab's one ``AnalysedTrace`` (the links and regions it already made while
loading).  This module only turns them into table cells (names made visible,
times with units) and says where on the timeline each piece of evidence lies,
so the widget stays a thin renderer.
"""

from __future__ import annotations

from dataclasses import dataclass

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.findings import EvidenceRow, Finding, TraceFindings
from profiling.analysis.job_findings import findings_of
from profiling.trace.model import Trace
from tui.fmt import fmt_ns
from tui.links import chain_text
from tui.names import clip, short_name, visible

FINDING_COLUMNS = ("severity", "finding", "region", "instances", "evidence")
EVIDENCE_COLUMNS = ("event", "kind", "inst", "start", "duration", "launched by", "note")


def find(analysed: AnalysedTrace) -> TraceFindings:
    """The trace's findings (its attention regions, else its profiler steps); a job's
    straggler findings first, then each rank's, titled by rank (``job_findings``)."""
    return findings_of(analysed)


def finding_cells(f: Finding, title_limit: int = 72) -> tuple[str, ...]:
    """One ``FINDING_COLUMNS`` row: names made visible, the title clipped to fit."""
    return (
        f.severity,
        clip(visible(f.title), title_limit),
        visible(f.region),
        f.instances_text(),
        str(len(f.evidence)),
    )


def evidence_cells(e: EvidenceRow, name_limit: int = 48,
                   chain_limit: int = 64) -> tuple[str, ...]:
    """One ``EVIDENCE_COLUMNS`` row; times relative to the trace start."""
    return (
        clip(short_name(e.name, name_limit), name_limit),
        e.kind,
        "" if e.instance is None else f"#{e.instance}",
        fmt_ns(e.start_us * 1000),
        fmt_ns(e.dur_us * 1000),
        chain_text(e.launch_chain, chain_limit),
        visible(e.note),
    )


@dataclass(frozen=True)
class Jump:
    """Where the timeline goes for one piece of evidence: select ``row``, show [t0, t1]."""

    row: int
    t0: int
    t1: int


def jump_of(trace: Trace, e: EvidenceRow) -> Jump | None:
    """The evidence event's absolute time range (None when its row is not in the trace)."""
    if not 0 <= e.row < len(trace):
        return None
    t0 = int(trace.ts_ns[e.row])
    return Jump(e.row, t0, t0 + max(int(trace.dur_ns[e.row]), 1))
