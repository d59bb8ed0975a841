"""What the details panel says about one event, whole (pure: label/value rows).

Every field of the event and every arg it carries, with numbers in the units a
reader thinks in (``268,435,456 B (256 MiB)``, ``2,097.2 GB/s``, ``2 × 66 × 1 =
132 blocks``) and a tensor's dims, dtype and strides on one line per input.
Nothing is cut short but a pathological value (over ``VALUE_LIMIT`` characters).
The panel (``tui.widgets.details``) only lays these rows out; ``event_json`` is
what ``y`` copies.  Names and args are data: every string goes through
``visible`` here, and the widget never parses markup.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from profiling.trace.model import GPU_KINDS, NO_ID, Kind, Trace
from tui.fmt import fmt_ns
from tui.names import visible
from tui.ranks_data import collective_rows

Row = tuple[str, str]

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

VALUE_LIMIT = 4000
"""Characters of one value shown before the rest is summarised (a multi-MB arg
would otherwise cost seconds of layout on every selection)."""

_INPUT_KEYS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
_BYTE_KEYS = {"bytes", "shared memory", "static shared memory", "dynamic shared memory"}
_COUNT_KEYS = {"registers per thread", "blocks per SM", "warps per SM", "queued"}
_PLAIN_KEYS = {"correlation", "External id", "external id", "Record function id", "Ev Idx",
               "cbid", "device", "context", "stream", "Sequence number", "Fwd thread id",
               "Python id", "Python parent id", "Python thread", "pid", "tid"}
"""Ids: written as they are, no thousands separators (they are names, not amounts)."""
_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


# ---------- numbers ----------

def fmt_int(n: int) -> str:
    """``1234567`` -> ``1,234,567``."""
    return f"{int(n):,}"


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_bytes(n: int | float) -> str:
    """``268435456`` -> ``268,435,456 B (256 MiB)``; below 1 KiB just ``512 B``."""
    value = float(n)
    if not math.isfinite(value):
        return str(n)
    exact = f"{int(value):,} B" if value == int(value) else f"{value:,} B"
    unit, scaled = 0, abs(value)
    while scaled >= 1024 and unit < len(_BYTE_UNITS) - 1:
        scaled /= 1024
        unit += 1
    if unit == 0:
        return exact
    sign = "-" if value < 0 else ""
    return f"{exact} ({sign}{_trim(f'{scaled:.1f}')} {_BYTE_UNITS[unit]})"


def fmt_bandwidth(gb_per_s: float) -> str:
    """``2097.152`` -> ``2,097.2 GB/s``; a tiny figure keeps three significant digits."""
    v = float(gb_per_s)
    if not math.isfinite(v):
        return f"{gb_per_s} GB/s"
    if v == 0 or abs(v) >= 0.1:
        return f"{v:,.1f} GB/s"
    return f"{v:.3g} GB/s"


def fmt_number(v: int | float) -> str:
    """An arg's number: whole numbers with separators, others to six digits."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) or (math.isfinite(v) and v == int(v) and abs(v) < 1e15):
        return fmt_int(int(v))
    return f"{v:,.6g}"


def fmt_dims(dims: Sequence[Any], what: str) -> str:
    """A CUDA grid or block: ``[2, 66, 1]`` -> ``2 × 66 × 1 = 132 blocks``."""
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims) or not dims:
        return _json(dims)
    total = math.prod(dims)
    return " × ".join(str(d) for d in dims) + f" = {fmt_int(total)} {what}"


def fmt_shape(dims: Sequence[Any]) -> str:
    """A tensor's dims: ``[8, 16, 1024, 64]`` -> ``[8, 16, 1024, 64] (8,388,608 elements)``."""
    text = "[" + ", ".join(str(d) for d in dims) + "]"
    if dims and all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        n = math.prod(dims)
        text += f" ({fmt_int(n)} element{'s' if n != 1 else ''})"
    return text


def fmt_duration(ns: int | float) -> str:
    """``85568`` -> ``85.6 µs (85,568 ns)``: readable, then exact."""
    return f"{fmt_ns(float(ns))} ({fmt_int(int(ns))} ns)" if ns >= 1000 else fmt_ns(float(ns))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False, default=str)


def _capped(text: str) -> str:
    """``text`` up to ``VALUE_LIMIT`` characters, then how many more there are."""
    if len(text) <= VALUE_LIMIT:
        return text
    return text[:VALUE_LIMIT] + f"… ({fmt_int(len(text) - VALUE_LIMIT)} more characters)"


def _visible_capped(raw: str) -> str:
    """A raw string made visible, cut first (escaping megabytes to show 4 kB is waste)."""
    if len(raw) <= VALUE_LIMIT:
        return visible(raw)
    return visible(raw[:VALUE_LIMIT]) + f"… ({fmt_int(len(raw) - VALUE_LIMIT)} more characters)"


