"""The details panel's rows (tui.details): every field and arg, in units, whole."""

from __future__ import annotations

import json
import math

import pytest

from profiling.trace import load_trace
from profiling.trace.model import Kind
from tests.conftest import SAMPLE_TRACES
from tests.fixtures.synthetic import DIV
from tests.test_analysis_links import call, gpu, op
from tui.details import (
    VALUE_LIMIT,
    arg_rows,
    copy_text,
    describe,
    event_json,
    fmt_bandwidth,
    fmt_bytes,
    fmt_dims,
    fmt_duration,
    fmt_number,
    fmt_shape,
    format_arg,
    input_rows,
)

KERNEL_ARGS = {
    "External id": 14, "queued": 0, "device": 0, "context": 1, "stream": 7,
    "correlation": 1234567, "registers per thread": 168, "shared memory": 213188,
    "blocks per SM": 1.0, "warps per SM": 12.0, "grid": [2, 66, 1], "block": [384, 1, 1],
    "est. achieved occupancy %": 0,
}
OP_ARGS = {
    "External id": 3, "Record function id": 0,
    "Concrete Inputs": ["", "-2", "-1"],
    "Input type": ["c10::BFloat16", "Scalar", "Scalar"],
    "Input Strides": [[1048576, 65536, 64, 1], [], []],
    "Input Dims": [[8, 16, 1024, 64], [], []],
    "Ev Idx": 2,
}


@pytest.mark.parametrize("n,want", [
    (268_435_456, "268,435,456 B (256 MiB)"),
    (213_188, "213,188 B (208.2 KiB)"),
    (1536, "1,536 B (1.5 KiB)"),
    (512, "512 B"),
    (0, "0 B"),
    (3 * 1024**3, "3,221,225,472 B (3 GiB)"),
])
def test_bytes_exact_then_binary_units(n: int, want: str):
    assert fmt_bytes(n) == want


@pytest.mark.parametrize("v,want", [
    (2070.7, "2,070.7 GB/s"), (2097.152, "2,097.2 GB/s"), (0.5, "0.5 GB/s"),
    (0.005689900426742532, "0.00569 GB/s"), (0, "0.0 GB/s"),
])
def test_bandwidth_with_separators_and_small_figures_kept(v: float, want: str):
    assert fmt_bandwidth(v) == want


def test_grid_block_and_shapes():
    assert fmt_dims([2, 66, 1], "blocks") == "2 × 66 × 1 = 132 blocks"
    assert fmt_dims([384, 1, 1], "threads") == "384 × 1 × 1 = 384 threads"
    assert fmt_dims(["x", 1], "blocks") == '["x", 1]'  # not a grid: shown as it is
    assert fmt_shape([8, 16, 1024, 64]) == "[8, 16, 1024, 64] (8,388,608 elements)"
    assert fmt_shape([1]) == "[1] (1 element)"
    assert fmt_shape([]) == "[]"  # torch writes [] for scalars too: no element count claimed
    assert fmt_duration(85_568) == "85.6 µs (85,568 ns)" and fmt_duration(700) == "700 ns"


def test_numbers_ids_and_percentages():
    assert fmt_number(1.0) == "1" and fmt_number(12_345) == "12,345"
    assert fmt_number(0.75) == "0.75" and fmt_number(True) == "true"
    assert format_arg("correlation", 1234567) == "1234567"  # an id, not an amount
    assert format_arg("External id", 1234567) == "1234567"
    assert format_arg("est. achieved occupancy %", 37.5) == "37.5%"
    assert format_arg("memory bandwidth (GB/s)", 2097.152) == "2,097.2 GB/s"
    assert format_arg("bytes", 268_435_456) == "268,435,456 B (256 MiB)"
    assert format_arg("blocks per SM", 1.0) == "1"
    assert format_arg("name", "[bold]x\x1b[2J") == "[bold]x\\x1b[2J"  # data: escaped, not markup
    assert format_arg("nan", math.nan) == "nan"


def test_inputs_one_per_line_with_dtype_dims_strides_and_value():
    rows = dict(input_rows(OP_ARGS))
    assert rows["input 0"] == (
        "c10::BFloat16 [8, 16, 1024, 64] (8,388,608 elements) strides [1048576, 65536, 64, 1]")
    assert rows["input 1"] == "Scalar = -2" and rows["input 2"] == "Scalar = -1"
    assert len(rows) == 3


def test_every_arg_is_shown():
    labels = [k for k, _ in arg_rows(OP_ARGS)]
    assert labels == ["input 0", "input 1", "input 2", "External id", "Record function id",
                      "Ev Idx"]
    labels = [k for k, _ in arg_rows(KERNEL_ARGS)]
    assert labels == list(KERNEL_ARGS)  # every kernel arg, in the file's order
    values = dict(arg_rows(KERNEL_ARGS))
    assert values["grid"] == "2 × 66 × 1 = 132 blocks"
    assert values["shared memory"] == "213,188 B (208.2 KiB)"
    assert values["registers per thread"] == "168" and values["stream"] == "7"


