"""``kernels`` as text (``tui.kernels_text``): every instance's title and every event's
row say what ``kernels_of`` says, on every sample and real trace, in any chunking."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import kernels_of
from profiling.analysis.units import fmt_ns
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files
from tests.test_kernels_batch import every_instance
from tui.kernels_text import CHAIN_WIDTH, NAME_WIDTH, kernels_text_parts, kernels_text_tasks
from tui.links import chain_text
from tui.names import cells, clip, visible

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def expected_lines(a: AnalysedTrace, instances: list) -> list[str]:
    """Each title and row, spaces squeezed, written from ``kernels_of`` one by one."""
    out = []
    for inst, listing in zip(instances, kernels_of(a, instances), strict=True):
        counts = {}
        for k in listing.kernels:
            counts[k.kind] = counts.get(k.kind, 0) + 1
        what = ", ".join(f"{counts[kind]} {kind}{'s' if counts[kind] != 1 else ''}"
                         for kind in ("kernel", "memcpy", "memset", "other") if kind in counts)
        out.append(squeeze(f"{visible(inst.name)} #{inst.index}: starts "
                           f"{fmt_ns(inst.start_ns - a.trace.start_ns, 4)}, "
                           f"CPU {fmt_ns(inst.cpu_ns)}, GPU {fmt_ns(inst.device_ns)}, "
                           + (what or "no GPU events launched")))
        for n, k in enumerate(listing.kernels):
            label = " (by nesting)" if k.attribution == "nesting" else ""
            chain = (chain_text(k.launch_chain, CHAIN_WIDTH - len(label)) or "-") + label
            out.append(squeeze(" ".join([
                str(n), fmt_ns(round(k.start_offset_us * 1000)), fmt_ns(round(k.dur_us * 1000)),
                k.kind, "" if k.stream is None else visible(str(k.stream)),
                clip(visible(k.name), NAME_WIDTH), chain])))
    return out


def listed_lines(text: str) -> list[str]:
    """Titles and rows of the text, spaces squeezed (headers, rules, blanks left out)."""
    lines = [squeeze(line) for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith(("# offset", "─"))]


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_text_says_what_kernels_of_says(path: Path):
    a = AnalysedTrace(load_trace(path, use_cache=False))
    instances = every_instance(a)[:400]
    text = "".join(kernels_text_parts(a, instances))
    assert listed_lines(text) == expected_lines(a, instances)
    for per in (1, 5):  # instances split across chunks: the same text
        assert "".join(kernels_text_parts(a, instances, per=per)) == text
    # as bytes (for a UTF-8 stdout): each piece encoded alone, the same text encoded
    for per in (1, 5, 1000):
        parts = [p() for p in kernels_text_tasks(a, instances, per=per, utf8_errors="strict")]
        assert all(isinstance(p, bytes) for p in parts)
        assert b"".join(parts) == text.encode()


def test_bytes_parts_keep_every_character_and_the_error_handler(write_trace):
    """Wide, combining and lone-surrogate characters in names (the loader makes the
    last U+FFFD), and a terminal's width that cuts them: the bytes parts are the
    text's own encoding, under the stream's error handler."""
    names = ["宽字符注意力カーネル🔥" * 4, "e\u0301" * 50, "bad\udcff" * 3]
    events = [{"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 1, "tid": 1,
               "ts": 0, "dur": 100}]
    for i, name in enumerate(names):
        events += [
            {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": 1 + 10 * i,
             "dur": 5},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
             "tid": 1, "ts": 2 + 10 * i, "dur": 1, "args": {"correlation": 7 + i}},
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
             "ts": 4.5 + 10 * i, "dur": 2.5,
             "args": {"correlation": 7 + i, "stream": 7, "device": 0}},
        ]
    a = AnalysedTrace(load_trace(write_trace(events)))
    instances = a.instances("attn_fwd")
    for width in (None, 60, 200):
        text = "".join(kernels_text_parts(a, instances, width))
        assert "宽" in text and "\u0301" in text and "bad\ufffd" in text
        for errors in ("surrogateescape", "replace"):
            parts = kernels_text_tasks(a, instances, width, per=1, utf8_errors=errors)
            assert b"".join(p() for p in parts) == text.encode("utf-8", errors)


def test_a_terminal_gets_lines_that_fit_and_names_stay_data(write_trace):
    name = "[bold red]boom[/] \x1b[31m" + "k" * 200
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 1, "tid": 1,
         "ts": 0, "dur": 10},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 4.001,
         "dur": 2.5, "args": {"correlation": 7, "stream": 7, "device": 0}},
    ]
    a = AnalysedTrace(load_trace(write_trace(events)))
    instances = a.instances("attn_fwd")
    wide = "".join(kernels_text_parts(a, instances))
    assert "[bold red]boom[/] \\x1b[31m" in wide and "\x1b" not in wide
    narrow = "".join(kernels_text_parts(a, instances, width=100))
    table = [line for line in narrow.splitlines() if line.startswith(("  ", " ─"))]
    assert len(table) == 3 and all(cells(line) <= 100 for line in table)  # head, rule, row
    assert "aten::mm" in table[2] and "aten::mm › cudaLaunchKernel" in wide


@pytest.mark.parametrize("path", TRACES[:6] + TRACES[-4:], ids=lambda p: p.name)
def test_the_regions_views_rows_say_what_kernels_of_says(path: Path):
    """``KernelList`` makes each row on demand from the columns: the same rows as
    ``kernels_of`` made for every event at once."""
    from tui.regions_data import kernel_rows

    a = AnalysedTrace(load_trace(path, use_cache=False))
    instances = every_instance(a)[:200]
    for inst, listing in zip(instances, kernels_of(a, instances), strict=True):
        rows = kernel_rows(a, inst)
        assert len(rows) == len(listing.kernels)
        got = [(k.row, k.name, k.kind, k.offset_ns, k.dur_ns, k.stream, k.launch_chain,
                k.launched_by) for k in rows[:]]
        assert got == [(e.row, e.name, e.kind, round(e.start_offset_us * 1000),
                        round(e.dur_us * 1000), -1 if e.stream is None else e.stream,
                        e.launch_chain, chain_text(e.launch_chain)) for e in listing.kernels]
        if len(rows):
            assert rows[-1] == rows[len(rows) - 1]
            assert rows[0].share == pytest.approx(rows[0].dur_ns / max(inst.device_ns, 1))
