"""c10d Work ranges (``gloo:send``, ``nccl:all_reduce``) are async events, as in torch.

torch leaves them out of the parent/child tree and gives them no self time; the
ops they overlap keep theirs.  Here a ``gloo:send`` that starts inside
``attn_fwd``, holds the start of ``c10d::recv_`` and ends after ``gloo:recv``
began (the shape a real gloo ring step has) must not eat ``attn_fwd``'s self
time nor take any of its own.  The same check against torch's own numbers runs on
real gloo traces in tests/test_capture_job.py.
"""

from __future__ import annotations

from profiling.analysis.async_events import async_rows
from profiling.analysis.key_averages import key_averages
from profiling.trace import load_trace


def x(name: str, ts: float, dur: float, cat: str = "cpu_op") -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {}}


def test_async_ranges_do_not_nest_and_have_no_self_time(write_trace) -> None:  # type: ignore[no-untyped-def]
    path = write_trace([
        x("attn_fwd", 0, 100, "user_annotation"),
        x("c10d::send", 10, 5),
        x("gloo:send", 14, 50, "user_annotation"),
        x("c10d::recv_", 20, 4),
        x("gloo:recv", 22, 45, "user_annotation"),
        x("gloo:all_reduce", 110, 30, "user_annotation"),
    ])
    rows = {r.key: r for r in key_averages(load_trace(path, use_cache=False)).rows}
    assert rows["attn_fwd"].self_cpu_time_total == 100 - 5 - 4  # only its two ops
    assert rows["attn_fwd"].cpu_time_total == 100
    for name, dur in (("gloo:send", 50), ("gloo:recv", 45), ("gloo:all_reduce", 30)):
        assert rows[name].self_cpu_time_total == 0
        assert rows[name].cpu_time_total == dur
    assert rows["c10d::recv_"].self_cpu_time_total == 4


def test_only_c10d_work_titles_are_async(write_trace) -> None:  # type: ignore[no-untyped-def]
    path = write_trace([
        x("nccl:all_reduce", 0, 1, "user_annotation"),
        x("gloo:all_reduce", 2, 1, "cpu_op"),  # not an annotation: an op
        x("attn_fwd", 4, 1, "user_annotation"),
        x("my:thing", 6, 1, "user_annotation"),
    ])
    trace = load_trace(path, use_cache=False)
    import numpy as np

    mask = async_rows(trace, np.arange(len(trace)))
    names = [trace.name(i) for i in np.flatnonzero(mask)]
    assert names == ["nccl:all_reduce"]
