"""What each part of a first open's analysis costs, one after another, in one process.

    python bench/analysis_parts.py FILE.json

Maps FILE from its index (made first if there is none) and builds, with nothing
stored or read from the analysis store (``ATTN_TUI_NO_ANALYSIS_STORE``), each part
that ``stats`` and the first open's warm-up (``profiling.analysis.warm``) build,
in the order they depend on one another, printing each one's seconds.  What the
warm-up's longest chain costs (op nesting, links, regions, the chosen regions'
launches and kernel columns, the findings) bounds how soon a first open can end,
whatever runs it.  A part built here for the first time includes what it shares
with later ones; the findings include the launches the store would have kept.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    importlib.import_module("tui.cli")  # the command's environment defaults, before NumPy
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.analysis.compare import summarize_trace
    from profiling.analysis.findings import trace_findings
    from profiling.analysis.instance_kernels import kernel_columns
    from profiling.analysis.region_choice import choose_regions, chosen_instances
    from profiling.analysis.stats import trace_stats
    from profiling.trace.loader import load_trace

    load_trace(sys.argv[1])  # the index, when there is none yet
    os.environ["ATTN_TUI_NO_ANALYSIS_STORE"] = "1"
    last = time.perf_counter()

    def mark(what: str) -> None:
        nonlocal last
        now = time.perf_counter()
        print(f"{what:34s} {now - last:6.3f} s")
        last = now

    analysed = AnalysedTrace(load_trace(sys.argv[1]))
    mark("map the index")
    _ = analysed.ops
    mark("op nesting")
    _ = analysed.links
    mark("links of GPU events")
    _ = analysed.regions
    mark("regions")
    trace_stats(analysed)
    mark("rest of stats")
    _ = analysed.key_averages
    mark("op table (key_averages)")
    summarize_trace(analysed)
    mark("rest of compare's summary")
    kernel_columns(analysed, chosen_instances(analysed, choose_regions(analysed).names))
    mark("launches and kernel columns")
    trace_findings(analysed)
    mark("findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
