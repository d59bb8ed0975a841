"""The op table's columns, sorting and filtering (pure).

Rows are torch's ``key_averages`` rows as ``profiling.analysis.key_averages``
gives them (times in microseconds); percentages and averages are derived here
the way torch prints them: a share of the footer total, a total over calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tui.search import QueryError, parse_query


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    kind: str  # "str", "us", "pct", "int"


COLUMNS: tuple[Column, ...] = (
    Column("key", "Name", "str"),
    Column("self_cpu_time_total", "Self CPU", "us"),
    Column("self_cpu_pct", "Self CPU %", "pct"),
    Column("cpu_time_total", "CPU total", "us"),
    Column("cpu_time_avg", "CPU avg", "us"),
    Column("self_device_time_total", "Self CUDA", "us"),
    Column("self_device_pct", "Self CUDA %", "pct"),
    Column("device_time_total", "CUDA total", "us"),
    Column("device_time_avg", "CUDA avg", "us"),
    Column("count", "# of Calls", "int"),
    Column("device_type", "Device", "str"),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)
COMPACT_KEYS = (
    "key",
    "self_device_time_total",
    "device_time_total",
    "self_cpu_time_total",
    "cpu_time_total",
    "count",
)
"""Columns shown in terminals narrower than ``COMPACT_BELOW`` (device time first)."""
COMPACT_BELOW = 110


def visible_columns(width: int) -> tuple[Column, ...]:
    if width >= COMPACT_BELOW:
        return COLUMNS
    return tuple(COLUMNS[COLUMN_KEYS.index(k)] for k in COMPACT_KEYS)


DEFAULT_SORT = "self_device_time_total"


@dataclass
class Totals:
    """torch's two footer totals, as ``key_averages`` computes them.

    They are not the column sums: torch's device total leaves out GPU-side
    annotations (whose rows are still listed), so they always come from the
    analysis, never from the rows.
    """

    self_cpu_us: float
    self_device_us: float


def prepare(rows: list[dict[str, Any]], totals: Totals) -> list[dict[str, Any]]:
    """Rows with the derived columns added (copies; the input is not changed)."""
    out = []
    for r in rows:
        d = dict(r)
        count = int(d.get("count", 0) or 0)
        for k in (
            "self_cpu_time_total",
            "cpu_time_total",
            "self_device_time_total",
            "device_time_total",
        ):
            d[k] = float(d.get(k, 0) or 0)
        d["count"] = count
        d["key"] = str(d.get("key", ""))
        d["device_type"] = str(d.get("device_type", ""))
        d["self_cpu_pct"] = (
            100 * d["self_cpu_time_total"] / totals.self_cpu_us if totals.self_cpu_us else 0.0
        )
        d["self_device_pct"] = (
            100 * d["self_device_time_total"] / totals.self_device_us
            if totals.self_device_us
            else 0.0
        )
        d["cpu_time_avg"] = d["cpu_time_total"] / count if count else 0.0
        d["device_time_avg"] = d["device_time_total"] / count if count else 0.0
        out.append(d)
    return out


def filter_rows(rows: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """Rows whose name matches ``text`` (substring, or ``re:`` regex); a broken
    regex raises ``QueryError``."""
    if not text.strip():
        return list(rows)
    q = parse_query(text)
    if q.regex:
        rx = re.compile(q.text, re.IGNORECASE)
        return [r for r in rows if rx.search(r["key"])]
    needle = q.text.casefold()
    return [r for r in rows if needle in r["key"].casefold()]


def sort_rows(
    rows: list[dict[str, Any]], key: str, descending: bool = True
) -> list[dict[str, Any]]:
    """Sorted by ``key`` (names ascending read better, so ``descending`` flips for text),
    ties broken by name for a stable order."""
    if key not in COLUMN_KEYS:
        raise ValueError(f"unknown column {key!r}")
    text = COLUMNS[COLUMN_KEYS.index(key)].kind == "str"
    by_name = sorted(rows, key=lambda r: (r["key"], r["device_type"]))
    return sorted(by_name, key=lambda r: r[key], reverse=descending if not text else not descending)


def cell(row: dict[str, Any], column: Column) -> str:
    from tui.fmt import fmt_us

    v = row[column.key]
    if column.kind == "us":
        return fmt_us(v)
    if column.kind == "pct":
        return f"{v:.2f}%"
    if column.kind == "int":
        return str(v)
    return str(v)


__all__ = [
    "COLUMNS",
    "COLUMN_KEYS",
    "DEFAULT_SORT",
    "Column",
    "QueryError",
    "Totals",
    "cell",
    "filter_rows",
    "prepare",
    "sort_rows",
    "visible_columns",
]
