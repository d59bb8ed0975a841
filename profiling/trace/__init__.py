"""Chrome/Kineto trace file -> columnar in-memory model (no torch, no UI)."""

from profiling.trace.loader import load_trace
from profiling.trace.model import GPU_KINDS, NO_ID, Group, Kind, Lane, LaneKind, Trace

__all__ = ["GPU_KINDS", "NO_ID", "Group", "Kind", "Lane", "LaneKind", "Trace", "load_trace"]