def test_a_huge_value_is_summarised_not_laid_out_whole():
    (row,) = arg_rows({"pad": "x" * (VALUE_LIMIT + 500)})
    assert row[1].startswith("x" * VALUE_LIMIT) and row[1].endswith("(500 more characters)")


@pytest.fixture(scope="module")
def naive():
    return load_trace(SAMPLE_TRACES / "naive.json.gz", use_cache=False)


def _row(trace, name: str) -> int:
    return next(r for r in range(len(trace)) if trace.name(r).startswith(name))


def test_a_sample_kernel_shows_every_field_and_arg(naive):
    k = _row(naive, "nvjet_sm90_tst_256x128")
    rows = dict(describe(naive, k, chain=["attn_fwd", "aten::bmm", "cuLaunchKernelEx"],
                         launch=k - 1))
    assert rows["name"] == naive.name(k)
    for key, value in naive.args(k).items():
        assert key in rows, key
        assert rows[key] == format_arg(key, value)
    assert rows["grid"] == "2 × 66 × 1 = 132 blocks"
    assert rows["block"] == "384 × 1 × 1 = 384 threads"
    assert rows["shared memory"] == "213,188 B (208.2 KiB)"
    assert rows["duration"] == "85.6 µs (85,568 ns)"
    assert rows["launched by"].startswith("attn_fwd › aten::bmm › cuLaunchKernelEx")
    assert "stream 7" in rows["where"] and "GPU 0" in rows["where"]


def test_the_memcpy_shows_bytes_and_bandwidth(naive):
    m = _row(naive, "Memcpy DtoD")
    rows = dict(describe(naive, m))
    assert rows["bytes"] == "268,435,456 B (256 MiB)"
    assert rows["memory bandwidth (GB/s)"] == "2,097.2 GB/s"
    assert rows["launched by"] == "no launching call in this trace"  # no launch given here


def test_names_are_whole_and_inert(write_trace):
    odd = "[bold red]boom[/] \x1b[2J"
    t = load_trace(write_trace([
        op(odd, 0, 100, ext=1),
        call("cudaLaunchKernel", 10, 5, corr=40, ext=1),
        gpu(DIV, 50, 20, corr=40, ext=1),
    ]))
    rows = dict(describe(t, _row(t, "[bold")))
    assert rows["name"] == "[bold red]boom[/] \\x1b[2J"
    k = _row(t, "void at::native")
    assert dict(describe(t, k))["name"] == DIV  # thousands of characters would still be whole


def test_the_copied_json_is_the_event_with_its_args(naive):
    k = _row(naive, "nvjet_sm90_tst_256x128")
    event = json.loads(copy_text(event_json(naive, k, chain=["aten::bmm", "cuLaunchKernelEx"])))
    assert event["name"] == naive.name(k) and event["ph"] == "X" and event["cat"] == "kernel"
    assert event["args"] == naive.args(k)
    assert event["dur"] == pytest.approx(85.568)
    assert event["pid"] == 0 and event["tid"] == 7
    assert event["attn_tui"]["kind"] == Kind.KERNEL.name.lower()
    assert event["attn_tui"]["launch_chain"] == ["aten::bmm", "cuLaunchKernelEx"]


def test_copied_json_stays_valid_with_non_finite_numbers():
    text = copy_text({"name": "x", "args": {"v": math.inf, "w": [math.nan]}})
    assert json.loads(text) == {"name": "x", "args": {"v": "inf", "w": ["nan"]}}


def test_attribution_line_says_how_the_op_was_found() -> None:
    """A GPU event's details say whether its op is the one torch's table credits
    (External id) or only the op around the call (nesting), from the analysis's label."""
    from profiling.analysis.analysed import AnalysedTrace
    from profiling.trace.loader import load_trace
    from tui.details import ATTRIBUTION_TEXT, describe
    from tui.links import LinkLookup

    trace = load_trace("sample_traces/naive.json.gz")
    lookup = LinkLookup(AnalysedTrace(trace))
    kernel = int(lookup.analysed.links.gpu_rows[0])
    label = lookup.attribution_of(kernel)
    assert label == "external_id"
    rows = dict(describe(trace, kernel, attribution=label))
    assert rows["attributed"] == ATTRIBUTION_TEXT["external_id"]
    cpu_row = int(lookup.analysed.links.launch[kernel])
    assert lookup.attribution_of(cpu_row) == ""
    assert "attributed" not in dict(describe(trace, cpu_row, attribution=""))
