"""``kernels`` computed for all instances at once equals the per-event walk, and its
JSON text equals ``json.dumps(indent=1)`` byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import KIND_NAMES, kernels_of
from profiling.analysis.kernels_json import kernels_json, kernels_json_parts
from profiling.analysis.launch_chain import ATTRIBUTIONS, attribution, launch_chain
from profiling.trace.loader import load_trace
from profiling.trace.model import NO_ID, Kind
from tests.conftest import SAMPLE_TRACES, real_trace_files

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


def walked(a: AnalysedTrace, inst) -> dict:
    """The listing of one instance the way ``instance_kernels`` made it before the
    batch: one ``launch_chain`` walk per event (the oracle)."""
    t, links = a.trace, a.links
    rows = inst.gpu_rows(t, links)
    first = int(t.ts_ns[rows].min()) if rows.shape[0] else None
    how = attribution(t, links, rows).tolist()
    kernels = []
    for r, h in zip(rows.tolist(), how, strict=True):
        op, stream = int(links.op[r]), int(t.stream[r])
        kernels.append({
            "name": t.name(r), "kind": KIND_NAMES.get(Kind(int(t.kind[r])), "other"),
            "start_offset_us": (int(t.ts_ns[r]) - (first or 0)) / 1000.0,
            "dur_us": int(t.dur_ns[r]) / 1000.0,
            "stream": None if stream == NO_ID else stream,
            "launched_by": t.name(op) if op >= 0 else None,
            "launch_chain": [t.name(c) for c in launch_chain(t, links, a.ops, r, inst.row)],
            "attribution": ATTRIBUTIONS[h]})
    origin = t.start_ns
    return {"region": inst.name, "instance": inst.index,
            "start_us": (inst.start_ns - origin) / 1000.0, "cpu_time_us": inst.cpu_ns / 1000.0,
            "device_time_us": inst.device_ns / 1000.0,
            "gpu_start_us": None if first is None else (first - origin) / 1000.0,
            "kernels": kernels}


def every_instance(a: AnalysedTrace) -> list:
    found = list(a.regions.instances)
    rows = {i.row for i in found}
    for region in a.attention_regions:
        found += [i for i in a.instances(region) if i.row not in rows]
    return found


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_batch_equals_the_walk_and_json_text_equals_dumps(path: Path):
    a = AnalysedTrace(load_trace(path, use_cache=False))
    instances = every_instance(a)
    listing = [k.as_json() for k in kernels_of(a, instances)]
    for got, inst in list(zip(listing, instances, strict=True))[:300]:
        assert got == walked(a, inst)
    want = json.dumps(listing, indent=1, allow_nan=False)
    assert kernels_json(a, instances) == want
    assert kernels_json(a, instances[:1]) == json.dumps(listing[:1], indent=1)
    for per in (1, 2, 7):  # in chunks of a few heads and events, instances split
        assert "".join(kernels_json_parts(a, instances, per=per)) == want


def test_json_text_of_nothing_and_of_odd_names(write_trace):
    """Empty listings, instances without GPU events, names that need escaping."""
    events = [
        {"ph": "X", "cat": "user_annotation", "name": 'attn "fwd" \u00e9\n', "pid": 1, "tid": 1,
         "ts": 0, "dur": 10},
        {"ph": "X", "cat": "user_annotation", "name": "empty", "pid": 1, "tid": 1,
         "ts": 20, "dur": 5},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm \u2603", "pid": 1, "tid": 1, "ts": 1,
         "dur": 5},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "k<\u00fc>", "pid": 0, "tid": 7, "ts": 4.001,
         "dur": 2.5, "args": {"correlation": 7, "stream": 7, "device": 0}},
        {"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 8,
         "dur": 1, "args": {"stream": 7, "device": 0}},
    ]
    a = AnalysedTrace(load_trace(write_trace(events)))
    instances = every_instance(a)
    assert kernels_json(a, []) == json.dumps([], indent=1) == "[]"
    listing = [k.as_json() for k in kernels_of(a, instances)]
    assert listing and any(not k["kernels"] for k in listing)
    assert kernels_json(a, instances) == json.dumps(listing, indent=1)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_gaps_of_every_instance_at_once_equal_one_by_one(path: Path):
    from profiling.analysis.finding_timing import _gap_columns, _gaps

    def _all_gaps(trace, row_lists: list[np.ndarray]) -> list[tuple]:  # noqa: ANN001
        """``_gap_columns`` of the instances' rows, as one ``_gaps`` tuple each."""
        lengths = [r.shape[0] for r in row_lists]
        rows = np.concatenate(row_lists).astype(np.int64) if row_lists else np.zeros(0, np.int64)
        ptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        return list(zip(*(c.tolist() for c in _gap_columns(trace, rows, ptr)), strict=True))

    a = AnalysedTrace(load_trace(path, use_cache=False))
    rows = [a.gpu_rows(i) for i in every_instance(a)]
    assert _all_gaps(a.trace, rows) == [_gaps(a.trace, r) for r in rows]
    assert _all_gaps(a.trace, rows[::-1][:7]) == [_gaps(a.trace, r) for r in rows[::-1][:7]]


def test_unique_rows_equals_numpys():
    import numpy as np

    from profiling.analysis.ranges import unique_rows

    rng = np.random.default_rng(7)
    for shape, high in (((5000, 6), 9), ((300, 1), 3), ((0, 3), 2), ((4, 0), 2),
                        ((200, 5), 1 << 40)):  # the last one does not fit: numpy's own
        m = rng.integers(-1, high, size=shape)
        want, inverse = np.unique(m, axis=0, return_inverse=True)
        got, got_inverse = unique_rows(m)
        assert np.array_equal(got, want) and np.array_equal(got_inverse,
                                                            np.asarray(inverse).reshape(-1))
