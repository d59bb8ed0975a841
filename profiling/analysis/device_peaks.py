"""Dense tensor-core peaks of common GPUs, to say how far an attention kernel is from the roof.

"Share of peak" is only honest against the right roof: the *dense* (no 2:4
sparsity) fp16/bf16 tensor-core rate of the exact part, from the vendor's own
datasheet.  Marketing tables usually print the sparse figure (twice the dense
one), so every number below is the dense one and cites where it comes from.

A device is matched from the trace's ``deviceProperties`` (or the older
``computeProperties``) name, or from a GPU name stored in the capture metadata.
A name that matches no row gives ``None``: unknown is shown blank, never guessed
("AMD Radeon Graphics", which some ROCm builds report for an MI250, stays blank).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from profiling.trace.op_inputs import dtype_family


@dataclass(frozen=True)
class DevicePeak:
    """One row of the peak table: a GPU model and its dense tensor-core TFLOP/s.

    ``bf16_tflops`` is ``None`` for parts without bf16 tensor cores (V100, T4).
    """

    model: str
    bf16_tflops: float | None
    fp16_tflops: float | None
    source: str

    def tflops(self, dtype: str | None) -> float | None:
        """The peak for an input dtype (``bf16``/``fp16`` spellings of any kind), else None."""
        family = dtype_family(dtype)
        if family == "bf16":
            return self.bf16_tflops
        if family == "fp16":
            return self.fp16_tflops
        return None


_NV = "NVIDIA {} datasheet"
_AMD = "AMD Instinct {} datasheet"
_H200 = _NV.format("H200 Tensor Core GPU")
_H100 = _NV.format("H100 Tensor Core GPU")
_V100 = _NV.format("V100 Tensor Core GPU")

# Order matters: the first pattern that matches wins, so specific parts come first.
# All figures dense (without sparsity), TFLOP/s, fp16/bf16 inputs with fp32 accumulate.
_TABLE: tuple[tuple[str, DevicePeak], ...] = (
    # NVIDIA H200 Tensor Core GPU datasheet (2024): H200 SXM 1,979 TF sparse -> 989 dense;
    # H200 NVL 1,671 TF sparse -> 835 dense.
    (r"\bGH200\b", DevicePeak("GH200", 989.4, 989.4, _NV.format("GH200 Grace Hopper Superchip"))),
    (r"\bH200\b.*\bNVL\b", DevicePeak("H200 NVL", 835.5, 835.5, _H200)),
    (r"\bH200\b", DevicePeak("H200 SXM", 989.4, 989.4, _H200)),
    # NVIDIA H100 Tensor Core GPU datasheet: SXM 1,979 / PCIe 1,513 / NVL 1,671 TF sparse.
    (r"\bH100\b.*\bNVL\b", DevicePeak("H100 NVL", 835.5, 835.5, _H100)),
    (r"\bH100\b.*\bPCIe\b", DevicePeak("H100 PCIe", 756.5, 756.5, _H100)),
    (r"\bH100\b", DevicePeak("H100 SXM", 989.4, 989.4, _H100)),
    # NVIDIA A100 Tensor Core GPU datasheet: 312 TF dense bf16/fp16 for every A100 form factor.
    (r"\bA100\b", DevicePeak("A100", 312.0, 312.0, _NV.format("A100 Tensor Core GPU"))),
    # NVIDIA A30 Tensor Core GPU datasheet: 330 TF sparse -> 165 dense.
    (r"\bA30\b", DevicePeak("A30", 165.0, 165.0, _NV.format("A30 Tensor Core GPU"))),
    # NVIDIA A10 Tensor Core GPU datasheet: 250 TF sparse -> 125 dense.
    (r"\bA10\b", DevicePeak("A10", 125.0, 125.0, _NV.format("A10 Tensor Core GPU"))),
    # NVIDIA A40 datasheet: 299.4 TF sparse -> 149.7 dense.
    (r"\bA40\b", DevicePeak("A40", 149.7, 149.7, _NV.format("A40"))),
    # NVIDIA L40S datasheet: 733 TF sparse -> 362.05 dense.
    (r"\bL40S\b", DevicePeak("L40S", 362.05, 362.05, _NV.format("L40S GPU"))),
    # NVIDIA L40 datasheet: 362.1 TF sparse -> 181.05 dense.
    (r"\bL40\b", DevicePeak("L40", 181.05, 181.05, _NV.format("L40 GPU"))),
    # NVIDIA L4 Tensor Core GPU datasheet: 242 TF sparse -> 121 dense.
    (r"\bL4\b", DevicePeak("L4", 121.0, 121.0, _NV.format("L4 Tensor Core GPU"))),
    # NVIDIA V100 Tensor Core GPU datasheet: SXM2 125, PCIe 112, V100S 130 TF (fp16 only).
    (r"\bV100S\b", DevicePeak("V100S PCIe", None, 130.0, _V100)),
    (r"\bV100\b.*\bPCIE\b", DevicePeak("V100 PCIe", None, 112.0, _V100)),
    (r"\bV100\b", DevicePeak("V100 SXM2", None, 125.0, _V100)),
    # NVIDIA T4 Tensor Core GPU datasheet: 65 TF mixed-precision fp16.
    (r"\bT4\b", DevicePeak("T4", None, 65.0, _NV.format("T4 Tensor Core GPU"))),
    # AMD Instinct MI300X / MI325X accelerator datasheets: 1,307.4 TF dense fp16/bf16.
    (r"\bMI325X\b", DevicePeak("MI325X", 1307.4, 1307.4, _AMD.format("MI325X accelerator"))),
    (r"\bMI300X\b", DevicePeak("MI300X", 1307.4, 1307.4, _AMD.format("MI300X accelerator"))),
    # AMD Instinct MI300A APU datasheet: 980.6 TF dense fp16/bf16.
    (r"\bMI300A\b", DevicePeak("MI300A", 980.6, 980.6, _AMD.format("MI300A APU"))),
    # AMD Instinct MI250X / MI250 / MI210 datasheets: 383 / 362.1 / 181 TF fp16/bf16 (CDNA2: no
    # sparsity, so the printed figure is the dense one).
    (r"\bMI250X\b", DevicePeak("MI250X", 383.0, 383.0, _AMD.format("MI250X accelerator"))),
    (r"\bMI250\b", DevicePeak("MI250", 362.1, 362.1, _AMD.format("MI250 accelerator"))),
    (r"\bMI210\b", DevicePeak("MI210", 181.0, 181.0, _AMD.format("MI210 accelerator"))),
)

_COMPILED = tuple((re.compile(pattern, re.IGNORECASE), peak) for pattern, peak in _TABLE)


def match_device(name: str | None) -> DevicePeak | None:
    """The table row for a device name, or None when the name is unknown (never a guess)."""
    if not name:
        return None
    for pattern, peak in _COMPILED:
        if pattern.search(name):
            return peak
    return None


def device_names(metadata: dict[str, Any]) -> dict[int, str]:
    """GPU names by device index, from ``deviceProperties`` (or the older ``computeProperties``)."""
    names: dict[int, str] = {}
    for key in ("deviceProperties", "computeProperties"):
        entries = metadata.get(key)
        if not isinstance(entries, list):
            continue
        for position, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            index = entry.get("id", position)
            names.setdefault(index if isinstance(index, int) else position, entry["name"])
    return names


def trace_device_name(metadata: dict[str, Any], device: int | None = None) -> str | None:
    """The GPU a trace ran on: the given device index's name, or the one name all devices share.

    Falls back to the GPU name the capture stored (``attn_tui.environment.gpu``).
    Several different GPUs and no device index given -> None (we would have to guess).
    """
    names = device_names(metadata)
    if device is not None and device in names:
        return names[device]
    distinct = set(names.values())
    if len(distinct) == 1:
        return distinct.pop()
    stored = metadata.get("attn_tui")
    if isinstance(stored, dict):
        for place in (stored.get("environment"), stored.get("config"), stored):
            if not isinstance(place, dict):
                continue
            for key in ("gpu", "gpu_name", "device_name"):
                if isinstance(place.get(key), str) and place[key]:
                    return str(place[key])
    return None
