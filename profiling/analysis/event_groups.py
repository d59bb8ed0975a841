"""The op table's events grouped into its rows, without joining or sorting them all.

``key_averages`` has three lists of events (host, device, memory), each a few
columns; torch makes one row per (key, device type, is-annotation) in the order
each row's first event is met when all events are sorted by start, longest
first.  On a 1 GB trace (3 M events) joining the lists and sorting them cost a
second; here each list is reduced on its own by scatter-reductions (a row's
count, its four time sums, its first event), and only the rows are sorted.
``tests/test_key_averages_fast.py`` holds it to the join-and-sort it replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from profiling.analysis.ranges import distinct
from profiling.trace.model import Kind, Trace


@dataclass(frozen=True)
class Events:
    """Some events of the table as parallel columns (times in ns), ready to group.

    ``code`` is the row an event adds to, ``(key * 8 + device type) * 2 +
    is-annotation``; a time column left None is zero for every event (device slices
    have no CPU time, memory instants no time at all: no zeros to make or add up).
    The host, device and memory events stay three parts, in that order: ``_group``
    treats them as one list (torch's order of first appearance) without joining them.
    """

    start: np.ndarray
    end: np.ndarray
    code: np.ndarray
    cpu_self: np.ndarray | None
    cpu_total: np.ndarray | None
    dev_self: np.ndarray | None
    dev_total: np.ndarray | None

    @classmethod
    def of_host(cls, trace: Trace, rows: np.ndarray, key: np.ndarray, start: np.ndarray,
                dur: np.ndarray, cpu_self: np.ndarray, dev_self: np.ndarray,
                dev_total: np.ndarray) -> Events:
        code = np.multiply(key, 16, dtype=np.int64)
        code += trace.kind[rows] == Kind.USER_ANNOTATION
        return cls(start, start + dur, code, cpu_self, dur, dev_self, dev_total)

    @classmethod
    def of_device(cls, trace: Trace, rows: np.ndarray, key_of_string: np.ndarray) -> Events:
        start, dur = trace.ts_ns[rows], trace.dur_ns[rows]
        ann = trace.kind[rows] == Kind.GPU_ANNOTATION
        device = np.maximum(trace.device_type[rows].astype(np.int64), 1)  # DeviceType, not CPU
        code = (key_of_string[trace.name_id[rows]] * 8 + device) * 2 + ann
        return cls(start, start + dur, code, None, None, dur, dur)

    @classmethod
    def of_memory(cls, trace: Trace, rows: np.ndarray, key_of_string: np.ndarray) -> Events:
        start = trace.ts_ns[rows]
        return cls(start, start, key_of_string[trace.name_id[rows]] * 16, None, None, None, None)


_LAST = np.iinfo(np.int64).max


def _firsts(ev: Events, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code, its first event in the order (start, then longest, then position):
    that event's start, minus its end, and position (``_LAST`` where it has none).

    Three scatter-reductions, the last two over the few events that tie on the
    first: the result of ``lexsort((-end, start))``'s first event per code, without
    sorting every event."""
    slot = ev.code
    first = np.full(n, _LAST, dtype=np.int64)
    np.minimum.at(first, slot, ev.start)
    tied = np.flatnonzero(ev.start == first[slot])
    neg_end = np.full(n, _LAST, dtype=np.int64)
    np.minimum.at(neg_end, slot[tied], -ev.end[tied])
    tied = tied[-ev.end[tied] == neg_end[slot[tied]]]
    at = np.full(n, _LAST, dtype=np.int64)
    np.minimum.at(at, slot[tied], tied)
    return first, neg_end, at


def group_totals(parts: list[Events]) -> list[tuple[int, int, int, int, int, int]]:
    """(code, count, cpu self, cpu total, device self, device total) of every code the
    events hold, in order of first appearance: torch's rows come in the order their
    first event is met, events sorted by start, then longest first, then as listed
    (the parts in order).  Each part's first event per code is found by
    scatter-reductions (``_firsts``), no sort of all events; the sums are exact
    integer sums (the float sums this replaced were exact too, far below 2**53 ns)."""
    codes = [p.code for p in parts]
    if sum(c.shape[0] for c in codes) == 0:
        return []
    n = max(int(c.max()) for c in codes if c.shape[0]) + 1
    if n > max(_DENSE, sum(c.shape[0] for c in codes)):  # few keys used of many strings
        return _sparse_totals(parts)
    count = np.zeros(n, dtype=np.int64)
    sums = np.zeros((4, n), dtype=np.int64)
    best = np.full((4, n), _LAST, dtype=np.int64)  # first event: start, -end, part, position
    for number, p in enumerate(parts):
        if p.code.shape[0] == 0:
            continue
        count += np.bincount(p.code, minlength=n)
        for j, values in enumerate((p.cpu_self, p.cpu_total, p.dev_self, p.dev_total)):
            if values is not None:
                np.add.at(sums[j], p.code, values)
        first, neg_end, at = _firsts(p, n)
        here = np.stack((first, neg_end, np.where(at == _LAST, _LAST, number), at))
        take = _lex_less(here, best)
        best[:, take] = here[:, take]
    groups = np.flatnonzero(count)
    order = groups[np.lexsort(best[::-1, groups])]
    return list(zip(order.tolist(), count[order].tolist(),
                    *(sums[j][order].tolist() for j in range(4)), strict=True))


_DENSE = 1 << 16
"""Codes up to this many are counted in arrays indexed by code (9 words a code)."""


def _sparse_totals(parts: list[Events]) -> list[tuple[int, int, int, int, int, int]]:
    """``group_totals`` where the codes are spread over a range far larger than the
    events (a trace with a huge string table): the keys that occur are numbered
    densely first (one sort of the codes), so the per-code arrays stay as small as
    the rows.  Numbered exactly: 20,000 python functions among 40,000 events left
    buckets of 16 codes still sparser than the events, and the call recursed until
    Python's limit."""
    keys = distinct(np.concatenate([p.code for p in parts]))
    packed = [replace(p, code=np.searchsorted(keys, p.code)) for p in parts]
    return [(int(keys[code]), count, s0, s1, s2, s3)
            for code, count, s0, s1, s2, s3 in group_totals(packed)]


def _lex_less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per column, whether column ``a[:, j]`` is lexicographically less than ``b[:, j]``."""
    less = np.zeros(a.shape[1], dtype=bool)
    equal = np.ones(a.shape[1], dtype=bool)
    for x, y in zip(a, b, strict=True):
        less |= equal & (x < y)
        equal &= x == y
    return less
