"""What a trace's first open stores for the commands after it.

The index (``profiling.trace.cache``) makes a reopen map the trace instead of
parsing it, and ``AnalysedTrace`` keeps each analysis result with it once it is
computed.  Left at that, the first ``compare``, ``table``, ``kernels`` or
``findings`` after a first ``stats`` would still compute the op table, the
default regions' launches and kernel columns, and the findings: on a 1 GB trace
0.3-1 s each, where a mapped copy takes a tenth of that.  Those are the results
every view and command asks for, so the first open computes them too (``warm``),
beside the command's own work, and a reopen finds them all.  The cost is the
first open's: on 2 cores, 1 GB, about 0.5-1 s more (10-15 %), and 90 MB more at its
peak.  ``warm`` runs on one thread beside the command: split over two it was slower
there and took 130 MB more (the two halves each hold their own arrays at once).

``warm`` asks exactly what the commands ask (the same instances in the same
order), so what it stores is what they look up; anything it could not store is
simply computed by the command that needs it.
"""

from __future__ import annotations

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import summarize_trace
from profiling.analysis.findings import trace_findings
from profiling.analysis.instance_kernels import kernel_columns
from profiling.analysis.region_choice import choose_regions, chosen_instances


def warm(analysed: AnalysedTrace) -> None:
    """Compute and store the op table and the implementation of ``compare``'s
    default regions (``summarize_trace``), the kernel columns (and launches) of the
    regions ``kernels`` lists by default, and the default findings."""
    summarize_trace(analysed)
    choice = choose_regions(analysed)
    if choice.names:
        kernel_columns(analysed, chosen_instances(analysed, choice.names))
    trace_findings(analysed)
