"""Where a first open's time goes: a timeline of its stages, in one process.

    python bench/first_open_stages.py FILE.json [--jobs N]

Runs ``attn-tui stats FILE --json`` on an empty index (``ATTN_TUI_CACHE_DIR``
is pointed at a fresh temporary folder) with the loader's and the analysis's
main steps wrapped: each prints when it started and ended, in seconds from the
interpreter's start, and the thread it ran on, so serial stretches (the parent's
merge, the analysis' chain) and waits (the decoders, the warm-up) show as they
happen.  The decoded chunks' arrival times say how evenly the decoders finished.
Wall-clock, one run: run it a few times and read the spread (the machines are
shared).  The decoding
pool's server is started before the wrapped modules are imported, as the
command starts it before its own imports (``tui.prestart``).
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

T0 = time.perf_counter()
SPANS: list[tuple[float, float, str, str]] = []

STEPS = (
    ("profiling.trace.pool", "warm"),  # the decoders' start, waited for
    ("profiling.trace.split", "find_events"),
    ("profiling.trace.parse", "_decode_all"),
    ("profiling.trace.columns", "build_trace"),
    ("profiling.trace.columns", "row_order"),
    ("profiling.trace.lanes", "split_mixed_lanes"),
    ("profiling.trace.depths", "depths"),
    ("profiling.trace.cache", "write_cache"),
    ("profiling.analysis.stats", "trace_stats"),
    ("profiling.analysis.links", "op_nesting"),
    ("profiling.analysis.nesting", "nest"),
    ("profiling.analysis.nesting", "parents"),
    ("profiling.analysis.links", "link_gpu_events"),
    ("profiling.analysis.correlation", "launch_by_correlation"),
    ("profiling.analysis.nesting", "innermost_containing"),
    ("profiling.analysis.regions", "find_regions"),
    ("profiling.analysis.chains", "launch_chains"),
    ("profiling.analysis.chains", "instance_launches"),
    ("profiling.analysis.warm", "warm"),  # the warm-up's parts, below
    ("profiling.analysis.compare", "summarize_trace"),
    ("profiling.analysis.key_averages", "key_averages"),
    ("profiling.analysis.instance_kernels", "kernel_columns"),
    ("profiling.analysis.findings", "trace_findings"),
)


def _wrap(module_name: str, name: str) -> None:
    """Time every call of ``module_name.name``, wherever it was imported to."""
    original = getattr(importlib.import_module(module_name), name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter() - T0
        try:
            return original(*args, **kwargs)
        finally:
            SPANS.append((start, time.perf_counter() - T0, f"{module_name}.{name}",
                          threading.current_thread().name))

    for module in list(sys.modules.values()):
        if getattr(module, name, None) is original:
            setattr(module, name, timed)


def _arrivals() -> list[float]:
    """When each decoded chunk reached this process (``shared_columns.attach``)."""
    from profiling.trace import parse, shared_columns

    seen: list[float] = []
    original: Callable[[Any], Any] = shared_columns.attach

    def attach(chunk: Any) -> Any:
        result = original(chunk)
        seen.append(time.perf_counter() - T0)
        return result

    parse.shared_columns.attach = attach  # type: ignore[attr-defined]
    shared_columns.attach = attach
    return seen


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tui import cli  # before NumPy: the command's own environment defaults
    from tui.prestart import prestart

    argv = ["stats", *sys.argv[1:], "--json"]
    with tempfile.TemporaryDirectory(prefix="attn-tui-stages-") as cache:
        os.environ["ATTN_TUI_CACHE_DIR"] = cache
        prestart(cli.build_parser().parse_args(argv))  # as the command does, before imports
        for module in ("profiling.trace.parse", "profiling.analysis.stats",
                       "profiling.analysis.warm", "profiling.analysis.analysed"):
            importlib.import_module(module)
        for module_name, name in STEPS:
            _wrap(module_name, name)
        arrivals = _arrivals()
        imported = time.perf_counter() - T0
        stdout, sys.stdout = sys.stdout, open(os.devnull, "w")  # noqa: SIM115
        try:
            code = cli.main(argv)
        finally:
            sys.stdout.close()
            sys.stdout = stdout
    print(f"imports {imported:.2f} s, exit {time.perf_counter() - T0:.2f} s (code {code})")
    if arrivals:
        quarter = arrivals[len(arrivals) // 4]
        print(f"{len(arrivals)} chunks decoded: first at {arrivals[0]:.2f} s, a quarter by "
              f"{quarter:.2f} s, half by {arrivals[len(arrivals) // 2]:.2f} s, "
              f"last at {arrivals[-1]:.2f} s")
    for start, end, name, thread in sorted(SPANS):
        print(f"  {start:6.2f} -> {end:6.2f}  {end - start:5.2f}  {name:45s} {thread}")
    return code


if __name__ == "__main__":
    sys.exit(main())
