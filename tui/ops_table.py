"""The op table's columns, sorting and filtering (pure).

Rows are torch's ``key_averages`` rows as ``profiling.analysis.key_averages``
gives them (times in microseconds); percentages and averages are derived here
the way torch prints them: a share of the footer total, a total over calls.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiling.analysis.ranges import distinct
from tui.fmt import fmt_us
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
BY_KEY = {c.key: c for c in COLUMNS}
ALWAYS = ("key", "device_type", "count")
"""Columns always on screen, with the sorted one: the name, its device (an op on
CPU and on CUDA is two rows named alike) and the call count."""
PRIORITY = (
    "self_device_time_total",
    "device_time_total",
    "self_cpu_time_total",
    "cpu_time_total",
    "self_device_pct",
    "self_cpu_pct",
    "device_time_avg",
    "cpu_time_avg",
)
"""The other columns, in the order they get the room left (device time first)."""
NAME_MIN = 20
"""The name column never gets fewer cells than this (the full name shows below)."""
CELL_PAD = 2
"""A DataTable cell's padding: one cell each side."""


@dataclass(frozen=True)
class Layout:
    """The columns in display order: ``shown`` fit the window, ``overflow`` follow
    them past its right edge (reached by scrolling sideways); the name column is
    ``name_width`` cells."""

    shown: tuple[Column, ...]
    overflow: tuple[Column, ...]
    name_width: int

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.shown + self.overflow


def layout(widths: dict[str, int], width: int, sort_key: str, longest_name: int) -> Layout:
    """Which columns fit in ``width`` cells beside a name column of at least
    ``NAME_MIN`` (``widths``: each other column's widest cell or title): the
    always-shown ones and the sorted one first, then ``PRIORITY`` while they fit.
    The name column takes the room left, up to the longest name."""
    chosen = [k for k in ALWAYS if k != "key"]
    if sort_key not in chosen and sort_key != "key":
        chosen.append(sort_key)
    used = sum(widths[k] + CELL_PAD for k in chosen) + NAME_MIN + CELL_PAD
    for k in PRIORITY:
        if k not in chosen and used + widths[k] + CELL_PAD <= width:
            chosen.append(k)
            used += widths[k] + CELL_PAD
    rest = [k for k in COLUMN_KEYS if k not in ("key", "device_type")]
    if len(chosen) == len(COLUMN_KEYS) - 1:  # all fit: torch's order
        shown_keys = ["key", "device_type", *rest]
    else:  # the device times first, the calls last, as they got the room
        shown_keys = ["key", "device_type", *(k for k in PRIORITY if k in chosen), "count"]
        if sort_key not in shown_keys:
            shown_keys.insert(2, sort_key)
    shown = tuple(BY_KEY[k] for k in shown_keys)
    overflow = tuple(BY_KEY[k] for k in rest if k not in shown_keys)
    name = max(NAME_MIN, min(longest_name, width - (used - NAME_MIN)))
    return Layout(shown, overflow, name)


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


@dataclass(frozen=True)
class PreparedOps:
    """The op table ready to show: ``prepare``'s rows, the totals, each column's
    widest cell over every row (filtering does not move columns) and the longest
    name, and the rows in the view's first order (``DEFAULT_SORT``, largest first).
    Made off the UI thread (``Session.analyse``), because with 20,000 ops (a trace
    that names each step or layer) it takes 80 ms."""

    rows: list[dict[str, Any]]
    totals: Totals
    widths: dict[str, int]
    longest: int
    first_order: list[dict[str, Any]]


def prepared_ops(rows: list[dict[str, Any]] | None, totals: Totals | None) -> PreparedOps:
    """``PreparedOps`` of torch's rows (None: no analysis, so no rows either)."""
    totals = totals or Totals(0.0, 0.0)
    ready = prepare(rows or [], totals)
    widths = {c.key: widest_cell(ready, c) for c in COLUMNS if c.key != "key"}
    return PreparedOps(ready, totals, widths, max([len(r["key"]) for r in ready], default=0),
                       sort_rows(ready, DEFAULT_SORT, True))


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
    by_name = sorted(rows, key=operator.itemgetter("key", "device_type"))
    return sorted(by_name, key=operator.itemgetter(key),
                  reverse=descending if not text else not descending)


def widest_cell(rows: list[dict[str, Any]], column: Column) -> int:
    """``max(len(cell(r, column)) for r in rows)``, formatting a few rows only.

    WHY: formatting every cell of every column took 0.44 s for 20,000 ops.  Within
    one unit band (torch's us, ms, s for times; one band for percentages) and one
    sign (``-0.0`` included), a number's text only widens with its magnitude: the
    widest text is that of the largest magnitude of some band and sign.  Values
    that are not finite are bands of their own (``-``, ``inf``, ``nan``)."""
    if column.kind in ("str", "int") or not rows:  # str() of each: exact and cheap
        return max((len(cell(r, column)) for r in rows), default=0)
    values = np.array([r[column.key] for r in rows], dtype=np.float64)
    with np.errstate(over="ignore"):  # a time is written from ns: past 1.8e305 us, "-"
        finite = np.isfinite(values * 1000.0 if column.kind == "us" else values)
    magnitude = np.where(finite, np.abs(values), 0.0)
    band = np.zeros(values.shape[0], dtype=np.int64)
    if column.kind == "us":
        band[finite] = np.digitize(magnitude[finite], [1e3, 1e6])
    band[~finite] = 3 + np.isnan(values[~finite])
    group = 2 * band + np.signbit(values)
    picks = []
    for g in distinct(group).tolist():
        at = np.flatnonzero(group == g)
        picks.append(int(at[np.argmax(magnitude[at])]))
    return max(len(cell(rows[i], column)) for i in picks)


def cell(row: dict[str, Any], column: Column) -> str:
    v = row[column.key]
    if column.kind == "us":
        return fmt_us(v)
    if column.kind == "pct":
        return f"{v:.2f}%"
    if column.kind == "int":
        return str(v)
    return str(v)


__all__ = [
    "BY_KEY",
    "COLUMNS",
    "Layout",
    "PreparedOps",
    "COLUMN_KEYS",
    "DEFAULT_SORT",
    "Column",
    "QueryError",
    "Totals",
    "cell",
    "filter_rows",
    "widest_cell",
    "prepare",
    "prepared_ops",
    "layout",
    "sort_rows",
]
