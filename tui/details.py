"""What the details panel says about one event (pure: label/value pairs)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from profiling.trace.model import GPU_KINDS, NO_ID, Kind, Trace
from tui.fmt import fmt_ns
from tui.names import visible

KIND_LABEL = {
    Kind.CPU_OP: "CPU op",
    Kind.USER_ANNOTATION: "user annotation",
    Kind.RUNTIME: "runtime call",
    Kind.KERNEL: "kernel",
    Kind.MEMCPY: "memcpy",
    Kind.MEMSET: "memset",
    Kind.GPU_ANNOTATION: "GPU annotation",
    Kind.PYTHON_FUNCTION: "python function",
    Kind.INSTANT: "instant",
    Kind.FLOW: "flow",
    Kind.OTHER: "other",
}

# args worth a line of their own, in this order, when present
_ARG_KEYS = (
    "Input Dims",
    "Input type",
    "Concrete Inputs",
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
    "bytes",
    "memory bandwidth (GB/s)",
    "correlation",
    "External id",
)


def arg_text(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))
    text = visible(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(
    trace: Trace,
    row: int,
    launch: int = -1,
    op: int = -1,
    gpu_rows: np.ndarray | None = None,
    origin: int | None = None,
) -> list[tuple[str, str]]:
    """Label/value lines for the event at ``row``: name in full, kind, times,
    stream, the interesting args, and its links across the CPU/GPU boundary."""
    origin = trace.start_ns if origin is None else origin
    kind = Kind(int(trace.kind[row]))
    lane = trace.lanes[int(trace.lane[row])]
    what = (
        f"{KIND_LABEL.get(kind, 'other')} · start {fmt_ns(float(trace.ts_ns[row] - origin))}"
        f" · duration {fmt_ns(float(trace.dur_ns[row]))} · category {visible(trace.category(row))}"
    )
    lines: list[tuple[str, str]] = [("name", visible(trace.name(row))), ("what", what)]
    where = visible(lane.label or str(lane.tid))
    stream = int(trace.stream[row])
    if stream != NO_ID and kind in GPU_KINDS and str(stream) not in where:
        where += f" · stream {stream}"
    lines.append(("where", where))
    if kind in GPU_KINDS:
        if launch >= 0:
            via = visible(trace.name(launch))
            by = visible(trace.name(op)) if op >= 0 else "?"
            lines.append(("launched by", f"{by} via {via}   (g: go to the launch, b: back)"))
        else:
            lines.append(("launched by", "no launching call in this trace"))
    elif gpu_rows is not None and gpu_rows.size:
        first = visible(trace.name(int(gpu_rows[0])))
        more = f" and {gpu_rows.size - 1} more" if gpu_rows.size > 1 else ""
        gpu_ns = float(trace.dur_ns[gpu_rows].sum())
        lines.append(
            (
                "launched",
                f"{gpu_rows.size} GPU event{'s' if gpu_rows.size > 1 else ''}, {fmt_ns(gpu_ns)}:"
                f" {first}{more}"
                "   (g: go to the first, b: back)",
            )
        )
    if op >= 0 and op != row and kind not in GPU_KINDS:
        lines.append(("inside op", visible(trace.name(op))))
    args = trace.args(row)
    if not args and getattr(trace.args_source, "stale", False):
        lines.append(("args", "unavailable: the file changed on disk after it was loaded"))
    shown = [k for k in _ARG_KEYS if k in args and k not in ("correlation", "External id")]
    for key in shown:
        lines.append((key, arg_text(args[key])))
    ids = []
    if trace.correlation[row] != NO_ID and kind != Kind.FLOW:
        ids.append(f"correlation {int(trace.correlation[row])}")
    if trace.external_id[row] != NO_ID:
        ids.append(f"external id {int(trace.external_id[row])}")
    if ids:
        lines.append(("ids", " · ".join(ids)))
    other = [k for k in args if k not in _ARG_KEYS and k not in ("device", "context", "stream")]
    if other:
        extra = ", ".join(f"{visible(str(k))}={arg_text(args[k], 40)}" for k in other[:8])
        lines.append(("args", extra + (" …" if len(other) > 8 else "")))
    return lines


def loader_notes(name: str, warnings: list[str], shown: int = 2) -> str:
    """The notification for what the loader repaired or skipped (a damaged cache
    ignored and rebuilt, a file cut short...): the first notes, and where the rest are."""
    notes = "; ".join(visible(w) for w in warnings[:shown])
    more = f" (and {len(warnings) - shown} more)" if len(warnings) > shown else ""
    plural = "s" if len(warnings) > 1 else ""
    return (
        f"{visible(name)}: {len(warnings)} loader note{plural}: {notes}{more}. "
        "The details panel lists them while no event is selected."
    )
