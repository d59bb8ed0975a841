"""The ``attn-tui compare`` table's cells: ``profiling.analysis.compare``'s numbers as text.

The analysis returns numbers; the command line (rich and markdown tables) and
the TUI's Compare view both print them through ``table_rows`` here, so a figure
reads the same wherever it is shown.  Times go through ``tui.fmt.fmt_ns``, the
one readable-duration formatter.
"""

from __future__ import annotations

from collections.abc import Sequence

from profiling.analysis.compare import RegionComparison, TraceComparison
from tui.fmt import fmt_ns

COLUMNS: tuple[str, ...] = (
    "trace", "region", "implementation", "inst", "CPU/inst", "GPU/inst", "vs first",
    "kernels", "memcpy", "memset", "GFLOP", "TFLOP/s", "% peak", "self CPU", "self GPU",
)
"""Column headers of ``table_rows`` (every cell is a plain string; '' is unknown)."""

NUMERIC_COLUMNS = frozenset(COLUMNS[3:])
"""Columns that hold numbers (right-aligned, never cut)."""


def time_cell(us: float | None) -> str:
    """A time given in µs, with a readable unit (``95.9 µs``, ``1.07 ms``); '' when unknown."""
    return "" if us is None else fmt_ns(us * 1000.0)


def number_cell(value: float | None, digits: int = 3) -> str:
    """A count or average: whole numbers as integers, others to ``digits`` significant."""
    if value is None:
        return ""
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.{digits}g}"


def trace_cell(item: TraceComparison) -> str:
    """The trace's label, with its rank when it is one of several (``worker · rank 3/8``):
    the traces of one multi-rank job are named alike."""
    if item.rank is not None and item.world_size is not None and item.world_size > 1:
        return f"{item.label} · rank {item.rank}/{item.world_size}"
    return item.label


def cells(item: TraceComparison, reg: RegionComparison) -> list[str]:
    """One row of ``COLUMNS`` cells for one region of one trace."""
    return [
        trace_cell(item),
        reg.region,
        reg.implementation.name,
        str(reg.instances),
        time_cell(reg.cpu_time_avg_us),
        time_cell(reg.device_time_avg_us) if reg.kernels_per_instance or reg.device_time_avg_us
        else "",
        f"{reg.time_ratio_to_first:.2f}x" if reg.time_ratio_to_first is not None else "",
        number_cell(reg.kernels_per_instance),
        number_cell(reg.memcpy_per_instance),
        number_cell(reg.memset_per_instance),
        f"{reg.flops_per_instance / 1e9:.3g}" if reg.flops_per_instance else "",
        f"{reg.tflops:.1f}" if reg.tflops is not None else "",
        f"{100 * reg.peak_share:.1f}%" if reg.peak_share is not None else "",
        time_cell(item.self_cpu_time_total_us),
        time_cell(item.self_device_time_total_us) if item.self_device_time_total_us else "",
    ]


FLOPS_LEGEND = (
    "GFLOP per instance: causal = the useful FLOPs of causal attention (4·B·H·Sq·Sk·D/2, "
    "the masked half not counted), dense = every score (4·B·H·Sq·Sk·D); TFLOP/s = GFLOP "
    "over the summed GPU time of the instance's events (not wall time)"
)
"""What the GFLOP and TFLOP/s columns count, printed under a table that has them."""


def flops_notes(items: Sequence[TraceComparison]) -> list[str]:
    """The legend, then one line per (convention, source, note) naming its rows.

    A figure from the capture config and one from the same kernels' shapes agree
    when both count the same convention; when they cannot (unfused matmuls with the
    mask built outside the region), the note says why the figure is dense.
    """
    several = any(len(item.regions) > 1 for item in items)
    groups: dict[tuple[str, str, str], list[str]] = {}
    for item in items:
        for reg in item.regions.values():
            if not reg.flops_detail and not (reg.instances and reg.implementation.name):
                continue
            key = (reg.flops_convention or "unknown", reg.flops_detail, reg.flops_note)
            groups.setdefault(key, []).append(
                f"{item.label} · {reg.region}" if several else item.label)
    if not groups:
        return []
    lines = [FLOPS_LEGEND]
    for (convention, detail, note), labels in groups.items():
        if not detail:
            lines.append(f"{', '.join(labels)}: no FLOPs (no attention op or matmul pair "
                         "with recorded shapes in the region, and no capture config)")
            continue
        line = f"{', '.join(labels)}: {convention} FLOPs from the {detail}"
        lines.append(line + (f"; {note}" if note else ""))
    return lines


def table_rows(items: Sequence[TraceComparison]) -> list[list[str]]:
    """One row of ``COLUMNS`` cells per (trace, region), in input order."""
    return [cells(item, reg) for item in items for reg in item.regions.values()]
