"""Regenerate the key_averages oracles: small workloads profiled with the local torch.

Each workload is profiled once with ``torch.profiler``; the Chrome trace is saved
as ``<name>.trace.json.gz`` and torch's own ``prof.key_averages()`` as
``<name>.key_averages.json`` (the ``table --json`` row format of DESIGN.md
section 5), with the two footer totals torch's ``table()`` prints in
``<name>.totals.json``.  The analysis must reproduce the rows from the trace
alone, which is what ``tests/test_key_averages_oracles.py`` checks.

    python tests/oracles/make_cpu_oracles.py               # CPU, into tests/oracles/cpu
    python3 tests/oracles/make_cpu_oracles.py --device cuda  # on a GPU: tests/oracles/cuda

``VERSION`` records the torch that made a folder: torch >= 2.13 counts
``python_function`` slices (the ``python_stack`` workload) as events of their
own, and the test asks the analysis for that newer table there.  Timings differ
from run to run, so regenerating changes the files; the test only needs trace
and oracle to come from the same run.  Workloads are kept tiny so every file
stays well under 200 KB.  ``--dump-events`` also writes torch's FunctionEvents
(ids, threads, parents, kernels) for debugging a mismatch.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile, record_function, schedule

HERE = Path(__file__).resolve().parent


def _device_type_name(device_type: DeviceType) -> str:
    return "CPU" if device_type == DeviceType.CPU else "CUDA"


def key_average_rows(prof: profile) -> list[dict]:
    """torch's key_averages() rows in the ``table --json`` format (times in us)."""
    rows = []
    for evt in prof.key_averages():
        rows.append(
            {
                "key": evt.key,
                "device_type": _device_type_name(evt.device_type),
                "count": int(evt.count),
                "self_cpu_time_total": float(evt.self_cpu_time_total),
                "cpu_time_total": float(evt.cpu_time_total),
                "self_device_time_total": float(evt.self_device_time_total),
                "device_time_total": float(evt.device_time_total),
            }
        )
    return rows


def footer_totals(prof: profile) -> dict:
    """The two totals under torch's table(), computed as ``_build_table`` does."""
    self_cpu = 0.0
    self_device = 0.0
    for evt in prof.key_averages():
        self_cpu += evt.self_cpu_time_total
        if evt.device_type == DeviceType.CPU and evt.is_legacy:
            self_device += evt.self_device_time_total
        elif evt.device_type != DeviceType.CPU and not evt.is_user_annotation:
            self_device += evt.self_device_time_total
    return {"self_cpu_time_total": self_cpu, "self_device_time_total": self_device}


# ---- workloads: each takes (device, step) and runs one profiler step ----


def _qkv(device: str, b: int = 1, h: int = 2, s: int = 32, d: int = 16):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(b, h, s, d, generator=g).to(device) for _ in range(3)]


def naive(device: str) -> Callable[[], None]:
    q, k, v = _qkv(device)

    def step() -> None:
        with torch.no_grad(), record_function("attn_fwd"):
            s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            mask = torch.ones(s.shape[-2:], dtype=torch.bool).triu(1).to(device)
            s = s.masked_fill(mask, float("-inf"))
            (s.softmax(-1) @ v).sum()

    return step


def inplace(device: str) -> Callable[[], None]:
    q, k, v = _qkv(device)
    mask = torch.ones(q.shape[-2], q.shape[-2], dtype=torch.bool, device=device).triu(1)

    def step() -> None:
        with torch.no_grad(), record_function("attn_fwd"):
            s = q @ k.transpose(-2, -1)
            s.mul_(1 / math.sqrt(q.shape[-1]))
            s.masked_fill_(mask, float("-inf"))
            s.softmax(-1) @ v

    return step


def sdpa_math(device: str) -> Callable[[], None]:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = _qkv(device)

    def step() -> None:
        with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), record_function("attn_fwd"):
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    return step


def nested(device: str) -> Callable[[], None]:
    """Nested record_functions, and a same-name single-child pair torch merges."""
    q, k, v = _qkv(device)

    def step() -> None:
        with record_function("outer"):
            with record_function("inner"):
                torch.add(q, 1)
            with record_function("block"):
                with record_function("block"):  # only child of a same-name parent
                    torch.mul(k, 2)
            with record_function("twice"):  # same name, but two children: kept
                with record_function("twice"):
                    torch.relu(v)
                torch.neg(v)

    return step


