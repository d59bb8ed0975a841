"""Setups we have no real trace of, written as Kineto writes them, checked against a
brute-force reading of the same events (QA of serving, XPU, MTIA and old traces).

Each setup is a few region instances whose GPU work comes from a runtime or driver
call: a CUDA graph replay (one ``cudaGraphLaunch`` whose kernels, copy and fill on
two streams all carry its correlation) beside ``cuLaunchKernelEx``, an XPU build's
``xpu_runtime``/``xpu_driver`` calls, MTIA's two device categories with copies told
by name, pids and tids spelled as strings (``"GPU 0"``, ``"stream 7 7"``) with string
timestamps, and 2021 Kineto's capitalised categories.  The brute force: an
instance's GPU events are those whose call (same ``correlation``) starts inside it
on its thread; the op table's device rows sum the device events by name, and an
op's self device time is the events launched by calls carrying its External id.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest

from tests.conftest import cli_json

HOST = {"cuda_runtime", "cuda_driver", "runtime", "xpu_runtime", "xpu_driver", "mtia_runtime"}
DEVICE = {
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "memcpy",
    "memset",
    "mtia_ccp_events",
    "mtia_insight",
}
ODD = "k[bold]x[/bold]\x1b[31m\u202e"  # a name that must stay data


class _Writer:
    """Events of one setup; times in ns, written as µs with three decimals."""

    def __init__(self, as_text: bool = False) -> None:
        self.events: list[dict] = []
        self.corr, self.ext, self.as_text = 100, 1, as_text

    def t(self, ns: int) -> Any:
        text = f"{ns // 1000}.{ns % 1000:03d}"
        return text if self.as_text else float(text)

    def x(self, cat: str, name: str, pid: Any, tid: Any, ts: int, dur: int, **args: Any) -> dict:
        e = {
            "ph": "X",
            "cat": cat,
            "name": name,
            "pid": pid,
            "tid": tid,
            "ts": self.t(ts),
            "dur": self.t(dur),
            "args": args,
        }
        self.events.append(e)
        return e

    def op(self, cat: str, name: str, pid: Any, tid: Any, ts: int, dur: int) -> int:
        self.ext += 1
        self.x(cat, name, pid, tid, ts, dur, **{"External id": self.ext})
        return self.ext

    def launch(
        self,
        cat: str,
        name: str,
        pid: Any,
        tid: Any,
        ts: int,
        ext: int,
        work: list[tuple[str, str, Any, Any, int, int]],
        ext_key: str = "External id",
    ):
        self.corr += 1
        self.x(cat, name, pid, tid, ts, 1500, correlation=self.corr, **{ext_key: ext})
        self.events.append(
            {
                "ph": "s",
                "id": self.corr,
                "pid": pid,
                "tid": tid,
                "ts": self.t(ts),
                "cat": "ac2g",
                "name": "ac2g",
            }
        )
        for wname, wcat, dev, stream, wts, wdur in work:
            self.x(
                wcat,
                wname,
                dev,
                stream,
                wts,
                wdur,
                correlation=self.corr,
                stream=7,
                device=0,
                **{ext_key: ext},
            )


def _serving(w: _Writer) -> None:
    for i in range(2):
        t = 10_000 + 200_000 * i
        step = w.op("user_annotation", "execute_model", 40, 40, t, 150_000)
        mm = w.op("cpu_op", "aten::mm", 40, 40, t + 1_000, 20_000)
        w.launch(
            "cuda_driver",
            "cuLaunchKernelEx",
            40,
            40,
            t + 2_000,
            mm,
            [("triton_mm_0", "kernel", 0, 7, t + 30_000, 3_333)],
        )
        w.launch(
            "cuda_runtime",
            "cudaGraphLaunch",
            40,
            40,
            t + 40_000,
            step,
            [
                ("flash_fwd_splitkv", "kernel", 0, 7, t + 50_000, 10_001),
                (ODD if i == 0 else "gemm", "kernel", 0, 13, t + 50_500, 7_777),
                ("Memset (Device)", "gpu_memset", 0, 7, t + 61_000, 1_001),
                ("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 0, 13, t + 61_500, 999),
            ],
        )
        w.x(
            "gpu_user_annotation",
            "execute_model",
            0,
            7,
            t + 49_999,
            12_004,
            **{"External id": step},
        )
        w.launch(
            "cuda_runtime",
            "cudaLaunchKernel",
            40,
            41,
            t + 3_000,
            0,  # another thread
            [("sampler_kernel", "kernel", 0, 13, t + 90_000, 2_121)],
        )
    w.x("overhead", "Activity Buffer Request", -1, 0, 0, 5_000)


def _xpu(w: _Writer) -> None:
    for i in range(2):
        t = 1_000 + 100_000 * i
        w.op("user_annotation", f"ProfilerStep#{i}", 31, 31, t, 90_000)
        mm = w.op("cpu_op", "aten::mm", 31, 31, t + 100, 30_000)
        w.launch(
            "xpu_runtime",
            "urEnqueueKernelLaunch",
            31,
            31,
            t + 200,
            mm,
            [("gemm_kernel", "kernel", 0, 4, t + 10_000, 5_000)],
        )
        w.launch(
            "xpu_driver",
            "zeCommandListAppendLaunchKernel",
            31,
            31,
            t + 4_000,
            mm,
            [
                ("add_kernel", "kernel", 0, 4, t + 16_000, 700),
                ("Memcpy M2D", "gpu_memcpy", 0, 4, t + 17_000, 300),
            ],
        )


def _mtia(w: _Writer) -> None:
    for i in range(2):
        t = 1_000 + 100_000 * i
        w.op("user_annotation", f"ProfilerStep#{i}", 50, 50, t, 90_000)
        lin = w.op("cpu_op", "aten::linear", 50, 50, t + 100, 30_000)
        w.launch(
            "mtia_runtime",
            "mtiaLaunchKernel",
            50,
            50,
            t + 200,
            lin,
            [
                ("fbgemm_linear", "mtia_ccp_events", 0, 1, t + 10_000, 5_000),
                ("Memcpy HtoD", "mtia_ccp_events", 0, 1, t + 16_000, 400),
                ("Memset", "mtia_insight", 0, 2, t + 17_000, 300),
            ],
        )


def _strings(w: _Writer) -> None:
    for i in range(2):
        t = 1_000 + 100_000 * i
        w.op("user_annotation", f"ProfilerStep#{i}", "1234", "1234", t, 90_000)
        mm = w.op("cpu_op", "aten::mm", "1234", "1234", t + 100, 30_000)
        w.launch(
            "cuda_runtime",
            "cudaLaunchKernel",
            "1234",
            "1234",
            t + 200,
            mm,
            [
                ("gemm", "kernel", "GPU 0", "stream 7 7", t + 10_000, 5_001),
                (
                    "Memcpy DtoD (Device -> Device)",
                    "gpu_memcpy",
                    "GPU 0",
                    "stream 7 7",
                    t + 16_000,
                    401,
                ),
            ],
        )


def _kineto_2021(w: _Writer) -> None:
    for i in range(2):
        t = 1_000_000 + 200_000 * i
        w.op("Operator", f"ProfilerStep#{i}", 24572, "24572", t, 150_000)
        mm = w.op("Operator", "aten::mm", 24572, "24572", t + 2_000, 30_000)
        w.launch(
            "Runtime",
            "cudaLaunchKernel",
            24572,
            "24572",
            t + 3_000,
            mm,
            [("volta_sgemm_128x64_nn", "Kernel", 0, "stream 7", t + 40_000, 12_000)],
            ext_key="external id",
        )
        cp = w.op("Operator", "aten::copy_", 24572, "24572", t + 60_000, 30_000)
        w.launch(
            "Runtime",
            "cudaMemcpyAsync",
            24572,
            "24572",
            t + 61_000,
            cp,
            [
                ("Memcpy HtoD (Pageable -> Device)", "Memcpy", 0, "stream 7", t + 70_000, 2_000),
                ("Memset (Device)", "Memset", 0, "stream 7", t + 73_000, 1_000),
            ],
            ext_key="external id",
        )


SETUPS = {
    "serving": (_serving, False),
    "xpu": (_xpu, False),
    "mtia": (_mtia, False),
    "strings": (_strings, True),
    "kineto_2021": (_kineto_2021, False),
}


def _ns(value: Any) -> int:
    whole, _, frac = str(value).partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def _copy_kind(e: dict) -> str:
    cat, name = e["cat"].lower(), e["name"].lower()
    if cat in ("gpu_memcpy", "memcpy") or (cat.startswith("mtia") and name.startswith("memcpy")):
        return "memcpy"
    if cat in ("gpu_memset", "memset") or (cat.startswith("mtia") and name.startswith("memset")):
        return "memset"
    return "kernel"


def _brute_force(events: list[dict]) -> tuple[dict, Counter, Counter]:
    """(instances per region: [(kind, name, dur_ns)] in GPU start order; device rows
    (name -> total ns); self device ns per CPU op name)."""
    xs = [e for e in events if e["ph"] == "X"]
    calls = {e["args"]["correlation"]: e for e in xs if e["cat"].lower() in HOST}
    gpu = [e for e in xs if e["cat"].lower() in DEVICE]
    regions: dict[str, list] = defaultdict(list)
    ops = [e for e in xs if e["cat"].lower() in ("cpu_op", "operator", "user_annotation")]
    for r in ops:
        name = r["name"]
        if r["cat"].lower() != "user_annotation" and not name.startswith("ProfilerStep#"):
            continue
        s, end = _ns(r["ts"]), _ns(r["ts"]) + _ns(r["dur"])
        mine = [
            g
            for g in gpu
            if (c := calls.get(g["args"]["correlation"])) is not None
            and (c["pid"], c["tid"]) == (r["pid"], r["tid"])
            and s <= _ns(c["ts"]) < end
        ]
        mine.sort(key=lambda g: (_ns(g["ts"]), str(g["tid"])))
        key = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        regions[key].append([(_copy_kind(g), g["name"], _ns(g["dur"])) for g in mine])
    rows: Counter = Counter()
    for g in gpu:
        rows[g["name"]] += _ns(g["dur"])
    by_ext = {o["args"]["External id"]: o["name"] for o in ops}
    own: Counter = Counter()
    for g in gpu:
        c = calls[g["args"]["correlation"]]
        ext = c["args"].get("External id", c["args"].get("external id"))
        if ext in by_ext:
            own["ProfilerStep*" if by_ext[ext].startswith("ProfilerStep#") else by_ext[ext]] += _ns(
                g["dur"]
            )
    return regions, rows, own


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_regions_table_and_names_match_the_brute_force(setup, write_trace):
    build, as_text = SETUPS[setup]
    w = _Writer(as_text)
    build(w)
    path = str(write_trace(w.events))
    regions, rows, own = _brute_force(w.events)
    stats = cli_json("stats", path)
    for name, instances in regions.items():
        listing = cli_json("kernels", path, "--region", name)
        got = [
            [(k["kind"], k["name"], round(k["dur_us"] * 1000)) for k in inst["kernels"]]
            for inst in listing
        ]
        assert got == instances, name
        summary = stats["regions"][name]
        for kind, field in (
            ("kernel", "kernels_per_instance"),
            ("memcpy", "memcpy_per_instance"),
            ("memset", "memset_per_instance"),
        ):
            want = sum(k == kind for inst in instances for k, _, _ in inst) / len(instances)
            assert summary[field] == want, (name, field)
    table = cli_json("table", path)
    device = Counter()
    for r in table:
        if r["device_type"] != "CPU" and r["key"] in rows:
            device[r["key"]] += round(r["self_device_time_total"] * 1000)
        if r["device_type"] == "CPU":
            assert round(r["self_device_time_total"] * 1000) == own.get(r["key"], 0), r["key"]
    assert device == rows
    if setup == "serving":
        assert ODD in rows and any(r["key"] == ODD for r in table)  # kept, not rendered
