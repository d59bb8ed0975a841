"""The launch chain of a GPU event: every op around the call that enqueued it.

``Links`` answers "which runtime call launched this kernel, and which op was
innermost around that call".  Explaining a kernel needs the whole chain, from
the op the user wrote down to the call: ``aten::masked_fill > aten::clone >
aten::copy_ > cudaMemcpyAsync`` says that a masked fill copies its input, where
``aten::copy_`` alone does not.  The chain is read from the one op nesting the
links use (``OpTree``, torch's stack rule), so the innermost op of every chain is
exactly ``Links.op``.  Inside a region instance the chain starts at the
outermost op inside it: an annotation region (``attn_fwd``, or a profiler step,
whichever way the trace spells it) is not part of its own chains, an op region
(``aten::scaled_dot_product_attention`` taken as the region) is, since it is the
op that launched.

The kernels listing, ``stats``, the findings' evidence, the timeline's details
and the Regions view all take their chains from here.

The chain follows launch nesting, which can name an op that torch would not
credit: ``table`` (``device_time``) gives a GPU event's time to an op only when
that op's External id is the launching call's (or, where the call has none, the
event's own).  ``attribution`` says which rule the innermost op satisfies, so a
listing can label the ops found by nesting alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiling.analysis.links import Links, OpTree
from profiling.analysis.regions import STEP_PREFIX
from profiling.analysis.step_scope import scopes
from profiling.trace.model import NO_ID, Kind, Trace

ATTRIBUTIONS = ("external_id", "nesting", "none")
"""How a GPU event's ``launched_by`` op was found (``attribution``)."""


@dataclass(frozen=True)
class Launch:
    """One GPU event and its launch chain (trace rows; ``chain`` is empty when the
    launching call is not in the trace)."""

    gpu_row: int
    chain: tuple[int, ...]  # ops, outermost first, then the runtime/driver call

    @property
    def runtime_row(self) -> int:
        """The runtime or driver call (cudaLaunchKernel, cudaMemcpyAsync, ...), -1 if none."""
        return self.chain[-1] if self.chain else -1

    @property
    def op_chain(self) -> tuple[int, ...]:
        """The ops of the chain, outermost first, without the call."""
        return self.chain[:-1]

    @property
    def op_row(self) -> int:
        """The innermost op around the launch (the op that launched it), -1 if none."""
        return self.chain[-2] if len(self.chain) > 1 else -1


def launch_chain(trace: Trace, links: Links, ops: OpTree, gpu_row: int,
                 within: int = -1) -> tuple[int, ...]:
    """Rows from the outermost op (inside region row ``within``, when given) down to
    the runtime call that launched GPU row ``gpu_row``; () when it has no launch."""
    call = int(links.launch[gpu_row])
    if call < 0:
        return ()
    chain = [call]
    if within >= 0:
        step = trace.name(within).startswith(STEP_PREFIX)  # its ops: any thread of its
        n = len(trace.lanes)  # process; per lane, the scope an op on it is in
        scope_of = scopes(trace, np.arange(n), np.full(n, step))
        scope = int(scope_of[trace.lane[within]])
        start = int(trace.ts_ns[within])
        end = start + int(trace.dur_ns[within])
        keeps_itself = int(trace.kind[within]) == int(Kind.CPU_OP) and not step
    op = int(links.op[gpu_row])
    while op >= 0:
        if within >= 0:
            if op == within:
                if keeps_itself:
                    chain.append(op)
                break
            inside = (int(scope_of[trace.lane[op]]) == scope and int(trace.ts_ns[op]) >= start
                      and int(trace.ts_ns[op]) + int(trace.dur_ns[op]) <= end)
            if not inside:
                break
        chain.append(op)
        op = ops.parent(op)
    return tuple(reversed(chain))


def chain_names(trace: Trace, chain: tuple[int, ...]) -> tuple[str, ...]:
    """The names along a chain (for JSON and for the views to format)."""
    return tuple(trace.name(r) for r in chain)


def attribution(trace: Trace, links: Links, gpu_rows: np.ndarray) -> np.ndarray:
    """Per GPU row, how its ``launched_by`` op (``Links.op``) was found, as an index
    into ``ATTRIBUTIONS``: ``external_id`` when that op carries the id torch's rule
    wants (the launching call's External id, else the event's own), so ``table``
    credits it too; ``nesting`` when it is only the innermost op around the call
    (torch shows no device time for it, or gives it to another op); ``none`` when
    there is no such op (no launching call in the trace, or a call outside any op).
    """
    rows = np.asarray(gpu_rows, dtype=np.int64)
    out = np.full(rows.shape[0], ATTRIBUTIONS.index("none"), dtype=np.int64)
    if rows.shape[0] == 0:
        return out
    ext = trace.external_id
    call, op = links.launch[rows], links.op[rows]
    call_ext = np.where(call >= 0, ext[np.maximum(call, 0)], NO_ID)
    own = np.where(ext[rows] > 0, ext[rows], NO_ID)
    wanted = np.where(call_ext > 0, call_ext, own)
    op_ext = np.where(op >= 0, ext[np.maximum(op, 0)], NO_ID)
    has_op = (call >= 0) & (op >= 0)
    out[has_op] = ATTRIBUTIONS.index("nesting")
    out[has_op & (wanted > 0) & (op_ext == wanted)] = ATTRIBUTIONS.index("external_id")
    return out


def attribution_counts(trace: Trace, links: Links, gpu_rows: np.ndarray) -> dict[str, int]:
    """``{attribution: count}`` over ``gpu_rows``, the labels that occur only."""
    counts = np.bincount(attribution(trace, links, gpu_rows), minlength=len(ATTRIBUTIONS))
    return {a: int(n) for a, n in zip(ATTRIBUTIONS, counts.tolist(), strict=True) if n}
