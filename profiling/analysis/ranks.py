"""Which rank of a distributed job a trace is (``distributedInfo``), read as data.

A multi-rank job writes one trace per rank, named alike; Kineto records the rank
and the world size under the top-level ``distributedInfo``.  The status line,
``stats`` and ``compare`` all show it from here, so they agree, and a bad value
(a bool, a word, a negative number) gives nothing rather than a wrong rank.
"""

from __future__ import annotations

from typing import Any


def _whole(value: Any) -> int | None:
    """A non-negative integer from an int or a digit string; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    try:
        number = int(value)
    except ValueError:
        return None
    return number if number >= 0 else None


def _info(metadata: Any) -> dict[str, Any]:
    info = metadata.get("distributedInfo") if isinstance(metadata, dict) else None
    return info if isinstance(info, dict) else {}


def trace_rank(metadata: Any) -> int | None:
    """The trace's ``distributedInfo.rank``; None when absent or not a number."""
    return _whole(_info(metadata).get("rank"))


def world_size(metadata: Any) -> int | None:
    """The job's ``distributedInfo.world_size``; None when absent or not a positive number."""
    world = _whole(_info(metadata).get("world_size"))
    return world if world else None


def rank_text(metadata: Any) -> str:
    """``rank 3 of 8`` (``rank 3`` when the world size is absent or 1); '' without a rank."""
    rank = trace_rank(metadata)
    if rank is None:
        return ""
    world = world_size(metadata)
    return f"rank {rank} of {world}" if world is not None and world > 1 else f"rank {rank}"