def threads(device: str) -> Callable[[], None]:
    """Ops on other threads (torch.jit.fork): nesting is per thread, not by time alone."""
    q, k, v = _qkv(device)

    @torch.jit.script
    def work(x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.matmul(x, x.transpose(-2, -1))
        return x

    @torch.jit.script
    def fan_out(x: torch.Tensor) -> list[torch.futures.Future[torch.Tensor]]:
        return [torch.jit.fork(work, x) for _ in range(2)]

    # The scripted fan_out only forks: waiting inside it would let it resume on
    # another thread, which torch marks async, and a trace cannot show that.

    def step() -> None:
        with record_function("main_region"):
            for future in fan_out(q):
                future.wait()
            torch.matmul(k, v.transpose(-2, -1))

    return step


def memory(device: str) -> Callable[[], None]:
    """profile_memory=True, no schedule: frees outside any op become a '[memory]' row."""
    q, k, v = _qkv(device)

    def step() -> None:
        with record_function("attn_fwd"):
            s = q @ k.transpose(-2, -1)
            p = s.softmax(-1)
        del s
        out = p @ v
        del p, out

    return step


def python_stack(device: str) -> Callable[[], None]:
    """with_stack=True: python_function events, which torch counts as rows too."""
    q, k, v = _qkv(device, s=8, d=8)

    def helper(x: torch.Tensor) -> torch.Tensor:
        return x.relu()

    def step() -> None:
        with record_function("attn_fwd"):
            helper(q @ k.transpose(-2, -1)).softmax(-1) @ v

    return step


def copies(device: str) -> Callable[[], None]:
    """Host<->device copies and fills (Memcpy / Memset rows on a GPU)."""
    host = torch.randn(64, 64)

    def step() -> None:
        with record_function("attn_fwd"):
            x = host.to(device)
            y = torch.zeros(64, 64, device=device)
            y.zero_()
            z = (x + y).cpu()
            z.sum()

    return step


def backward(device: str) -> Callable[[], None]:
    """A training step: autograd ops (on their own thread on a GPU) and fwdbwd flows."""
    g = torch.Generator().manual_seed(1)
    w = torch.randn(16, 16, generator=g).to(device).requires_grad_()
    x = torch.randn(4, 32, 16, generator=g).to(device)

    def step() -> None:
        with record_function("attn_fwd"):
            h = x @ w
            a = (h @ h.transpose(-2, -1)).softmax(-1) @ h
        with record_function("attn_bwd"):
            a.sum().backward()
        w.grad = None

    return step


WORKLOADS: dict[str, tuple[Callable[[str], Callable[[], None]], dict]] = {
    "naive": (naive, {}),
    "inplace": (inplace, {}),
    "sdpa_math": (sdpa_math, {}),
    "nested": (nested, {}),
    "threads": (threads, {}),
    "memory": (memory, {"profile_memory": True, "schedule": False}),
    "python_stack": (python_stack, {"with_stack": True}),
    "copies": (copies, {}),
    "backward": (backward, {}),
    "sync_events": (copies, {"sync_events": True}),
}


def function_events(prof: profile) -> list[dict]:
    """torch's own FunctionEvents after _build_tree (for debugging the analysis)."""
    events = prof.events()
    index = {id(e): i for i, e in enumerate(events)}
    return [
        {
            "name": e.name,
            "device_type": _device_type_name(e.device_type),
            "thread": e.thread,
            "start_us": e.time_range.start,
            "end_us": e.time_range.end,
            "id": e.id,
            "is_legacy": e.is_legacy,
            "linked_correlation_id": getattr(e, "linked_correlation_id", None),
            "is_user_annotation": bool(e.is_user_annotation),
            "is_async": e.is_async,
            "parent": index.get(id(e.cpu_parent)) if e.cpu_parent is not None else None,
            "kernels": [[k.name, k.duration] for k in e.kernels],
            "self_cpu": e.self_cpu_time_total,
            "device_total": e.device_time_total,
            "self_device": e.self_device_time_total,
        }
        for e in events
    ]


def profile_workload(
    name: str, device: str, out: Path, active: int = 2, dump_events: bool = False
) -> dict:
    make, options = WORKLOADS[name]
    options = dict(options)
    step = make(device)
    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    for _ in range(2):  # warm the allocator and the dispatcher outside the profile
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    use_schedule = options.pop("schedule", True)
    if options.pop("sync_events", False):
        options["experimental_config"] = torch._C._profiler._ExperimentalConfig(
            enable_cuda_sync_events=True
        )
    steps = 2 + active if use_schedule else active
    with profile(
        activities=activities,
        schedule=schedule(wait=1, warmup=1, active=active) if use_schedule else None,
        **options,
    ) as prof:
        for _ in range(steps):
            step()
            if device == "cuda":
                torch.cuda.synchronize()
            if use_schedule:
                prof.step()
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as src, gzip.open(out / f"{name}.trace.json.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    rows = key_average_rows(prof)
    (out / f"{name}.key_averages.json").write_text(json.dumps(rows, indent=1) + "\n")
    if dump_events:
        (out / f"{name}.events.json").write_text(json.dumps(function_events(prof)) + "\n")
    totals = footer_totals(prof)
    (out / f"{name}.totals.json").write_text(json.dumps(totals, indent=1) + "\n")
    return {"name": name, "rows": len(rows), **totals}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--out", type=Path, help="output folder (default tests/oracles/DEVICE)")
    parser.add_argument("--only", action="append", choices=sorted(WORKLOADS))
    parser.add_argument(
        "--dump-events", action="store_true", help="also write torch's FunctionEvents (debug)"
    )
    args = parser.parse_args(argv)
    out = args.out or HERE / args.device
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for name in args.only or WORKLOADS:
        if WORKLOADS[name][1].get("sync_events") and args.device != "cuda":
            continue
        info = profile_workload(name, args.device, out, dump_events=args.dump_events)
        print(json.dumps(info), file=sys.stderr)
    (out / "VERSION").write_text(f"torch {torch.__version__} device {args.device}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
