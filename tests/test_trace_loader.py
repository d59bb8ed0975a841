"""The loader: file forms, event kinds, columns, lanes, and one clear error per bad input."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import zlib
from pathlib import Path

import numpy as np
import pytest

from profiling.errors import TraceError
from profiling.trace import Kind, LaneKind, load_trace
from tests.conftest import needs_real_traces, real_trace_files

EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python3"}},
    {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": "main"}},
    {"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 10, "tid": 11,
     "ts": 100.0, "dur": 50.0, "args": {"External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11,
     "ts": 110.25, "dur": 10.5, "args": {"External id": 2, "Input Dims": [[2, 3], [3, 4]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 112.0, "dur": 3.0, "args": {"correlation": 77, "External id": 2}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
     "ts": 130.0, "dur": 20.0, "args": {"correlation": 77, "External id": 2, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "overlapping", "pid": 0, "tid": 7,
     "ts": 130.0, "dur": 20.0, "args": {"correlation": 78, "stream": 7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0,
     "tid": 7, "ts": 151.0, "dur": 2.0, "args": {"correlation": 79, "stream": 7}},
    {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 77, "pid": 10, "tid": 11, "ts": 112.0},
    {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 77, "pid": 0, "tid": 7, "ts": 130.0,
     "bp": "e"},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 10, "tid": 11,
     "ts": 115.0, "s": "t"},
    {"ph": "C", "name": "counter", "pid": 10, "tid": 11, "ts": 120.0, "args": {"v": 1}},
    {"ph": "Z", "name": "unknown phase", "pid": 10, "tid": 11, "ts": 121.0},
    {"ph": "B", "name": "begin-end", "cat": "user_annotation", "pid": 10, "tid": 12, "ts": 200.0},
    {"ph": "E", "name": "begin-end", "cat": "user_annotation", "pid": 10, "tid": 12, "ts": 230.5},
]


def rows_named(trace, name: str) -> list[int]:
    return [i for i in range(len(trace)) if trace.name(i) == name]


def test_object_form_columns_kinds_and_lanes(write_trace):
    trace = load_trace(write_trace(EVENTS, deviceProperties=[{"name": "H200"}]))
    assert trace.n_entries == len(EVENTS)
    assert trace.metadata["deviceProperties"] == [{"name": "H200"}]
    # every non-metadata entry is a row, the E folded into its B
    assert len(trace) == len(EVENTS) - 3 - 1
    for column in (trace.ts_ns, trace.dur_ns, trace.kind, trace.lane, trace.depth):
        assert isinstance(column, np.ndarray)
    kinds = {trace.name(i): Kind(int(trace.kind[i])) for i in range(len(trace))}
    assert kinds["attn_fwd"] is Kind.USER_ANNOTATION
    assert kinds["aten::mm"] is Kind.CPU_OP
    assert kinds["cudaLaunchKernel"] is Kind.RUNTIME
    assert kinds["gemm"] is Kind.KERNEL
    assert kinds["Memcpy DtoD (Device -> Device)"] is Kind.MEMCPY
    assert kinds["ac2g"] is Kind.FLOW
    assert kinds["[memory]"] is Kind.INSTANT
    assert kinds["counter"] is Kind.OTHER and kinds["unknown phase"] is Kind.OTHER
    (mm,) = rows_named(trace, "aten::mm")
    assert trace.ts_ns[mm] == 110_250 and trace.dur_ns[mm] == 10_500
    assert trace.external_id[mm] == 2
    assert trace.args(mm)["Input Dims"] == [[2, 3], [3, 4]]
    (be,) = rows_named(trace, "begin-end")
    assert trace.dur_ns[be] == 30_500
    # overlapping kernels on one stream are both kept
    assert len(rows_named(trace, "gemm")) == 1 and len(rows_named(trace, "overlapping")) == 1
    (gemm,) = rows_named(trace, "gemm")
    assert trace.correlation[gemm] == 77 and trace.stream[gemm] == 7


def test_lanes_grouped_labelled_and_contiguous(write_trace):
    trace = load_trace(write_trace(EVENTS))
    by_label = {(trace.groups[lane.group].label, lane.label): lane for lane in trace.lanes}
    main = by_label[("python3 pid 10", "main 11")]
    stream = by_label[("GPU 0", "stream 7")]
    assert main.kind == LaneKind.CPU and stream.kind == LaneKind.GPU
    assert trace.groups[main.group].index < trace.groups[stream.group].index  # host first
    for lane in trace.lanes:
        rows = trace.lane_rows(lane.index)
        assert np.all(trace.lane[rows] == lane.index)
        assert np.all(np.diff(trace.ts_ns[rows]) >= 0)
    # nesting: attn_fwd > aten::mm > cudaLaunchKernel
    depth = {trace.name(i): int(trace.depth[i]) for i in range(len(trace))}
    assert (depth["attn_fwd"], depth["aten::mm"], depth["cudaLaunchKernel"]) == (0, 1, 2)


def test_fallback_labels_without_metadata(write_trace):
    events = [e for e in EVENTS if e["ph"] != "M"]
    trace = load_trace(write_trace(events))
    labels = {(trace.groups[lane.group].label, lane.label) for lane in trace.lanes}
    assert ("process 10", "thread 11") in labels
    assert ("GPU 0", "stream 7") in labels


def test_bare_array_with_and_without_closing_bracket(write_trace):
    body = json.dumps(EVENTS)
    closed = load_trace(write_trace(raw=body.encode(), name="a.json"))
    open_ended = load_trace(write_trace(raw=(body[:-1] + ",\n").encode(), name="b.json"))
    assert len(closed) == len(open_ended) == len(EVENTS) - 4
    assert closed.warnings == []
    assert any("closing ']'" in w for w in open_ended.warnings)


def test_file_cut_mid_event_keeps_complete_events(write_trace):
    body = json.dumps({"schemaVersion": 1, "traceEvents": EVENTS}).encode()
    cut = body[: body.index(b'"name": "overlapping"') + 5]
    trace = load_trace(write_trace(raw=cut))
    assert trace.metadata == {"schemaVersion": 1}
    names = {trace.name(i) for i in range(len(trace))}
    assert "gemm" in names and "overlapping" not in names
    assert any("cut short" in w for w in trace.warnings)


def test_gzip_detected_by_magic_not_name(write_trace):
    path = write_trace(EVENTS, name="looks_plain.json", gz=True)
    assert len(load_trace(path)) == len(EVENTS) - 4


def test_epoch_microseconds_convert_exactly(write_trace):
    # Written as text: json.dumps would write the float 1665536373729077.25 as
    # "1665536373729077.2" (its shortest repr), and the text is what counts.
    raw = (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, '
           b'"ts": 1665536373729077.250, "dur": 1.5}]}')
    trace = load_trace(write_trace(raw=raw))
    assert int(trace.ts_ns[0]) == 1665536373729077_250
    assert int(trace.dur_ns[0]) == 1500


def test_wrong_types_are_skipped_with_a_warning(write_trace):
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "string ts", "pid": 1.5, "tid": 1, "ts": "2",
         "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "no ts", "pid": 1, "tid": 1},
        "not an event",
        {"ph": "X", "cat": "cpu_op", "name": "negative", "pid": 1, "tid": 1, "ts": 3, "dur": -4},
    ]
    trace = load_trace(write_trace(events))
    names = {trace.name(i) for i in range(len(trace))}
    assert names == {"ok", "string ts", "negative"}
    text = " ".join(trace.warnings)
    assert "no usable 'ts'" in text and "not events" in text and "negative" in text
    assert trace.n_entries == 5


BAD_INPUTS = {
    "empty": (b"", "file is empty"),
    "whitespace": (b"  \n\t ", "only whitespace"),
    "not_json": (b"hello world", "not JSON"),
    "malformed": (b'{"traceEvents": [ {"ph": "X",, } ]}', "not valid JSON"),
    "number": (b"42", "not a trace"),
    "wrong_object": (b'{"events": []}', "no 'traceEvents'"),
    "events_not_list": (b'{"traceEvents": {"a": 1}}', "not a list"),
    "list_of_numbers": (b"[1, 2, 3]", "not a trace"),
    "utf16": ('{"traceEvents": []}'.encode("utf-16"), "UTF-16"),
    "gzip_cut": (gzip.compress(json.dumps({"traceEvents": EVENTS}).encode())[:60], "gzip"),
    "gzip_corrupt": (b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage" * 20, "gzip"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_clear_error_and_the_file_is_untouched(write_trace, case):
    data, expected = BAD_INPUTS[case]
    path = write_trace(raw=data, name=f"{case}.json")
    before = (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    with pytest.raises(TraceError) as info:
        load_trace(path)
    message = info.value.line()
    assert expected in message
    assert str(path) in message and "\n" not in message
    assert (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()) == before


def test_path_errors(tmp_path: Path):
    with pytest.raises(TraceError, match="no such file"):
        load_trace(tmp_path / "missing.json")
    with pytest.raises(TraceError, match="is a directory"):
        load_trace(tmp_path)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        load_trace(fifo)
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(TraceError, match="cannot open"):
        load_trace(loop)


@needs_real_traces
@pytest.mark.parametrize(
    "path", real_trace_files(), ids=lambda p: p.name[:40]
)
def test_every_real_trace_loads_with_every_entry_counted(path: Path):
    trace = load_trace(path)
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if "derived" in path.parts:
        assert trace.warnings, "the derived (broken) files must load with a warning"
        return
    doc = json.loads(data)
    entries = doc["traceEvents"] if isinstance(doc, dict) else doc
    assert trace.n_entries == len(entries)
    assert any(lane.kind == LaneKind.CPU for lane in trace.lanes)


def test_gzip_cut_short_reads_what_a_plain_file_cut_there_would(write_trace):
    """A gzip stream that ends early gives every complete event before the cut, with
    the warning a plain JSON file cut at the same byte of its text gets."""
    text = json.dumps({"schemaVersion": 1, "traceEvents": EVENTS * 30}).encode()
    packed = gzip.compress(text, mtime=0)
    checked = 0
    for cut in range(len(packed) // 3, len(packed) - 8, max(1, len(packed) // 25)):
        decoder = zlib.decompressobj(wbits=31)
        prefix = decoder.decompress(packed[:cut]) + decoder.flush()
        from_gzip = load_trace(write_trace(raw=packed[:cut], name="cut.json.gz"))
        from_plain = load_trace(write_trace(raw=prefix, name="cut.json"))
        assert len(from_gzip) == len(from_plain) > 0
        assert np.array_equal(from_gzip.ts_ns, from_plain.ts_ns)
        assert from_gzip.warnings == from_plain.warnings
        assert any("file cut short" in w for w in from_gzip.warnings)
        checked += 1
    assert checked >= 10
    whole_text = load_trace(write_trace(raw=packed[:-4], name="no_trailer.json.gz"))
    assert len(whole_text) == len(load_trace(write_trace(raw=text, name="whole.json")))
    assert any("gzip stream cut short" in w for w in whole_text.warnings)
