"""A trace of many small region instances: N ``ProfilerStep#k`` > ``attn_fwd`` > bmm.

    python bench/make_many_regions.py OUT.json --instances 38400

The scale issue's 1 GB trace has 38,400 ``attn_fwd`` instances; this makes as many
in about 40 MB (7 events each: the step, the annotation, a ``aten::bmm`` with bf16
inputs, two launches, a GEMM and a softmax kernel with a varying length), so the
per-instance costs of ``kernels``, ``findings`` and the Regions view can be measured
on a small machine without a 1 GB file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def events(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    ]
    t = 1_700_000_000_000.0
    for i in range(n):
        gpu = {"stream": 7, "device": 0}
        out += [
            {"ph": "X", "cat": "cpu_op", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
             "ts": t, "dur": 40},
            {"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": 1, "tid": 1,
             "ts": t + 1, "dur": 30},
            {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 1, "ts": t + 2,
             "dur": 10, "args": {"Input type": ["c10::BFloat16", "c10::BFloat16"],
                                 "External id": 3 * i + 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": t + 3, "dur": 5, "args": {"correlation": 2 * i + 1, "External id": 3 * i + 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": t + 15, "dur": 5, "args": {"correlation": 2 * i + 2}},
            {"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm", "pid": 0, "tid": 7,
             "ts": t + 10, "dur": 20, "args": {"correlation": 2 * i + 1, **gpu}},
            {"ph": "X", "cat": "kernel", "name": "softmax_warp_forward", "pid": 0, "tid": 7,
             "ts": t + 35, "dur": 3 + i % 7, "args": {"correlation": 2 * i + 2, **gpu}},
        ]
        t += 50
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--instances", type=int, default=38_400)
    args = parser.parse_args()
    args.out.write_text(json.dumps({"traceEvents": events(args.instances)}))
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB, {args.instances} instances")


if __name__ == "__main__":
    main()
