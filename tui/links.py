"""CPU <-> GPU links for the TUI, over ``profiling.analysis.links``.

The analysis answers per row (launch, enclosing op, GPU rows launched in a
range).  This adapter gives the timeline the few questions it asks, in trace
rows with -1 for "none", and adds ``ancestors`` (the whole chain of slices
around a row), which the regions view uses to say "aten::masked_fill ›
aten::copy_" rather than only the innermost op.
"""

from __future__ import annotations

import threading

import numpy as np

from profiling.analysis.links import Links as AnalysisLinks
from profiling.analysis.links import link_gpu_events
from profiling.trace.model import GPU_KINDS, Kind, Trace

_NONE = np.zeros(0, dtype=np.int64)


class Links:
    """Link lookups over one trace; every method answers in trace rows (-1: none).

    The analysis is computed on first use (once, whichever thread asks first), not
    here: building it walks every event (about half a second per million), and
    the timeline must be able to paint before that.
    """

    def __init__(self, trace: Trace, analysis: AnalysisLinks | None = None) -> None:
        self.trace = trace
        self._analysis = analysis
        self._lock = threading.Lock()

    @property
    def analysis(self) -> AnalysisLinks:
        if self._analysis is None:
            with self._lock:
                if self._analysis is None:
                    self._analysis = link_gpu_events(self.trace)
        return self._analysis

    @property
    def ready(self) -> bool:
        """Whether the links are computed already (asking costs nothing then)."""
        return self._analysis is not None

    # ---- GPU -> CPU ----

    def launch_of(self, row: int) -> int:
        """The runtime call (cudaLaunchKernel, cudaMemcpyAsync, ...) that launched GPU ``row``."""
        if row < 0 or int(self.trace.kind[row]) not in GPU_KINDS:
            return -1
        return int(self.analysis.launch[row])

    def op_of(self, row: int) -> int:
        """The op (cpu_op or user annotation) around the launch of GPU ``row``, or
        around runtime call ``row``."""
        if row < 0:
            return -1
        kind = int(self.trace.kind[row])
        if kind in GPU_KINDS:
            return int(self.analysis.op[row])
        if kind == Kind.RUNTIME:
            for a in self.ancestors(row):
                if int(self.trace.kind[a]) in (Kind.CPU_OP, Kind.USER_ANNOTATION):
                    return a
        return -1

    def ancestors(self, row: int) -> list[int]:
        """Slices enclosing ``row`` on its lane (by the loader's depth), innermost first."""
        t = self.trace
        out: list[int] = []
        lo = int(t.lane_start[int(t.lane[row])])
        want = int(t.depth[row]) - 1
        start = t.ts_ns[row]
        i = row - 1
        while i >= lo and want >= 0:
            d = int(t.depth[i])
            if d == want and t.ts_ns[i] + t.dur_ns[i] >= start and int(t.kind[i]) != Kind.FLOW:
                out.append(i)
                want -= 1
            elif d < want:
                want = d
                continue
            i -= 1
        return out

    # ---- CPU -> GPU ----

    def gpu_of(self, row: int) -> np.ndarray:
        """GPU rows launched by runtime ``row``, or from inside op/annotation ``row``,
        in GPU start order."""
        if row < 0:
            return _NONE
        kind = int(self.trace.kind[row])
        if kind in GPU_KINDS or kind == Kind.FLOW:
            return _NONE
        if kind == Kind.RUNTIME:
            return self.analysis.launched_by_row(row)
        return self.analysis.launched_in(self.trace, row)
