"""``chunk.chunk_columns`` (values numbered once per event in a dict, the rest once
per distinct value) gives the same trace as the extraction it replaced, kept here
as ``reference_columns``: on the bad-input corpus (lenient decoding, placeholders,
wrong types, digit-string tids), the sample traces and the real traces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.trace import chunk, decode
from profiling.trace.chunk import (
    _FLOW_CODES,
    Chunk,
    MetaEvent,
    _as_int_id,
    _as_number,
    _times,
    int_column,
)
from profiling.trace.events import AnyEvent, Event, TextEvent
from profiling.trace.model import NOT_READ
from profiling.trace.op_inputs import OP_NAMES, op_codes
from tests.fixtures.bad_inputs import CASES
from tests.test_trace_quick_span import _outcome, _traces

# ---- the extraction before the change, unchanged but for names ----


def reference_columns(
    events: list[AnyEvent] | list[TextEvent],
    end: int,
    warnings: list[str],
    placeholders: bool = False,
) -> Chunk | None:
    """Column-wise extraction: a few list comprehensions, no per-event branching.

    None when ``events`` hold numbers too large to give exact nanoseconds (the
    caller decodes them again keeping more of their text: see events.py).
    """
    n_entries = len(events)
    meta = [
        MetaEvent(
            e.name,
            _as_number(e.pid),
            _as_number(e.tid),
            e.args.name,
            e.args.labels,
            e.args.sort_index,
        )
        for e in events
        if e.ph == "M"
    ]
    entry = np.arange(n_entries, dtype=np.int64)
    rows: list[AnyEvent] = list(events)
    if meta or placeholders:  # rows exclude M events and skipped entries
        keep = [i for i, e in enumerate(events) if e.ph != "M" and e.ph != "\x00"]
        rows = [events[i] for i in keep]
        entry = np.asarray(keep, dtype=np.int64)
    times = _times(rows, warnings)
    if times is None:
        return None
    strings: dict[str, int] = {"": 0}
    args = [e.args for e in rows]
    pid = _old_ids([e.pid for e in rows])
    tid = _old_ids([e.tid for e in rows])
    keys = list(zip(pid, tid, strict=True))
    lane_keys = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    ph = _old_phase_codes([e.ph for e in rows])
    correlation = int_column([a.correlation for a in args])
    for i in np.flatnonzero(np.isin(ph, _FLOW_CODES)).tolist():  # flows carry their id in "id"
        flow_id = _as_int_id(rows[i].id)
        correlation[i] = -1 if flow_id is None else flow_id
    external_id = int_column([a.external_id for a in args])
    old = external_id == -1
    if old.any():
        external_id[old] = int_column([a.external_id_old for a in args])[old]
    n = len(rows)
    names = [e.name for e in rows]
    return Chunk(
        n_entries=n_entries,
        entry=entry,
        ts_ns=times[0],
        dur_ns=times[1],
        ts_state=times[2],
        dur_state=times[3],
        ph=ph,
        name_id=_old_intern(names, strings),
        cat_id=_old_intern([e.cat for e in rows], strings),
        correlation=correlation,
        external_id=external_id,
        stream=int_column([a.stream for a in args]),
        lane=np.fromiter(map(lane_keys.__getitem__, keys), dtype=np.int32, count=n),
        op_input=_op_input_one_by_one(names, args),
        strings=list(strings),
        lane_keys=list(lane_keys),
        meta=meta,
        end=end,
        warnings=warnings,
        exact_times=bool(rows) and not isinstance(rows[0], Event),
    )


def _op_input_one_by_one(names: list[str], args: list[Any]) -> np.ndarray:
    """The column added since (``op_inputs``), event by event (tested against the
    args route in ``test_op_inputs``)."""
    out = np.full(len(names), NOT_READ, dtype=np.int8)
    for i, (name, a) in enumerate(zip(names, args, strict=True)):
        if name in OP_NAMES:
            out[i] = op_codes([name], [a.input_type], [a.concrete_inputs])[0]
    return out


def _old_intern(values: list[str], ids: dict[str, int]) -> np.ndarray:
    for s in dict.fromkeys(values):
        if s not in ids:
            ids[s] = len(ids)
    return np.fromiter(map(ids.__getitem__, values), dtype=np.int32, count=len(values))


def _old_phase_codes(phases: list[str]) -> np.ndarray:
    """ord() of each phase letter (0 when absent), computed once per distinct phase."""
    code = {p: (ord(p[0]) if p and ord(p[0]) < 256 else 0) for p in dict.fromkeys(phases)}
    return np.fromiter(map(code.__getitem__, phases), dtype=np.uint8, count=len(phases))


def _old_ids(values: list[int | str]) -> list[Any]:
    """pid/tid values, with digit strings read as the integers they spell.

    Old Kineto wrote some tids as strings and others as ints for one thread.
    """
    distinct = dict.fromkeys(values)
    if not any(type(v) is str for v in distinct):
        return values
    as_number = {v: _as_number(v) for v in distinct}
    return list(map(as_number.__getitem__, values))


# ---- the comparison ----


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new = _outcome(path, True, monkeypatch)
    monkeypatch.setattr(chunk, "chunk_columns", reference_columns)
    monkeypatch.setattr(decode, "chunk_columns", reference_columns)
    assert _outcome(path, True, monkeypatch) == new


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_inputs_same_columns(tmp_path, monkeypatch, case):
    path = tmp_path / f"{case.name}.json"
    path.write_bytes(case.data)
    _same(path, monkeypatch)


@pytest.mark.parametrize("path", _traces(), ids=lambda p: p.name)
def test_traces_same_columns(monkeypatch, path):
    _same(path, monkeypatch)


def test_digit_string_ids_share_a_lane(tmp_path, monkeypatch):
    events = [
        {"ph": "X", "name": "a", "pid": 1, "tid": "7", "ts": 1, "dur": 1},
        {"ph": "X", "name": "b", "pid": "1", "tid": 7, "ts": 3, "dur": 1},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "t"}},
        {"ph": "X", "name": "c", "pid": "p", "tid": "x7", "ts": 5, "dur": 1},
        {"ph": "MX", "name": "odd phase", "pid": 1, "tid": 7, "ts": 6},
        {"ph": "\u0100", "name": "wide phase", "pid": 1, "tid": 7, "ts": 7},
        {"ph": "s", "id": "0x1f", "name": "flow", "pid": 1, "tid": 7, "ts": 8},
    ]
    import json

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    _same(path, monkeypatch)
    got = _outcome(path, True, monkeypatch)
    assert isinstance(got, dict) and len(got["lanes"]) == 2
