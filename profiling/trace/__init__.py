"""Chrome/Kineto trace file -> columnar in-memory model (no torch, no UI)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from profiling.trace.model import GPU_KINDS, NO_ID, Group, Kind, Lane, LaneKind, Trace

if TYPE_CHECKING:
    from profiling.trace.loader import load_trace

__all__ = ["GPU_KINDS", "NO_ID", "Group", "Kind", "Lane", "LaneKind", "Trace", "load_trace"]


def __getattr__(name: str) -> Any:
    """``load_trace`` on first use: importing any ``profiling.trace`` module (the model,
    the index) must not import the loader and the decoders behind it (a reopen, and
    the analysis, never parse)."""
    if name == "load_trace":
        from profiling.trace.loader import load_trace

        globals()["load_trace"] = load_trace
        return load_trace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
