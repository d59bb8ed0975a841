"""How a SQL result's values are shown: one rule for the ``sql`` table, Markdown and the
TUI's Query view (JSON and CSV keep the values as they are).

Floats get at most three decimals (the model's times are whole nanoseconds, so a
µs figure never needs more) without trailing zeros; NULL is empty; text is
``names.visible`` (control characters written out): a name from a trace is data.
"""

from __future__ import annotations

import math
from typing import Any

from tui.names import visible

NUMERIC_PREFIXES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "REAL",
)


def is_numeric(type_name: str) -> bool:
    """Whether a DuckDB type name is a number (right-aligned in tables)."""
    return type_name.upper().startswith(NUMERIC_PREFIXES)


def cell_text(value: Any) -> str:
    """One value as shown in a table cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        text = f"{value:.3f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    if isinstance(value, (list, tuple)):  # a LIST column (kernels.launch_chain)
        return "[" + ", ".join(cell_text(v) for v in value) + "]"
    return visible(str(value))


def csv_value(value: Any) -> Any:
    """A value for a CSV cell: lists and structs as JSON text, the rest as they are, but
    a string's control characters written out as ``visible`` does (a name's ``\x1b[2J``
    would act on the terminal that shows the CSV); newlines and tabs stay, CSV quotes them."""
    if isinstance(value, (list, tuple, dict)):
        import json

        return json.dumps(json_value(value), ensure_ascii=False)
    if isinstance(value, str):
        return "\n".join(
            "\t".join(visible(p) for p in line.split("\t")) for line in value.split("\n")
        )
    return value


def json_value(value: Any) -> Any:
    """A value JSON can hold (NaN and infinities become null; dates and decimals text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return str(value)
