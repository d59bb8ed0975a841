"""``compare`` on a reopened trace (regions read from the stored table, the
implementation stored with the index) gives what a fresh computation gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis import compare as compare_module
from profiling.analysis import json_text
from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import compare_traces, implementations_by_region
from profiling.analysis.json_text import dumps_indent1
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


def compared(a: AnalysedTrace) -> str:
    return dumps_indent1([i.as_json() for i in compare_traces([a])], allow_nan=False,
                         default=str)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_reopened_compare_is_the_fresh_one(path: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    fresh = AnalysedTrace(load_trace(path, use_cache=False))
    want, want_impl = compared(fresh), implementations_by_region(fresh)
    first = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    assert compared(first) == want and implementations_by_region(first) == want_impl
    calls: list[object] = []
    real = compare_module.region_implementation
    def counted(*args: object) -> object:
        calls.append(args[1])
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(compare_module, "region_implementation", counted)
    again = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    assert compared(again) == want and implementations_by_region(again) == want_impl
    assert calls == [], "a reopen recomputed the implementation"


def test_tflops_each_is_tflops_per_second():
    import numpy as np

    from profiling.analysis.attention_flops import tflops_per_second
    from profiling.analysis.compare import _tflops_each

    device = np.array([0.0, 1.5, 1075.327, 3e-3, 7.0e6])
    for flops in (None, 0, 1, 2.5e12, 17_179_869_184, 10**30):
        assert _tflops_each(flops, device) == tuple(
            tflops_per_second(flops, d) for d in device.tolist())


def test_the_command_writes_json_dumps_text_with_long_lists(tmp_path: Path, capsys,
                                                            monkeypatch: pytest.MonkeyPatch):
    """``compare --json`` writes its per-instance lists with msgspec (``number_lists``):
    on a trace of hundreds of instances its text is still json.dumps(indent=1)'s."""
    import json
    import subprocess
    import sys

    from tests.conftest import REPO
    from tui.cli import main

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    big = tmp_path / "naive_repeated.json"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_big_trace.py"),
                    str(SAMPLE_TRACES / "naive.json.gz"), str(big), "--size-mb", "8"],
                   check=True, capture_output=True)
    want = [i.as_json() for i in compare_traces([AnalysedTrace(load_trace(big,
                                                                          use_cache=False))])]
    assert len(want[0]["regions"]["attn_fwd"]["device_time_us"]) >= json_text.MIN_LIST
    lifted: list[int] = []
    real = json_text._number_text

    def spy(values):  # type: ignore[no-untyped-def]
        text = real(values)
        lifted.extend([len(values)] if text is not None else [])
        return text

    monkeypatch.setattr(json_text, "_number_text", spy)
    assert main(["compare", str(big), "--json"]) == 0
    assert len(lifted) == 2, "the two per-instance lists were not written by msgspec"
    assert capsys.readouterr().out == json.dumps(want, indent=1, allow_nan=False,
                                                 default=str) + "\n"
