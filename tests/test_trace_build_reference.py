"""``columns.build_trace`` (columns merged and sorted one at a time, taken from the
chunks as it goes, rows ordered by ``row_order``) builds the same trace as the
merge it replaced, kept here as ``reference_build``: on the bad-input corpus and
the sample and real traces, loaded in one process."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from profiling.trace import parse
from profiling.trace.chunk import Chunk
from profiling.trace.columns import (
    _SLICE_TABLE,
    _kinds,
    _pair_begin_end,
    _remap,
    _streams_from_lanes,
    _usable_rows,
)
from profiling.trace.depths import depths
from profiling.trace.kinds import device_types, kinds_by_name
from profiling.trace.lanes import build_lanes
from profiling.trace.model import ArgsSource, Trace, narrow
from tests.fixtures.bad_inputs import CASES
from tests.test_trace_quick_span import _outcome, _traces

_CONCAT = ("ts_ns", "dur_ns", "ts_state", "dur_state", "ph", "correlation", "external_id", "stream",
           "op_input")


def reference_build(
    chunks: list[Chunk],
    entry_starts: list[int],
    metadata: dict[str, Any],
    warnings: list[str],
    path: str,
    args_source: ArgsSource | None,
) -> Trace:
    """Merge chunks into one ``Trace`` (rows sorted by lane, start, -duration)."""
    warnings = list(warnings)
    for chunk in chunks:
        warnings.extend(chunk.warnings)
    strings: dict[str, int] = {"": 0}
    lane_keys: dict[tuple[Any, Any], int] = {}
    name_id, cat_id, lane_of, entry = [], [], [], []
    for chunk, first_entry in zip(chunks, entry_starts, strict=True):
        remap = _remap(chunk.strings, strings)
        name_id.append(remap[chunk.name_id])
        cat_id.append(remap[chunk.cat_id])
        lanes_remap = _remap(chunk.lane_keys, lane_keys)
        lane_of.append(lanes_remap[chunk.lane])
        entry.append(chunk.entry + first_entry)
    col = {key: np.concatenate([getattr(c, key) for c in chunks]) for key in _CONCAT}
    names = np.concatenate(name_id).astype(np.int32)
    cats = np.concatenate(cat_id).astype(np.int32)
    lane = np.concatenate(lane_of).astype(np.int32)
    source_index = np.concatenate(entry).astype(np.int64)
    string_list = list(strings)
    ts_ns, dur_ns, ph = col["ts_ns"], col["dur_ns"], col["ph"]
    kind = kinds_by_name(_kinds(ph, cats, string_list), cats, names, string_list)
    by_category = np.array([int(d) for d in device_types(string_list)], dtype=np.uint8)
    device = np.where(_SLICE_TABLE[ph], by_category[cats], 0).astype(np.uint8)

    valid = _usable_rows(col, warnings)
    _pair_begin_end(ph, lane, ts_ns, dur_ns, valid, warnings)

    keys = list(lane_keys)
    meta = [m for c in chunks for m in c.meta]
    lanes, groups, lane_remap = build_lanes(keys, lane[valid], kind[valid], meta, device[valid])
    lane = lane_remap[lane]

    rows = np.flatnonzero(valid)
    order = rows[np.lexsort((-dur_ns[rows], ts_ns[rows], lane[rows]))]
    lane_sorted = lane[order]
    lane_start = np.searchsorted(lane_sorted, np.arange(len(lanes) + 1)).astype(np.int64)
    ts_ns, dur_ns, kind = ts_ns[order], dur_ns[order], kind[order]
    depth = depths(ts_ns, dur_ns, kind, lane_start)
    for item in lanes:
        lo, hi = int(lane_start[item.index]), int(lane_start[item.index + 1])
        item.events = hi - lo
        item.max_depth = int(depth[lo:hi].max()) if hi > lo else 0

    stream = col["stream"][order]
    _streams_from_lanes(stream, kind, lane_sorted, lanes)  # a rule added since (its own test)
    # the narrow dtypes where every value fits, added since (tests/test_index_size.py)
    return Trace(
        path=path,
        n_entries=sum(c.n_entries for c in chunks),
        strings=string_list,
        ts_ns=ts_ns,
        dur_ns=dur_ns,
        name_id=narrow(names[order], np.int16, np.int32),
        cat_id=narrow(cats[order], np.int16, np.int32),
        kind=kind,
        ph=ph[order],
        lane=lane_sorted.astype(np.int32),
        depth=depth,
        correlation=narrow(col["correlation"][order]),
        external_id=narrow(col["external_id"][order]),
        stream=narrow(stream),
        op_input=col["op_input"][order],
        source_index=narrow(source_index[order]),
        lanes=lanes,
        lane_start=lane_start,
        groups=groups,
        metadata=metadata,
        warnings=warnings,
        args_source=args_source,
        device_type=device[order],
    )


def _same(path, monkeypatch) -> None:
    new = _outcome(path, True, monkeypatch)
    monkeypatch.setattr(parse, "build_trace", reference_build)
    assert _outcome(path, True, monkeypatch) == new


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_inputs_same_trace(tmp_path, monkeypatch, case):
    path = tmp_path / f"{case.name}.json"
    path.write_bytes(case.data)
    _same(path, monkeypatch)


@pytest.mark.parametrize("path", _traces(), ids=lambda p: p.name)
def test_traces_same_trace(monkeypatch, path):
    _same(path, monkeypatch)
