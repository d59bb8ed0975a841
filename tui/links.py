"""CPU <-> GPU links for the TUI, over the trace's one ``AnalysedTrace``.

The analysis answers per row (launch, enclosing op, launch chain, GPU rows
launched in a range).  ``LinkLookup`` gives the timeline the few questions it
asks, in trace rows with -1 for "none"; ``chain_text`` is the one way a launch
chain is written in the TUI and the CLI (``aten::masked_fill › aten::clone ›
aten::copy_ › cudaMemcpyAsync``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.launch_chain import ATTRIBUTIONS, attribution
from profiling.analysis.links import Links
from profiling.analysis.step_scope import query_lanes
from profiling.trace.model import GPU_KINDS, Kind
from tui.names import cells, clip, visible

_NONE = np.zeros(0, dtype=np.int64)


def chain_text(names: Sequence[str], width: int | None = None) -> str:
    """A launch chain (outermost op first, the runtime call last) as ``a › b › call``,
    names made visible; within ``width`` cells the middle ops give way to ``…``."""
    shown = [visible(n) for n in names if n]
    text = " › ".join(shown)
    if width is None or cells(text) <= width or len(shown) <= 2:
        return text if width is None else clip(text, width)
    short = " › ".join([shown[0], "…", *shown[-2:]]) if len(shown) > 3 else text
    return clip(short, width)


class LinkLookup:
    """Link questions of the timeline and the views; answers are trace rows (-1: none).

    The links are the ``AnalysedTrace``'s, computed on first use (once, whichever
    thread asks first), not here: building them walks every event (about half a
    second per million), and the timeline must be able to paint before that.
    """

    def __init__(self, analysed: AnalysedTrace) -> None:
        self.analysed = analysed
        self.trace = analysed.trace

    @property
    def analysis(self) -> Links:
        """The analysis's links (computed now if nobody has asked yet)."""
        return self.analysed.links

    @property
    def ready(self) -> bool:
        """Whether the links are computed already (asking costs nothing then)."""
        return self.analysed.ready("links")

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

    def full_chain_of(self, row: int) -> tuple[int, ...]:
        """Every op around GPU ``row``'s launch (annotations such as ``ProfilerStep#2``
        and ``attn_fwd`` included), outermost first, then the call."""
        if row < 0 or int(self.trace.kind[row]) not in GPU_KINDS:
            return ()
        return self.analysed.launch_chain(row)

    def chain_of(self, row: int) -> tuple[int, ...]:
        """The launch chain of GPU ``row`` as every view writes it (the one place that
        says which op launched an event): the ops from the outermost op inside its
        annotations down to the call, ``aten::masked_fill › aten::clone ›
        aten::copy_ › cudaMemcpyAsync``, as the Regions view lists it inside an
        ``attn_fwd`` instance; the annotations around it are ``region_of``."""
        chain = self.full_chain_of(row)
        return chain[len(self._leading_annotations(chain)) :]

    def region_of(self, row: int) -> tuple[int, ...]:
        """The annotations (``ProfilerStep#2``, ``attn_fwd``) the launch chain of GPU
        ``row`` starts in, outermost first."""
        return self._leading_annotations(self.full_chain_of(row))

    def _leading_annotations(self, chain: tuple[int, ...]) -> tuple[int, ...]:
        n = 0
        while n < len(chain) - 1 and int(self.trace.kind[chain[n]]) == Kind.USER_ANNOTATION:
            n += 1
        return chain[:n]

    def attribution_of(self, row: int) -> str:
        """How GPU ``row``'s launching op was found (``launch_chain.ATTRIBUTIONS``):
        ``external_id`` (the op torch's table credits too), ``nesting`` (only the op
        around the call; the table shows no device time there) or ``none``."""
        if row < 0 or not self.ready or int(self.trace.kind[row]) not in GPU_KINDS:
            return ""
        code = attribution(self.trace, self.analysed.links, np.array([row], dtype=np.int64))
        return ATTRIBUTIONS[int(code[0])]

    def ancestors(self, row: int) -> list[int]:
        """Slices enclosing ``row`` on its lane (by the loader's depth), innermost first.

        Each step looks back for the last earlier slice at most as deep as the one
        wanted, in chunks that grow fourfold (numpy, not a row-by-row walk): the
        parent of a slice late in a 10 M-event lane may be millions of rows back
        (``ProfilerStep`` around everything), and this runs on every selection."""
        t = self.trace
        out: list[int] = []
        lo = int(t.lane_start[int(t.lane[row])])
        want = int(t.depth[row]) - 1
        start = t.ts_ns[row]
        cur = row
        while want >= 0 and cur > lo:
            i = self._last_up_to(lo, cur, want)
            if i < 0:
                break
            want = min(want, int(t.depth[i]))
            if t.ts_ns[i] + t.dur_ns[i] >= start:
                out.append(i)
                want -= 1
            cur = i
        return out

    def _last_up_to(self, lo: int, hi: int, depth: int) -> int:
        """The last row in ``[lo, hi)`` at ``depth`` or shallower (flows left out), -1."""
        t = self.trace
        size = 64
        while hi > lo:
            a = max(lo, hi - size)
            hits = np.flatnonzero((t.depth[a:hi] <= depth) & (t.kind[a:hi] != Kind.FLOW))
            if hits.size:
                return a + int(hits[-1])
            hi, size = a, size * 4
        return -1

    # ---- CPU -> GPU ----

    def first_launched(self, row: int) -> np.ndarray:
        """``launched_rows`` with the first to run on the GPU moved to the front (one
        pass, no sort): what ``g`` and the details panel need of ``gpu_of``."""
        rows = self.launched_rows(row)
        if rows.size > 1:
            i = int(np.argmin(self.trace.ts_ns[rows]))
            if i:
                rows = rows.copy()
                rows[[0, i]] = rows[[i, 0]]
        return rows

    def launched_rows(self, row: int) -> np.ndarray:
        """``gpu_of`` in no particular order (no sort: what a span or a count needs;
        a ``ProfilerStep`` of millions of kernels costs one slice)."""
        if row < 0:
            return _NONE
        kind = int(self.trace.kind[row])
        if kind in GPU_KINDS or kind == Kind.FLOW:
            return _NONE
        if kind == Kind.RUNTIME:
            return self.analysis.launched_by_row(row)
        a, t = self.analysis, self.trace
        start = int(t.ts_ns[row])
        end = start + max(int(t.dur_ns[row]), 1)
        lanes = query_lanes(t, a.by_launch_lane, np.array([row]))  # a step: its process's
        lo, hi = a.launch_range(lanes, np.array([start]), np.array([end]))
        return a.by_launch[int(lo[0]) : int(hi[0])]

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
