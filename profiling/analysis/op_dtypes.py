"""The input dtype of every op that ``findings`` asks about, read from the file once.

The fp32-upcast rule asks, for the GEMM/softmax ops and the casts of a region,
what dtype their inputs are (``Input type``, ``Concrete Inputs``: args, which
live in the file, not in the model).  Asked instance by instance that is one
args read per op: 230,000 reads, seconds, on a 1 GB trace.  The decoding workers
read them while they decode (``profiling.trace.op_inputs``: the model's
``op_input`` column), so a loaded trace reads no args here; the ops they gave no
answer for (a trace built in memory) are read once, in file order.  The answers
are two small arrays that ``AnalysedTrace`` stores with the index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiling.trace.model import NOT_READ, Kind, Trace
from profiling.trace.op_inputs import (
    CAST_OPS,
    COMPUTE_OPS,
    FAMILIES,
    NO_FAMILY,
    UPCAST,
    input_code,
)


@dataclass(frozen=True)
class OpDtypes:
    """Per op of ``COMPUTE_OPS``/``CAST_OPS`` (``rows``, ascending): its input dtype
    family (``FAMILIES`` index, -1 none) and whether it is an upcast to fp32."""

    rows: np.ndarray
    family: np.ndarray  # int8
    upcast: np.ndarray  # bool

    def _at(self, row: int) -> int:
        i = int(np.searchsorted(self.rows, row))
        return i if i < self.rows.shape[0] and int(self.rows[i]) == row else -1

    def family_of(self, row: int) -> str | None:
        i = self._at(row)
        return FAMILIES[int(self.family[i])] if i >= 0 and self.family[i] >= 0 else None

    def is_upcast(self, row: int) -> bool:
        i = self._at(row)
        return bool(self.upcast[i]) if i >= 0 else False


def op_dtypes(trace: Trace) -> OpDtypes:
    """The codes the decoder read (``Trace.op_input``); the args of any op it gave
    no answer for (a trace built in memory) are read once, in file order."""
    wanted = [i for n in (*COMPUTE_OPS, *CAST_OPS) if (i := trace.string_ids(n)) is not None]
    rows = np.flatnonzero(np.isin(trace.name_id, wanted) & (trace.kind == int(Kind.CPU_OP)))
    rows = rows.astype(np.int64)
    codes = np.array(trace.op_input[rows], dtype=np.int8)
    unread = np.flatnonzero(codes == NOT_READ)
    if unread.shape[0]:
        order = unread[np.argsort(trace.source_index[rows[unread]], kind="stable")]
        for i, args in zip(order.tolist(), trace.args_of(rows[order]), strict=True):
            codes[i] = input_code(trace.name(int(rows[i])), args)
    family = np.where((codes & 3) == NO_FAMILY, -1, codes & 3).astype(np.int8)
    return OpDtypes(rows, family, (codes & UPCAST) != 0)
