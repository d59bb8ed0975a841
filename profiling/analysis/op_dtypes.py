"""The input dtype of every op that ``findings`` asks about, read from the file once.

The fp32-upcast rule asks, for the GEMM/softmax ops and the casts of a region,
what dtype their inputs are (``Input type``, ``Concrete Inputs``: args, which
live in the file, not in the model).  Asked instance by instance that is one
args read per op: 230,000 reads, seconds, on a 1 GB trace.  Here every such op
of the trace is read once, in file order (each chunk of the file decoded once),
and the answers kept as two small arrays that ``AnalysedTrace`` stores with the
index, so a reopen reads no args at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiling.analysis.device_peaks import dtype_family
from profiling.trace.model import Kind, Trace

COMPUTE_OPS = frozenset({"aten::bmm", "aten::mm", "aten::matmul", "aten::baddbmm",
                         "aten::_softmax", "aten::softmax", "aten::_safe_softmax"})
"""Ops whose fp32 inputs mean fp32 math (the GEMMs and softmax of attention)."""
CAST_OPS = ("aten::to", "aten::_to_copy")
FAMILIES = ("bf16", "fp16", "fp32")
"""``family`` codes: index into this, -1 for none."""


def dtype_from_types(types: object) -> str | None:
    """bf16/fp16/fp32 of the first tensor input in an op's ``Input type`` list."""
    if isinstance(types, list):
        for item in types:
            family = dtype_family(str(item)) if item else None
            if family:
                return family
    return None


def is_upcast(name: str, args: dict[str, Any]) -> bool:
    """``aten::to``/``aten::_to_copy`` of a bf16/fp16 tensor to float32 (ScalarType 6)."""
    if name not in CAST_OPS:
        return False
    concrete = args.get("Concrete Inputs")
    if dtype_from_types(args.get("Input type")) not in ("bf16", "fp16"):
        return False
    return isinstance(concrete, list) and len(concrete) > 1 and str(concrete[1]) == "6"


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
    """Read the args of every compute or cast op once, in file order."""
    wanted = [i for n in (*COMPUTE_OPS, *CAST_OPS) if (i := trace.string_ids(n)) is not None]
    rows = np.flatnonzero(np.isin(trace.name_id, wanted) & (trace.kind == int(Kind.CPU_OP)))
    rows = rows.astype(np.int64)
    family = np.full(rows.shape[0], -1, dtype=np.int8)
    upcast = np.zeros(rows.shape[0], dtype=bool)
    if rows.shape[0]:
        order = np.argsort(trace.source_index[rows], kind="stable")  # file order: chunk by chunk
        for i, args in zip(order.tolist(), trace.args_of(rows[order]), strict=True):
            f = dtype_from_types(args.get("Input type"))
            family[i] = FAMILIES.index(f) if f else -1
            upcast[i] = is_upcast(trace.name(int(rows[i])), args)
    return OpDtypes(rows, family, upcast)