def arg_text(value: Any, limit: int = VALUE_LIMIT) -> str:
    """Any arg value as one visible line: strings as they are, the rest as JSON."""
    text = visible(value if isinstance(value, str) else _json(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------- args ----------

def format_arg(key: str, value: Any) -> str:
    """One arg's value in the units its name says (bytes, GB/s, a grid, an id...)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key == "grid" and isinstance(value, list):
        return fmt_dims(value, "blocks")
    if key == "block" and isinstance(value, list):
        return fmt_dims(value, "threads")
    if number and key in _BYTE_KEYS:
        return fmt_bytes(value)
    if number and "GB/s" in key:
        return fmt_bandwidth(value)
    if number and key.endswith("%"):
        return f"{fmt_number(value)}%"
    if number and key in _PLAIN_KEYS:
        return str(value)
    if number:
        return fmt_number(value)
    return _visible_capped(value if isinstance(value, str) else _json(value))


def input_rows(args: dict[str, Any]) -> list[Row]:
    """One row per input of an op: dtype, dims (and element count), strides, value.

    Torch records these as parallel lists (``Input Dims``, ``Input type``, ``Input
    Strides``, ``Concrete Inputs``); read side by side, one input per line."""
    lists = {k: args[k] for k in _INPUT_KEYS if isinstance(args.get(k), list)}
    n = max((len(v) for v in lists.values()), default=0)
    rows: list[Row] = []
    for i in range(n):
        part = {k: v[i] for k, v in lists.items() if i < len(v)}
        dtype, dims = part.get("Input type", ""), part.get("Input Dims")
        strides, value = part.get("Input Strides"), part.get("Concrete Inputs", "")
        bits = [visible(str(dtype))] if dtype else []
        if isinstance(dims, list) and (dims or not value):
            bits.append(fmt_shape(dims))
        if isinstance(strides, list) and strides:
            bits.append("strides " + fmt_shape(strides).split(" (")[0])
        if value not in ("", None, []):
            bits.append("= " + arg_text(value, limit=200))
        rows.append((f"input {i}", _capped(" ".join(bits) or "(none)")))
    return rows


def arg_rows(args: dict[str, Any]) -> list[Row]:
    """Every arg as a row: the inputs first (one per line), then the rest in the
    file's order, each value in its units."""
    rows = input_rows(args)
    for key, value in args.items():
        if key in _INPUT_KEYS and isinstance(value, list):
            continue
        rows.append((visible(str(key)), format_arg(str(key), value)))
    return rows


# ---------- the event ----------

ATTRIBUTION_TEXT = {
    "external_id": "to the op by its External id, as torch's key_averages table does",
    "nesting": "by launch nesting only: the op around the call; torch's table (Ops view) "
               "gives this op no device time for it",
}
"""What the details panel says of each ``launch_chain.ATTRIBUTIONS`` label (``none``
needs no line: "launched by" already says there is no op)."""


def describe(
    trace: Trace,
    row: int,
    launch: int = -1,
    op: int = -1,
    gpu_rows: np.ndarray | None = None,
    origin: int | None = None,
    chain: Sequence[str] = (),
    inside: Sequence[str] = (),
    attribution: str = "",
) -> list[Row]:
    """Label/value rows for the event at ``row``: what and where it is, its exact
    times, its links across the CPU/GPU boundary (``chain``: the launch chain's
    names, outermost first, as ``LinkLookup.chain_of`` gives them; ``inside``: the names of
    the slices around a CPU event, outermost first (a GPU event: the annotations its
    launch sits in, ``LinkLookup.region_of``); ``attribution``: how a GPU event's
    op was found, ``LinkLookup.attribution_of``), then every arg."""
    origin = trace.start_ns if origin is None else origin
    kind = Kind(int(trace.kind[row]))
    ts, dur = int(trace.ts_ns[row]), int(trace.dur_ns[row])
    rows: list[Row] = [("name", visible(trace.name(row)))]
    phase = chr(int(trace.ph[row])) if int(trace.ph[row]) else "?"
    rows.append(("what", f"{KIND_LABEL.get(kind, 'other')} · category "
                 f"{visible(trace.category(row)) or '(none)'} · phase {visible(phase)}"))
    rows.append(("start", f"{fmt_ns(float(ts - origin))} from the trace start "
                 f"({fmt_int(ts - origin)} ns)"))
    rows.append(("duration", fmt_duration(dur)))
    rows.extend(_where(trace, row, kind))
    rows.extend(_links(trace, row, kind, launch, op, gpu_rows, chain))
    rows.extend(collective_rows(trace, row))  # a job's collective on every rank (issue 14)
    if attribution in ATTRIBUTION_TEXT:
        rows.append(("attributed", ATTRIBUTION_TEXT[attribution]))
    if inside and kind in GPU_KINDS:  # the annotations its launch chain sits in
        rows.append(("in region", " › ".join(visible(n) for n in inside)))
    elif inside and kind not in GPU_KINDS:
        rows.append(("inside", " › ".join(visible(n) for n in inside)))
    elif op >= 0 and op != row and kind not in GPU_KINDS:
        rows.append(("inside op", visible(trace.name(op))))
    args = trace.args(row)
    if not args and getattr(trace.args_source, "stale", False):
        rows.append(("args", "unavailable: the file changed on disk after it was loaded"))
    ids = []
    if trace.correlation[row] != NO_ID and kind != Kind.FLOW and "correlation" not in args:
        ids.append(f"correlation {int(trace.correlation[row])}")
    if trace.external_id[row] != NO_ID and not {"External id", "external id"} & set(args):
        ids.append(f"External id {int(trace.external_id[row])}")
    if kind == Kind.FLOW and trace.correlation[row] != NO_ID:
        ids.append(f"flow id {int(trace.correlation[row])}")
    if ids:
        rows.append(("ids", " · ".join(ids)))
    rows.extend(arg_rows(args))
    rows.append(("in the file", f"event #{fmt_int(int(trace.source_index[row]))} of "
                 f"{fmt_int(trace.n_entries)} · row {fmt_int(row)}"))
    return rows


def _where(trace: Trace, row: int, kind: Kind) -> list[Row]:
    lane = trace.lanes[int(trace.lane[row])]
    group = trace.groups[lane.group] if 0 <= lane.group < len(trace.groups) else None
    where = visible(lane.label or str(lane.tid))
    if group is not None and group.label:
        where = f"{visible(group.label)} › {where}"
    pid, tid = visible(str(lane.pid)), visible(str(lane.tid))
    ids = [] if f"pid {pid}" in where else [f"pid {pid}"]
    if not {f"thread {tid}", f"stream {tid}"} & set(_words2(where)) and where != tid:
        ids.append(f"tid {tid}")
    if ids:
        where += f" ({', '.join(ids)})"
    stream = int(trace.stream[row])
    if stream != NO_ID and kind in GPU_KINDS and f"stream {stream}" not in where:
        where += f" · stream {stream}"
    rows = [("where", where)]
    if kind not in GPU_KINDS and kind not in (Kind.INSTANT, Kind.FLOW):
        rows.append(("depth", f"{int(trace.depth[row])} (0: outermost on its lane)"))
    return rows


def _words2(text: str) -> list[str]:
    """Every pair of neighbouring words (``"stream 7"``): to see if a label names an id."""
    words = text.replace("(", " ").replace(")", " ").split()
    return [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


def _links(
    trace: Trace, row: int, kind: Kind, launch: int, op: int,
    gpu_rows: np.ndarray | None, chain: Sequence[str],
) -> list[Row]:
    rows: list[Row] = []
    if kind in GPU_KINDS:
        if launch >= 0:
            names = list(chain) or [trace.name(r) for r in (op, launch) if r >= 0]
            text = " › ".join(visible(n) for n in names)
            rows.append(("launched by", f"{text}   (g: go to the launch, b: back)"))
        else:
            rows.append(("launched by", "no launching call in this trace"))
    elif gpu_rows is not None and gpu_rows.size:
        first = visible(trace.name(int(gpu_rows[0])))
        more = f" and {gpu_rows.size - 1} more" if gpu_rows.size > 1 else ""
        gpu_ns = float(trace.dur_ns[gpu_rows].sum())
        rows.append((
            "launched",
            f"{gpu_rows.size} GPU event{'s' if gpu_rows.size > 1 else ''}, {fmt_ns(gpu_ns)}:"
            f" {first}{more}   (g: go to the first, b: back)",
        ))
    return rows


def event_json(trace: Trace, row: int, origin: int | None = None,
               chain: Sequence[str] = ()) -> dict[str, Any]:
    """The event as the trace file writes it (``ph``, ``cat``, ``name``, ``pid``,
    ``tid``, ``ts``/``dur`` in µs, ``args``), plus an ``attn_tui`` object with what
    the app knows about it: its kind, start from the trace start, lane, launch chain."""
    origin = trace.start_ns if origin is None else origin
    lane = trace.lanes[int(trace.lane[row])]
    ts, dur = int(trace.ts_ns[row]), int(trace.dur_ns[row])
    event: dict[str, Any] = {
        "ph": chr(int(trace.ph[row])) if int(trace.ph[row]) else "",
        "cat": trace.category(row),
        "name": trace.name(row),
        "pid": lane.pid,
        "tid": lane.tid,
        "ts": ts / 1000.0,
        "dur": dur / 1000.0,
        "args": trace.args(row),
    }
    extra: dict[str, Any] = {
        "kind": Kind(int(trace.kind[row])).name.lower(),
        "start_us": (ts - origin) / 1000.0,
        "lane": lane.label,
        "row": int(row),
    }
    if chain:
        extra["launch_chain"] = list(chain)
    event["attn_tui"] = extra
    return event


def copy_text(event: dict[str, Any]) -> str:
    """``event_json`` as the text ``y`` puts on the clipboard: indented, valid JSON
    (control characters in names escaped by JSON itself; a NaN or infinity that a
    lenient read let into the args written as a string, as JSON has no such number)."""
    try:
        return json.dumps(event, indent=1, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(event), indent=1, ensure_ascii=False, default=str)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


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
