"""The input dtype of the GEMM, softmax and cast ops, read while the file is decoded.

The fp32-upcast finding asks, for each such op, what dtype its inputs are and
whether it casts bf16/fp16 to float32: facts in the op's ``args`` (``Input type``,
``Concrete Inputs``), which the model does not keep.  Read after the load, that
is one args decode per op, single-threaded: 254,000 ops and 7 s on a 1 GB trace,
paid by the first ``findings`` after every first open.  The decoding workers have
each event's text in hand anyway, so they keep these two fields as raw JSON
(``events.Args``) and read them for the few named ops only; the answer is one
``int8`` column of the model (``Trace.op_input``), stored with the index.

A code is ``NOT_READ`` (-1) where the decoder gave no answer (another op, or a
trace built in memory: ``profiling.analysis.op_dtypes`` then reads the args);
otherwise the family's index in ``FAMILIES`` (``NO_FAMILY`` for none), plus
``UPCAST`` when the op is a cast to float32 of a bf16/fp16 tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from profiling.trace.model import NOT_READ

COMPUTE_OPS = frozenset({"aten::bmm", "aten::mm", "aten::matmul", "aten::baddbmm",
                         "aten::_softmax", "aten::softmax", "aten::_safe_softmax"})
"""Ops whose fp32 inputs mean fp32 math (the GEMMs and softmax of attention)."""
CAST_OPS = ("aten::to", "aten::_to_copy")
FAMILIES = ("bf16", "fp16", "fp32")
"""Family codes: index into this."""
OP_NAMES = (*sorted(COMPUTE_OPS), *CAST_OPS)
"""The ops whose input dtype is read."""

NO_FAMILY, UPCAST = 3, 4
NO_RAW = msgspec.Raw(b"")
"""An absent args field (``events.Args``): not JSON, read as absent."""


def dtype_family(dtype: str | None) -> str | None:
    """``bf16``/``fp16``/``fp32`` from any spelling (``torch.bfloat16``, ``c10::Half``...)."""
    if not dtype:
        return None
    text = str(dtype).lower().replace("torch.", "").replace("c10::", "")
    if text in ("bf16", "bfloat16"):
        return "bf16"
    if text in ("fp16", "float16", "half"):
        return "fp16"
    if text in ("fp32", "float32", "float"):
        return "fp32"
    return None


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


def input_code(name: str, args: dict[str, Any]) -> int:
    """The code (see module doc) of one named op, from its args."""
    family = dtype_from_types(args.get("Input type"))
    code = FAMILIES.index(family) if family else NO_FAMILY
    return code | UPCAST if is_upcast(name, args) else code


def op_codes(names: Sequence[str], input_types: Sequence[msgspec.Raw],
             concrete: Sequence[msgspec.Raw]) -> list[int]:
    """The code of each named op from its two args texts (``NOT_READ`` where one is
    not JSON: the args route then answers for that op, as it always did)."""
    codes = []
    for name, input_type, concrete_inputs in zip(names, input_types, concrete, strict=True):
        args = _args(input_type, concrete_inputs)
        codes.append(NOT_READ if args is None else input_code(name, args))
    return codes


def _args(input_type: msgspec.Raw, concrete: msgspec.Raw) -> dict[str, Any] | None:
    """The two fields as the args route would decode them; None if either is not JSON."""
    args: dict[str, Any] = {}
    for key, raw in (("Input type", input_type), ("Concrete Inputs", concrete)):
        if len(raw):
            try:
                args[key] = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                return None
    return args
