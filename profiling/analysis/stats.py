"""The ``stats --json`` object: what is in a trace, in one pass over the analysis.

Fields (DESIGN.md section 5): ``events`` (entries in the file's event list,
metadata included, as the file counts them), ``lanes`` (a list in display
order), ``regions`` and ``copies`` (objects keyed by name, in order of first
appearance and of total time; the same shape ``compare --json`` uses for its
regions; each copy also has ``attribution``, ``{external_id|nesting|none:
count}``, saying how its ``launched_by`` ops were found: ``launch_chain``) and
``warnings`` (the loader's repairs plus what the analysis
noticed, such as GPU events whose launch is outside the trace).  Also:
``path``, ``rows`` (events kept as model rows, metadata excluded),
``duration_us``, ``gpu_events``, ``orphans`` and ``orphans_by_cause`` (``{cause:
count}``, the causes of ``profiling.analysis.orphans``), ``rank`` and ``world_size``
(``distributedInfo``, null when the trace has none).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from profiling.analysis.analysed import AnalysedTrace, as_analysed
from profiling.analysis.correlation import ranks_in
from profiling.analysis.launch_chain import attribution_counts
from profiling.analysis.links import Links, LinkSource
from profiling.analysis.orphans import CAUSES, orphan_causes, orphans_by_cause
from profiling.analysis.ranks import trace_rank, world_size
from profiling.trace.model import Kind, Trace


def analysis_warnings(trace: Trace, links: Links) -> list[str]:
    """What the analysis could not tie together, in words a user can act on: one
    line per orphan cause (``orphans.CAUSES``) with its count and kinds."""
    out = []
    if links.orphans.shape[0]:
        causes = orphan_causes(trace, links)
        for i, (key, words) in enumerate(CAUSES.items()):
            rows = links.orphans[causes == i]
            if rows.shape[0] == 0:
                continue
            kinds = Counter(int(k) for k in trace.kind[rows].tolist())
            parts = [
                f"{kinds[k]} {label}"
                for k, label in ((Kind.KERNEL, "kernels"), (Kind.MEMCPY, "memcpys"),
                                 (Kind.MEMSET, "memsets"))
                if kinds[k]
            ]
            out.append(
                f"{rows.shape[0]} GPU events ({', '.join(parts)}) have no launching call in "
                f"the trace ({key}): they {words}; they count for no op or region"
            )
    by_flow = int((links.source[links.gpu_rows] == LinkSource.FLOW).sum())
    if by_flow:
        out.append(f"{by_flow} GPU events were linked to their launch by flow events only "
                   "(no matching 'correlation' arg)")
    return out


def lane_entries(trace: Trace) -> list[dict[str, Any]]:
    """``stats --json`` ``lanes``: kind, pid, tid, label, events, in display order."""
    return [
        {
            "kind": lane.kind,
            "pid": lane.pid,
            "tid": lane.tid,
            "label": lane.label,
            "events": lane.events,
        }
        for lane in trace.lanes
    ]


def _without_name(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "name"}


def trace_stats(analysed: AnalysedTrace | Trace) -> dict[str, Any]:
    """The whole ``stats --json`` object."""
    a = as_analysed(analysed)
    trace = a.trace
    return {
        "path": trace.path,
        # distributedInfo: which rank of a job; none for a file merging ranks (job_split),
        # which keeps only its first rank's distributedInfo
        "rank": None if ranks_in([g.pid for g in trace.groups]) else trace_rank(trace.metadata),
        "world_size": world_size(trace.metadata),
        "events": trace.n_entries,
        "rows": len(trace),
        "duration_us": (trace.end_ns_max - trace.start_ns) / 1000.0 if len(trace) else 0.0,
        "gpu_events": int(a.links.gpu_rows.shape[0]),
        "orphans": int(a.links.orphans.shape[0]),
        "orphans_by_cause": orphans_by_cause(trace, a.links),
        "lanes": lane_entries(trace),
        "regions": {s.name: _without_name(s.as_json()) for s in a.regions.summaries()},
        "copies": {c.name: {**_without_name(c.as_json()),
                            "attribution": attribution_counts(trace, a.links, c.rows)}
                   for c in a.copies},
        "warnings": list(trace.warnings) + analysis_warnings(trace, a.links),
    }
