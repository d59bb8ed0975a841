"""Synthetic traces for tests, demos and benchmarks (no torch).

``naive_like_doc`` writes what ``torch.profiler`` records for naive attention
on one GPU (``ProfilerStep#N`` > ``attn_fwd`` > aten ops > CUDA runtime calls,
kernels on one stream, the extra ``Memcpy HtoD`` under ``aten::masked_fill``,
``ac2g`` flows and ``M`` metadata) in the Kineto JSON layout, small and
deterministic.  ``tui.flat_trace`` builds big single-lane traces for benchmarks.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

PID, TID, GPU_PID, STREAM = 4242, 4242, 0, 7

GEMM = "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn"
DIV = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<float> >, "
    "at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)"
)
FILL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<bool>, at::detail::Array<char*, 1>)"
)
TRIU = "void at::native::triu_tril_kernel<bool, int, true, 4, false>(at::cuda::detail::TensorInfo<bool, int>, at::cuda::detail::TensorInfo<bool const, int>, long, long, long, int)"  # noqa: E501
COPY = (
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
    "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() "
    "const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, "
    "unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
    "at::native::memory::StoreWithCast<1> >(int, at::detail::Array<char*, 2>)"
)
MASKED_FILL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
    "masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16, bool)#1}, "
    "at::detail::Array<char*, 3> >(int, at::detail::Array<char*, 3>)"
)
SOFTMAX = (
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, "
    "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)"
)
MEMCPY = "Memcpy HtoD (Pageable -> Device)"

# (op path from attn_fwd, launch API or None, GPU event name or None, GPU kind, gpu ns)
_OPS: list[tuple[tuple[str, ...], str | None, str | None, str, int]] = [
    (("aten::transpose", "aten::as_strided"), None, None, "", 0),
    (("aten::matmul", "aten::bmm"), "cudaLaunchKernel", GEMM, "kernel", 180_000),
    (("aten::div",), "cudaLaunchKernel", DIV, "kernel", 95_000),
    (("aten::ones", "aten::fill_"), "cudaLaunchKernel", FILL, "kernel", 6_000),
    (("aten::triu",), "cudaLaunchKernel", TRIU, "kernel", 8_000),
    (
        ("aten::masked_fill", "aten::clone", "aten::copy_"),
        "cudaLaunchKernel",
        COPY,
        "kernel",
        90_000,
    ),
    (
        ("aten::masked_fill", "aten::to", "aten::_to_copy", "aten::copy_"),
        "cudaMemcpyAsync",
        MEMCPY,
        "gpu_memcpy",
        4_000,
    ),
    (
        ("aten::masked_fill", "aten::masked_fill_"),
        "cudaLaunchKernel",
        MASKED_FILL,
        "kernel",
        120_000,
    ),
    (("aten::softmax", "aten::_softmax"), "cudaLaunchKernel", SOFTMAX, "kernel", 210_000),
    (("aten::matmul", "aten::bmm"), "cudaLaunchKernel", GEMM, "kernel", 175_000),
]


def _us(ns: int) -> float:
    return ns / 1000.0


def naive_like_doc(steps: int = 3, *, odd_name: str | None = None) -> dict[str, Any]:
    """A Kineto-style trace document of ``steps`` profiler steps of naive attention.

    ``odd_name`` adds one CPU op with that name (markup, escapes...) to each step.
    """
    base = 1_700_000_000_000_000  # ns; epoch-sized like real traces
    ev: list[dict[str, Any]] = []
    corr = 100
    ext = 1000
    t = base + 50_000
    gpu_t = t
    for step in range(steps):
        step_start = t
        t += 2_000
        attn_start = t
        t += 3_000
        gpu_attn_start: int | None = None
        groups: list[dict[str, Any]] = []  # op-path groups sharing top-level ops
        top_open: dict[str, Any] | None = None
        for path, api, gname, gkind, gns in _OPS:
            if top_open is None or top_open["path0"] != path[0] or path[0] == "aten::matmul":
                if top_open is not None:
                    top_open["end"] = t
                    t += 1_500
                top_open = {"path0": path[0], "start": t, "children": []}
                groups.append(top_open)
                t += 1_000
            child_start = t
            t += 800 * (len(path) - 1)
            launch = None
            if api:
                launch = (t, 4_000 if api == "cudaLaunchKernel" else 9_000)
                t += launch[1] + 500
            t += 800 * (len(path) - 1)
            top_open["children"].append((path, child_start, t, api, launch, gname, gkind, gns))
            t += 700
        if top_open is not None:
            top_open["end"] = t
        if odd_name:
            ev.append(_cpu(odd_name, t, 1_000, ext))
            ext += 1
            t += 1_500
        t += 2_000
        attn_end = t
        for group in groups:
            ext += 1
            ev.append(
                _cpu(
                    group["path0"],
                    group["start"],
                    group["end"] - group["start"],
                    ext,
                    dims=[[8, 16, 1024, 64], [8, 16, 64, 1024]],
                )
            )
            for path, c0, c1, api, launch, gname, gkind, gns in group["children"]:
                inner = path[1:]
                depth_pad = 0
                for name in inner:
                    depth_pad += 1
                    ext += 1
                    ev.append(_cpu(name, c0 + 400 * depth_pad, (c1 - c0) - 800 * depth_pad, ext))
                if api and launch is not None:
                    corr += 1
                    ev.append(
                        {
                            "ph": "X",
                            "cat": "cuda_runtime",
                            "name": api,
                            "pid": PID,
                            "tid": TID,
                            "ts": _us(launch[0]),
                            "dur": _us(launch[1]),
                            "args": {"External id": ext, "cbid": 211, "correlation": corr},
                        }
                    )
                    g0 = max(gpu_t + 2_000, launch[0] + 6_000)
                    if gpu_attn_start is None:
                        gpu_attn_start = g0 - 500
                    gargs: dict[str, Any] = {
                        "External id": ext,
                        "device": 0,
                        "context": 1,
                        "stream": STREAM,
                        "correlation": corr,
                    }
                    if gkind == "kernel":
                        gargs.update(
                            {
                                "queued": 0,
                                "registers per thread": 128,
                                "shared memory": 16384,
                                "blocks per SM": 8.0,
                                "warps per SM": 32.0,
                                "grid": [2048, 1, 1],
                                "block": [128, 1, 1],
                                "est. achieved occupancy %": 50,
                            }
                        )
                    else:
                        gargs.update({"bytes": 4, "memory bandwidth (GB/s)": 0.001})
                    ev.append(
                        {
                            "ph": "X",
                            "cat": gkind,
                            "name": gname,
                            "pid": GPU_PID,
                            "tid": STREAM,
                            "ts": _us(g0),
                            "dur": _us(gns),
                            "args": gargs,
                        }
                    )
                    ev.append(
                        {
                            "ph": "s",
                            "id": corr,
                            "pid": PID,
                            "tid": TID,
                            "ts": _us(launch[0]),
                            "cat": "ac2g",
                            "name": "ac2g",
                        }
                    )
                    ev.append(
                        {
                            "ph": "f",
                            "id": corr,
                            "pid": GPU_PID,
                            "tid": STREAM,
                            "ts": _us(g0),
                            "cat": "ac2g",
                            "name": "ac2g",
                            "bp": "e",
                        }
                    )
                    gpu_t = g0 + gns
        ev.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": "attn_fwd",
                "pid": PID,
                "tid": TID,
                "ts": _us(attn_start),
                "dur": _us(attn_end - attn_start),
                "args": {"External id": ext + 1, "Record function id": 0},
            }
        )
        if gpu_attn_start is not None:
            ev.append(
                {
                    "ph": "X",
                    "cat": "gpu_user_annotation",
                    "name": "attn_fwd",
                    "pid": GPU_PID,
                    "tid": STREAM,
                    "ts": _us(gpu_attn_start),
                    "dur": _us(gpu_t + 500 - gpu_attn_start),
                    "args": {"External id": ext + 1},
                }
            )
        ext += 2
        sync0 = t
        t = max(t + 3_000, gpu_t + 2_000)
        ev.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaDeviceSynchronize",
                "pid": PID,
                "tid": TID,
                "ts": _us(sync0),
                "dur": _us(t - sync0),
                "args": {"External id": ext, "cbid": 165, "correlation": corr + 10_000},
            }
        )
        t += 2_000
        ev.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step + 2}",
                "pid": PID,
                "tid": TID,
                "ts": _us(step_start),
                "dur": _us(t - step_start),
                "args": {"External id": ext + 1, "Record function id": 0},
            }
        )
        ext += 2
        t += 5_000
    ev.extend(_metadata())
    return {
        "schemaVersion": 1,
        "deviceProperties": [
            {
                "id": 0,
                "name": "NVIDIA H200",
                "totalGlobalMem": 150_000_000_000,
                "computeMajor": 9,
                "computeMinor": 0,
                "numSms": 132,
            }
        ],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "traceEvents": ev,
        "traceName": "naive_like",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
    }


def _cpu(name: str, ts: int, dur: int, ext: int, dims: list | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"External id": ext, "Record function id": 0, "Sequence number": ext}
    if dims is not None:
        args["Input Dims"] = dims
        args["Input type"] = ["c10::BFloat16", "c10::BFloat16"]
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": PID,
        "tid": TID,
        "ts": _us(ts),
        "dur": _us(max(dur, 100)),
        "args": args,
    }


def _metadata() -> list[dict[str, Any]]:
    return [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {
            "ph": "M",
            "name": "process_sort_index",
            "pid": PID,
            "tid": 0,
            "args": {"sort_index": PID},
        },
        {
            "ph": "M",
            "name": "thread_name",
            "pid": PID,
            "tid": TID,
            "args": {"name": "thread 4242 (python3)"},
        },
        {"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "python3"}},
        {
            "ph": "M",
            "name": "process_labels",
            "pid": GPU_PID,
            "tid": 0,
            "args": {"labels": "GPU 0"},
        },
        {
            "ph": "M",
            "name": "process_sort_index",
            "pid": GPU_PID,
            "tid": 0,
            "args": {"sort_index": 5000000},
        },
        {
            "ph": "M",
            "name": "thread_name",
            "pid": GPU_PID,
            "tid": STREAM,
            "args": {"name": "stream 7 "},
        },
        {
            "ph": "M",
            "name": "thread_sort_index",
            "pid": GPU_PID,
            "tid": STREAM,
            "args": {"sort_index": STREAM},
        },
    ]


def write_doc(path: str | Path, doc: Any, *, gz: bool | None = None) -> Path:
    """Write a trace document as JSON (gzip when the name ends in .gz)."""
    path = Path(path)
    raw = json.dumps(doc).encode()
    if gz or (gz is None and path.name.endswith(".gz")):
        raw = gzip.compress(raw, mtime=0)
    path.write_bytes(raw)
    return path
