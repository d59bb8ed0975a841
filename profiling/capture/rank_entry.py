"""One rank of ``attn-tui capture --nproc N``: started by ``torch.distributed.run``.

``python -m torch.distributed.run --nproc-per-node N --standalone -m
profiling.capture.rank_entry SPEC`` starts N of these; each reads the job's spec
(written by ``job.py``), joins the process group (NCCL on GPUs, gloo on CPU),
captures the variant and reports through ``rank<k>.status.json`` in the staging
folder: its phase while it runs, its result at the end.  The launcher reads those
files for the progress display and the manifest.

A rank whose variant fails exits non-zero: the elastic agent then stops every
other rank, and the job ends (its files are never promoted).  torch is imported
inside functions only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from profiling.capture.config import CaptureConfig
from profiling.capture.outputs import write_json

STATUS = "rank{rank}.status.json"


class StatusFile:
    """This rank's line to the launcher, rewritten atomically on every change."""

    def __init__(self, folder: Path, rank: int) -> None:
        self.path = folder / STATUS.format(rank=rank)
        self.data: dict[str, Any] = {"rank": rank, "pid": os.getpid(), "phase": "starting",
                                     "result": None}

    def update(self, **changes: Any) -> None:
        self.data.update(changes)
        write_json(self.path, self.data)


def config_from(data: dict[str, Any]) -> CaptureConfig:
    names = {f.name for f in fields(CaptureConfig)}
    return CaptureConfig(**{k: v for k, v in data.items() if k in names})


def join_group(device: str, local_rank: int, timeout_s: float) -> str:
    """Initialise the default process group; the backend's name."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    timeout = timedelta(seconds=timeout_s)
    if device == "cuda":
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", timeout=timeout,
                                device_id=torch.device("cuda", local_rank))
        return "nccl"
    dist.init_process_group("gloo", timeout=timeout)
    return "gloo"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text())
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    staging = Path(spec["staging"])
    status = StatusFile(staging, rank)
    status.update(phase="joining the process group")
    import torch.distributed as dist

    from profiling.capture.rank_plans import RankContext
    from profiling.capture.rank_runner import run_rank_variant
    from profiling.capture.session import environment

    config = config_from(spec["config"])
    backend = join_group(config.device, local_rank, spec.get("timeout_s", 600))
    ctx = RankContext(rank=rank, world_size=world, local_rank=local_rank, backend=backend)
    env = environment(config)
    status.update(phase="starting", backend=backend, environment=env)
    job = {"id": spec["job_id"], "variant": spec["variant"], "rank": rank, "world_size": world,
           "backend": backend, "launcher": "torch.distributed.run"}
    try:
        result = run_rank_variant(config, spec["variant"], ctx, staging, spec["gzip"], env, job,
                                  phase=lambda p: status.update(phase=p))
    except KeyboardInterrupt:
        status.update(phase="interrupted", ended_at=time.time(),
                      result={"status": "interrupted", "reason": "interrupted (Ctrl+C)"})
        raise
    status.update(phase="done", result=result.as_dict(), ended_at=time.time())
    if result.status == "failed":
        return 1  # the agent stops the other ranks: the job ends here
    dist.barrier()  # no rank leaves while another may still need it
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        # Leave at once: a process group whose peers are being stopped can hang at exit.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
