"""Phase + category -> ``Kind``, across Kineto's old and new spellings.

Kineto renamed its categories around 2022 (``Operator`` -> ``cpu_op``,
``Runtime`` -> ``cuda_runtime``, ``Kernel`` -> ``kernel``, ``Memcpy`` ->
``gpu_memcpy``); traces of both eras are common, so both map to one kind.
"""

from __future__ import annotations

from profiling.trace.model import Kind

_COMPLETE_BY_CATEGORY: dict[str, Kind] = {
    "cpu_op": Kind.CPU_OP,
    "operator": Kind.CPU_OP,
    "user_annotation": Kind.USER_ANNOTATION,
    "cuda_runtime": Kind.RUNTIME,
    "cuda_driver": Kind.RUNTIME,
    "runtime": Kind.RUNTIME,
    "driver": Kind.RUNTIME,
    "hip_runtime": Kind.RUNTIME,
    "mtia_runtime": Kind.RUNTIME,
    "privateuse1_runtime": Kind.RUNTIME,
    "xpu_runtime": Kind.RUNTIME,
    "kernel": Kind.KERNEL,
    "gpu_memcpy": Kind.MEMCPY,
    "memcpy": Kind.MEMCPY,
    "gpu_memset": Kind.MEMSET,
    "memset": Kind.MEMSET,
    "gpu_user_annotation": Kind.GPU_ANNOTATION,
    "python_function": Kind.PYTHON_FUNCTION,
    "python": Kind.PYTHON_FUNCTION,
}

_BY_PHASE: dict[str, Kind] = {
    "i": Kind.INSTANT,
    "I": Kind.INSTANT,
    "R": Kind.INSTANT,  # mark
    "s": Kind.FLOW,
    "t": Kind.FLOW,
    "f": Kind.FLOW,
}

SLICE_PHASES = frozenset("XBE")


def kind_of(ph: str, category: str) -> Kind:
    """The kind of an event from its phase letter and category string."""
    if ph in SLICE_PHASES:
        return _COMPLETE_BY_CATEGORY.get(category.lower(), Kind.OTHER)
    return _BY_PHASE.get(ph, Kind.OTHER)


def category_kinds(categories: list[str]) -> list[Kind]:
    """Slice kind for every interned category string (vectorised lookup table)."""
    return [_COMPLETE_BY_CATEGORY.get(c.lower(), Kind.OTHER) for c in categories]
