"""Phase + category -> ``Kind`` and ``DeviceType``, across Kineto's spellings.

Kineto renamed its categories around 2022 (``Operator`` -> ``cpu_op``,
``Runtime`` -> ``cuda_runtime``, ``Kernel`` -> ``kernel``, ``Memcpy`` ->
``gpu_memcpy``); traces of both eras are common, so both map to one kind.

Devices follow torch's ``deviceTypeFromActivity``: ``kernel``/``gpu_memcpy``/
``gpu_memset`` are CUDA (ROCm too: torch calls HIP "CUDA"), or XPU when the
trace comes from an XPU build (its runtime calls are ``xpu_runtime``);
``cuda_sync`` and ``gpu_user_annotation`` (2021's ``User``) are CUDA; ``mtia_ccp_events`` and
``mtia_insight`` are MTIA; ``hpu_op`` is HPU.  A trace of a PrivateUse1 backend
(``privateuse1_runtime`` calls) has PrivateUse1 kernels, as in torch.
"""

from __future__ import annotations

import re

import numpy as np

from profiling.trace.model import DeviceType, Kind

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
    # Kineto's driver-level launch categories (zeCommandListAppendLaunchKernel, ...)
    "xpu_driver": Kind.RUNTIME,
    "privateuse1_driver": Kind.RUNTIME,
    "kernel": Kind.KERNEL,
    "gpu_memcpy": Kind.MEMCPY,
    "memcpy": Kind.MEMCPY,
    "gpu_memset": Kind.MEMSET,
    "memset": Kind.MEMSET,
    "gpu_user_annotation": Kind.GPU_ANNOTATION,
    # Kineto of 2021 wrote the GPU-side span of a record_function as category "User"
    # on the device's stream, tid "stream 7 user" (later: gpu_user_annotation)
    "user": Kind.GPU_ANNOTATION,
    "python_function": Kind.PYTHON_FUNCTION,
    "python": Kind.PYTHON_FUNCTION,
    # Accelerators whose one device category holds kernels and copies alike
    # (told apart by name: see NAMED_DEVICE_CATEGORIES).
    "mtia_ccp_events": Kind.KERNEL,
    "mtia_insight": Kind.KERNEL,
    "hpu_op": Kind.KERNEL,
}

NAMED_DEVICE_CATEGORIES = frozenset({"mtia_ccp_events", "mtia_insight", "hpu_op"})
"""Device categories with no separate copy category: an event named ``Memcpy...`` or
``Memset...`` there is a memcpy or memset (CUDA's own copy names start so)."""

_GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"})
_CUDA_ONLY_CATEGORIES = frozenset(
    {"cuda_sync", "gpu_user_annotation", "user", "cuda_profiler_range"}
)
_FIXED_DEVICE: dict[str, DeviceType] = {
    "mtia_ccp_events": DeviceType.MTIA,
    "mtia_insight": DeviceType.MTIA,
    "hpu_op": DeviceType.HPU,
}
_CUDA_HOST = frozenset({"cuda_runtime", "cuda_driver", "hip_runtime", "runtime"})

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


def device_types(categories: list[str]) -> list[DeviceType]:
    """The device type of every interned category string (CPU for host categories).

    The whole list decides what a GPU category means: XPU when the trace has XPU
    runtime calls and no CUDA/HIP ones, PrivateUse1 likewise, else CUDA.
    """
    lower = [c.lower() for c in categories]
    present = set(lower)
    gpu = DeviceType.CUDA
    if not present & _CUDA_HOST:
        if present & {"xpu_runtime", "xpu_driver"}:
            gpu = DeviceType.XPU
        elif present & {"privateuse1_runtime", "privateuse1_driver"}:
            gpu = DeviceType.PRIVATEUSE1
    private = gpu is DeviceType.PRIVATEUSE1
    out = []
    for c in lower:
        if c in _GPU_CATEGORIES:
            out.append(gpu)
        elif c in _CUDA_ONLY_CATEGORIES:
            out.append(DeviceType.PRIVATEUSE1 if private else DeviceType.CUDA)
        elif c in _FIXED_DEVICE:
            fixed = _FIXED_DEVICE[c]
            out.append(DeviceType.PRIVATEUSE1 if private and fixed is DeviceType.MTIA else fixed)
        else:
            out.append(DeviceType.CPU)
    return out


