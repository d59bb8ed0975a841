"""Lanes and groups: which (pid, tid) is a CPU thread or a GPU stream, and its label.

Labels follow what Perfetto shows: the trace's ``M`` metadata events
(``process_name``, ``process_labels``, ``thread_name``, the sort indexes) when
present, and plain fallbacks (``GPU 0``, ``stream 7``, ``thread 1234``) when a
trace has none.  Host processes sort before devices, as in Perfetto.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiling.trace.events import MetaEvent
from profiling.trace.model import DEVICE_TYPE_NAMES, DeviceType, Group, Kind, Lane, LaneKind
from profiling.trace.spare_arrays import PIECE

_GPU_KINDS = np.array(
    [Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.GPU_ANNOTATION], dtype=np.uint8
)
_CPU_KINDS = np.array(
    [Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.RUNTIME, Kind.PYTHON_FUNCTION], dtype=np.uint8
)


_SIDE = np.zeros(256, dtype=np.uint8)
_SIDE[_CPU_KINDS] = 1
_SIDE[[Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET]] = 2  # device work
_ROLE = np.zeros(256, dtype=np.uint8)  # _lane_drafts: 1 a host kind, 2 a device kind
_ROLE[_CPU_KINDS] = 1
_ROLE[_GPU_KINDS] = 2


def lane_code_counts(lane: np.ndarray, code: np.ndarray, n_lanes: int, n_codes: int) -> np.ndarray:
    """Rows per (lane, code), an (n_lanes, n_codes) array (codes: small ints >= 0).

    One ``np.bincount`` of a combined key, piece by piece: over every row at once the
    key (as intp, which bincount wants) was 25 MB of fresh memory on a 1 GB trace,
    slower to touch than to count; a piece's scratch is reused.  (On threads the
    pieces were no faster: each is a few small numpy calls.)"""
    size = n_lanes * n_codes
    counts = np.zeros(size, dtype=np.int64)
    for lo in range(0, lane.shape[0], PIECE):
        key = lane[lo:lo + PIECE].astype(np.intp)
        key *= n_codes
        key += code[lo:lo + PIECE]
        counts += np.bincount(key, minlength=size)[:size]
    return counts.reshape(n_lanes, n_codes)


def split_mixed_lanes(
    keys: list[tuple[Any, Any]],
    lane: np.ndarray,
    valid: np.ndarray,
    kind: np.ndarray,
    device: np.ndarray,
    gpu_flow_end: np.ndarray,
) -> tuple[list[tuple[Any, Any]], np.ndarray]:
    """Keys and per-row lane ids with each lane that holds both host events and device
    work (kernels, copies, fills) split in two: its device rows (slices of a device
    category, ``device`` != CPU) and the GPU ends of its flows (``gpu_flow_end``)
    move to a new lane of the same (pid, tid), appended to ``keys``.

    WHY: a lane is a (pid, tid), and a CPU thread and a GPU stream can share one (a
    container where python is PID 1 on GPU 1 and a thread id equals a stream id).
    As one lane it was a CPU lane holding kernels: stats and slices called them
    ``cpu`` and ``--lanes gpu`` left them out.  Ordinary traces have no such lane
    and are unchanged.  ``lane`` is changed in place.
    """
    n = len(keys)
    side = _SIDE[kind]  # 0 neither, 1 host, 2 device work: one pass, no np.isin
    side *= valid  # rows that are not used count as neither
    seen = lane_code_counts(lane, side, n, 3)
    mixed = np.flatnonzero((seen[:, 1] > 0) & (seen[:, 2] > 0))
    if not mixed.size:
        return keys, lane
    new_id = np.full(max(n, 1), -1, dtype=np.int32)
    new_id[mixed] = np.arange(n, n + mixed.size)
    keys = keys + [keys[i] for i in mixed.tolist()]
    moving = np.flatnonzero(((device != 0) | gpu_flow_end) & (new_id[lane] >= 0))
    lane[moving] = new_id[lane[moving]]
    return keys, lane


class _Meta:
    """What the ``M`` events say about processes and threads."""

    def __init__(self, meta_events: list[MetaEvent]) -> None:
        self.process_name: dict[Any, str] = {}
        self.process_labels: dict[Any, str] = {}
        self.process_sort: dict[Any, int] = {}
        self.thread_name: dict[tuple[Any, Any], str] = {}
        self.thread_sort: dict[tuple[Any, Any], int] = {}
        for e in meta_events:
            pid, tid = e.pid, e.tid
            if e.name == "process_name" and e.value is not None:
                self.process_name[pid] = e.value
            elif e.name == "process_labels" and e.labels is not None:
                self.process_labels[pid] = e.labels
            elif e.name == "process_sort_index" and e.sort_index is not None:
                self.process_sort[pid] = e.sort_index
            elif e.name == "thread_name" and e.value is not None:
                self.thread_name[(pid, tid)] = e.value
            elif e.name == "thread_sort_index" and e.sort_index is not None:
                self.thread_sort[(pid, tid)] = e.sort_index


def build_lanes(
    keys: list[tuple[Any, Any]],
    lane_of_row: np.ndarray,
    kind_of_row: np.ndarray,
    meta_events: list[MetaEvent],
    device_of_row: np.ndarray | None = None,
) -> tuple[list[Lane], list[Group], np.ndarray]:
    """Lanes in display order, their groups, and old-lane-id -> display-index map.

    ``device_of_row`` (``DeviceType``) names a device group that has no label of
    its own: "MTIA 0" rather than "GPU 0"."""
    meta = _Meta(meta_events)
    n = len(keys)
    drafts = _lane_drafts(keys, lane_of_row, kind_of_row)
    lane_device = np.zeros(max(n, 1), dtype=np.int64)
    if device_of_row is not None and device_of_row.shape[0]:
        codes = int(device_of_row.max()) + 1
        present = lane_code_counts(lane_of_row, device_of_row, n, codes) > 0
        highest = codes - 1 - np.argmax(present[:, ::-1], axis=1)  # the lane's largest type
        lane_device[:n] = np.where(present.any(axis=1), highest, 0)
    group_device: dict[Any, int] = {}
    for i, pid, _, _ in drafts:
        group_device[pid] = max(group_device.get(pid, 0), int(lane_device[i]))
    group_kind: dict[Any, str] = {}
    for _, pid, _, kind in drafts:
        if kind == LaneKind.GPU or pid not in group_kind:
            group_kind[pid] = kind if group_kind.get(pid) != LaneKind.GPU else LaneKind.GPU
        elif kind == LaneKind.CPU and group_kind[pid] == LaneKind.OTHER:
            group_kind[pid] = LaneKind.CPU

    def group_order(pid: Any) -> tuple[int, int, str]:
        kind = group_kind[pid]
        rank = {LaneKind.CPU: 0, LaneKind.GPU: 1, LaneKind.OTHER: 2}[kind]
        sort = meta.process_sort.get(pid, pid if isinstance(pid, int) else 0)
        return (rank, sort if isinstance(sort, int) else 0, str(pid))

    groups: list[Group] = []
    group_index: dict[Any, int] = {}
    for pid in sorted(group_kind, key=group_order):
        group_index[pid] = len(groups)
        groups.append(
            Group(
                index=len(groups),
                pid=pid,
                kind=group_kind[pid],
                label=_group_label(pid, group_kind[pid], meta, group_device[pid]),
                sort_index=group_order(pid)[1],
            )
        )

    def lane_order(d: tuple[int, Any, Any, str]) -> tuple[int, int, int, str]:
        _, pid, tid, kind = d
        rank = {LaneKind.CPU: 0, LaneKind.GPU: 0, LaneKind.OTHER: 1}[kind]
        default = tid if isinstance(tid, int) else _stream_number(tid)
        sort = meta.thread_sort.get((pid, tid), default)
        return (group_index[pid], rank, sort if isinstance(sort, int) else 0, str(tid))

    lanes: list[Lane] = []
    remap = np.zeros(max(n, 1), dtype=np.int32)
    shared = {key for key in keys if keys.count(key) > 1} if len(set(keys)) < n else set()
    for d in sorted(drafts, key=lane_order):
        old, pid, tid, kind = d
        lane = Lane(
            index=len(lanes),
            pid=pid,
            tid=tid,
            kind=kind,
            label=_lane_label(pid, tid, kind, meta, (pid, tid) in shared),
            group=group_index[pid],
            sort_index=lane_order(d)[2],
        )
        remap[old] = lane.index
        groups[lane.group].lanes.append(lane.index)
        lanes.append(lane)
    return lanes, groups, remap


def _lane_drafts(
    keys: list[tuple[Any, Any]], lane_of_row: np.ndarray, kind_of_row: np.ndarray
) -> list[tuple[int, Any, Any, str]]:
    """(lane id, pid, tid, lane kind) of every lane: GPU where device events are
    the majority, CPU where host events are, else other."""
    n = len(keys)
    rows = lane_code_counts(lane_of_row, _ROLE[kind_of_row], n, 3)
    cpu_rows, gpu_rows = rows[:, 1], rows[:, 2]
    drafts = []
    for i, (pid, tid) in enumerate(keys):
        if gpu_rows[i] > 0 and gpu_rows[i] >= cpu_rows[i]:
            kind = LaneKind.GPU
        elif cpu_rows[i] > 0:
            kind = LaneKind.CPU
        else:
            kind = LaneKind.OTHER
        drafts.append((i, pid, tid, kind))
    return drafts


def _stream_number(tid: Any) -> int:
    digits = "".join(ch for ch in str(tid) if "0" <= ch <= "9")
    return int(digits[:18]) if digits else 0


def _group_label(pid: Any, kind: str, meta: _Meta, device: int = 0) -> str:
    if pid == "":
        return "global (no process)"  # Kineto's global-scope instants ("s": "g")
    labels = meta.process_labels.get(pid, "")
    name = meta.process_name.get(pid, "")
    if kind == LaneKind.GPU:
        if labels.startswith(("GPU", "MTIA", "XPU", "HPU")):
            return labels
        named = device not in (DeviceType.CPU, DeviceType.CUDA)  # CUDA and ROCm: "GPU"
        return f"{DEVICE_TYPE_NAMES[device] if named else 'GPU'} {pid}"
    if name and labels:
        return f"{name} ({labels}) pid {pid}"
    if name:
        return f"{name} pid {pid}"
    return f"process {pid}"


def _lane_label(pid: Any, tid: Any, kind: str, meta: _Meta, shared: bool = False) -> str:
    """``shared``: the (pid, tid) is both a thread and a stream (``split_mixed_lanes``);
    its one ``thread_name`` may be the stream's, which does not name the thread."""
    if tid == "":
        return "global instants" if pid == "" else "thread (none)"
    name = meta.thread_name.get((pid, tid), "")
    if kind == LaneKind.GPU:
        if name.startswith("stream"):
            return name.split(" ")[0] + " " + name.split(" ")[1] if " " in name else name
        if isinstance(tid, str) and tid.startswith("stream"):
            return tid
        return f"stream {tid}"
    if name and not (shared and name.startswith("stream")):
        return name if str(tid) in name else f"{name} {tid}"
    return f"thread {tid}"
