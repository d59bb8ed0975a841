"""``attn-tui variants``: what this machine can capture, and why not.

Asks the same questions ``capture`` asks before each variant (CUDA present,
backend accepts the default dtype and head_dim, libraries installed), at the
default shape for the device, and says where the ``kernels`` variant's kernel
would come from, since on a machine without the hub it is attn-tui's own.

Every message is printed as ``Text``, never as markup: reasons and install hints
hold brackets (``pip install 'attn-tui[capture]'``) that Rich would eat.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui.names import visible


def run(args: argparse.Namespace) -> int:
    from profiling.capture.availability import report
    from profiling.capture.config import make_config, resolve_device

    console = Console(highlight=False)
    try:
        import torch
    except ImportError:
        console.print(Text("torch is not installed: no variant can be captured here "
                           "(pip install 'attn-tui[capture]')"))
        return 0
    device = resolve_device("auto")
    config = make_config(device)
    where = torch.cuda.get_device_name() if device == "cuda" else "CPU (no CUDA device)"
    table = Table(title=Text(f"variants on {visible(where)}, torch {torch.__version__}, "
                             f"default shape B={config.batch} H={config.heads} S={config.seq} "
                             f"D={config.head_dim} {config.dtype}"), title_justify="left")
    table.add_column("variant", no_wrap=True)
    table.add_column("capture", no_wrap=True)
    table.add_column("what it is / why not", overflow="fold")
    for row in report(config):
        if row.available:
            text = Text(visible(row.summary))
            if row.name == "kernels":
                text.append(f" ({visible(_kernel_origin())})", style="dim")
            table.add_row(Text(row.name), Text("yes", style="green"), text)
        else:
            table.add_row(Text(row.name), Text("no", style="yellow"),
                          Text(visible(row.reason or "")))
    _add_job_rows(table, config)
    console.print(table)
    return 0


def _add_job_rows(table: Table, config: Any) -> None:
    """The context-parallel variants: only in a job (``capture --nproc 2`` or more)."""
    from profiling.capture.config import MULTI_RANK_VARIANTS
    from profiling.capture.rank_plans import RankContext, summary, why_not_rank

    pair = RankContext(rank=0, world_size=2, local_rank=0, backend="")
    for name in MULTI_RANK_VARIANTS:
        reason = why_not_rank(name, config, pair)
        if reason is None:
            table.add_row(Text(name), Text("--nproc", style="green"),
                          Text(visible(summary(name) + " (capture --nproc 2 or more)")))
        else:
            table.add_row(Text(name), Text("no", style="yellow"), Text(visible(reason)))


def _kernel_origin() -> str:
    from profiling.capture.kernel_source import (
        DEFAULT_KERNEL_REPO,
        DEFAULT_KERNEL_VERSION,
        hub_reachable,
    )

    why = hub_reachable()
    if why is None:
        return f"{DEFAULT_KERNEL_REPO}@{DEFAULT_KERNEL_VERSION} from the hub"
    return f"attn-tui's bundled Triton kernel: hub out of reach, {why}"