def copy_kinds_by_name(
    kind: np.ndarray, cat_id: np.ndarray, name_id: np.ndarray, strings: list[str]
) -> np.ndarray:
    """``kind`` with the kernels of NAMED_DEVICE_CATEGORIES named ``Memcpy...`` or
    ``Memset...`` turned into memcpys and memsets."""
    named = np.array([s.lower() in NAMED_DEVICE_CATEGORIES for s in strings], dtype=bool)
    if not named.any() or kind.shape[0] == 0:
        return kind
    prefix = [s[:6].lower() for s in strings]
    copy = np.array([p == "memcpy" for p in prefix], dtype=bool)
    fill = np.array([p == "memset" for p in prefix], dtype=bool)
    where = named[cat_id] & (kind == Kind.KERNEL)
    out = kind.copy()
    out[where & copy[name_id]] = Kind.MEMCPY
    out[where & fill[name_id]] = Kind.MEMSET
    return out


OLD_OP_CATEGORY = "operator"
"""Kineto's category for every CPU op before ``cpu_op`` and ``user_annotation`` existed."""

_OP_NAME = re.compile(r"::|Backward\d*$")
"""An op's name in an old trace: namespaced (``aten::mm``, ``torch::autograd::...``) or an
autograd node (``AddmmBackward``, ``ReluBackward1``)."""

BARE_OP_NAMES = frozenset({"detach", "detach_"})
"""Ops torch 1.8-1.10 recorded with no namespace (``VariableTypeManual``'s
``RECORD_FUNCTION("detach_", ...)``)."""


def annotations_by_name(
    kind: np.ndarray, cat_id: np.ndarray, name_id: np.ndarray, strings: list[str]
) -> np.ndarray:
    """``kind`` with an old trace's ``record_function`` ranges as user annotations.

    Kineto of 2021 (torch 1.8-1.9) wrote every CPU range under ``Operator``: the
    ops, and the ranges of ``record_function`` (``ProfilerStep#3``,
    ``Optimizer.step#SGD.step``, ``enumerate(DataLoader)#...``, a user's
    ``attn_fwd``), which later Kineto writes as ``user_annotation``.  Regions are
    user annotations, so without this an old trace's own regions were not found.
    In a trace whose categories include neither ``cpu_op`` nor ``user_annotation``,
    an ``Operator`` slice is a range when its name is not an op's (``_OP_NAME``,
    ``BARE_OP_NAMES``): torch names every op it records that way.
    """
    old = np.array([c.lower() == OLD_OP_CATEGORY for c in strings], dtype=bool)
    if kind.shape[0] == 0 or not old.any():  # a newer trace: no pass over its rows
        return kind
    used = np.bincount(cat_id, minlength=len(strings)) > 0  # O(rows), not a sort
    present = {strings[i].lower() for i in np.flatnonzero(used).tolist()}
    if OLD_OP_CATEGORY not in present or present & {"cpu_op", "user_annotation"}:
        return kind
    ranges = np.array([not _OP_NAME.search(n) and n not in BARE_OP_NAMES for n in strings],
                      dtype=bool)
    where = old[cat_id] & ranges[name_id] & (kind == Kind.CPU_OP)
    if not where.any():
        return kind
    out = kind.copy()
    out[where] = Kind.USER_ANNOTATION
    return out


def kinds_by_name(
    kind: np.ndarray, cat_id: np.ndarray, name_id: np.ndarray, strings: list[str]
) -> np.ndarray:
    """The kinds that a category alone does not tell: copies and fills among a named
    device category's kernels (``copy_kinds_by_name``), an old trace's ranges among
    its ops (``annotations_by_name``)."""
    kind = copy_kinds_by_name(kind, cat_id, name_id, strings)
    return annotations_by_name(kind, cat_id, name_id, strings)
