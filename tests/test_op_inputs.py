"""The input dtypes the decoder reads (``Trace.op_input``, ``profiling.trace.op_inputs``)
are the ones the args route reads: on every sample and real trace, through the
lenient decoder, and stored with the index; and ``op_dtypes`` of a loaded trace
then reads no args at all (the first ``findings`` after a first open took 7 s
on a 1 GB trace doing that)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.analysis.op_dtypes import OpDtypes, op_dtypes
from profiling.trace.loader import load_trace
from profiling.trace.model import NOT_READ, Trace
from profiling.trace.op_inputs import FAMILIES, NO_FAMILY, UPCAST
from tests.conftest import real_trace_files

REPO = Path(__file__).resolve().parents[1]
SAMPLES = sorted((REPO / "sample_traces").glob("*.json.gz"))


def _by_args(trace: Trace) -> OpDtypes:
    """``op_dtypes`` as a trace built in memory gets it: every op's args read."""
    saved = trace.op_input
    trace.op_input = np.full(len(trace), NOT_READ, dtype=np.int8)
    try:
        return op_dtypes(trace)
    finally:
        trace.op_input = saved


def _same(a: OpDtypes, b: OpDtypes) -> bool:
    return (np.array_equal(a.rows, b.rows) and np.array_equal(a.family, b.family)
            and np.array_equal(a.upcast, b.upcast))


class _NoArgs:
    """An args source that fails the test when asked."""

    def args(self, entry: int) -> dict[str, Any]:
        raise AssertionError(f"args of entry {entry} read")

    def args_many(self, entries: list[int]) -> list[dict[str, Any]]:
        raise AssertionError(f"args of {len(entries)} entries read")


@pytest.mark.parametrize("path", SAMPLES + real_trace_files(), ids=lambda p: p.name)
def test_decoder_reads_what_the_args_say(path: Path):
    trace = load_trace(path, use_cache=False)
    by_args = _by_args(trace)
    trace.args_source = _NoArgs()
    assert _same(op_dtypes(trace), by_args)


def test_the_samples_have_answers_to_compare():
    """The comparison above is not vacuous: the math backend's casts are upcasts."""
    trace = load_trace(REPO / "sample_traces" / "sdpa_math.json.gz", use_cache=False)
    found = op_dtypes(trace)
    assert found.rows.shape[0] > 0 and (found.family >= 0).all()
    assert found.upcast.any()


def _op(name: str, types: list[Any], concrete: list[Any], ts: float) -> dict[str, Any]:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 1,
            "args": {"Input type": types, "Concrete Inputs": concrete, "External id": 1}}


EVENTS = [
    _op("aten::to", ["c10::BFloat16", "Scalar"], ["", "6"], 0),  # an upcast
    _op("aten::to", ["float", "Scalar"], ["", "6"], 10),  # fp32 already: no upcast
    _op("aten::mm", ["c10::Half", "c10::Half"], ["", ""], 20),
    _op("aten::_softmax", ["", "Scalar"], ["", "-1"], 30),  # no tensor dtype
    _op("aten::add", ["float"], [""], 40),  # not asked about
]


def _codes(trace: Trace) -> dict[float, int]:
    return {int(trace.ts_ns[r]) // 1000: int(trace.op_input[r]) for r in range(len(trace))}


def test_codes_of_a_handmade_trace(write_trace):
    trace = load_trace(write_trace(EVENTS), use_cache=False)
    assert _codes(trace) == {0: FAMILIES.index("bf16") | UPCAST, 10: FAMILIES.index("fp32"),
                             20: FAMILIES.index("fp16"), 30: NO_FAMILY, 40: NOT_READ}


def test_lenient_decoder_reads_them_too(write_trace):
    """A NaN token sends the file through the lenient reader: same codes."""
    raw = write_trace(EVENTS).read_bytes().replace(b'"dur": 1,', b'"dur": NaN,', 1)
    trace = load_trace(write_trace(raw=raw, name="nan.json"), use_cache=False)
    assert any("NaN" in w or "JSON" in w for w in trace.warnings)
    assert _codes(trace)[20] == FAMILIES.index("fp16")
    assert _codes(trace)[0] == FAMILIES.index("bf16") | UPCAST


def test_reopened_index_keeps_them(write_trace):
    path = write_trace(EVENTS * 2000, name="big.json")
    first = load_trace(path, min_cache_bytes=0)
    again = load_trace(path, min_cache_bytes=0)
    assert isinstance(again.op_input, np.memmap)  # mapped from the index, not parsed
    assert np.array_equal(first.op_input, again.op_input)
    again.args_source = _NoArgs()
    assert _same(op_dtypes(again), _by_args(first))
