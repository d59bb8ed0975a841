"""``json.dumps(doc, indent=1)``'s exact text, with long lists of numbers written in C.

With an indent, the standard library encodes in pure Python, one call per value;
``compare --json`` holds two numbers per region instance (``device_time_us`` and
``tflops_per_instance``: 76,800 on a 1 GB trace), most of its encoding time.  Each
such list is encoded by the C encoder (no indent: the same ``float.__repr__`` text
for each number, ``null`` for ``None``) and laid out on lines as the indenting
encoder does, in place of a placeholder string (``_number_texts``: msgspec's float
text where it equals repr's).  ``tests/test_json_text.py`` checks the bytes against
``json.dumps``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import msgspec

MIN_LIST = 16
"""Shorter lists are left to the indenting encoder (nothing to win)."""


_NUMBER_TYPES = frozenset((float, int, type(None)))


def _scalar_numbers(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) >= MIN_LIST
        and set(map(type, value)) <= _NUMBER_TYPES  # one C pass, not a call per item
    )


_ENCODER = msgspec.json.Encoder()


def _number_texts(values: list[Any], kwargs: dict[str, Any]) -> list[str]:
    """Each number's text as ``json.dumps`` writes it.  msgspec writes a float the way
    ``float.__repr__`` does (the shortest digits that read back) 14 times faster, and
    its text is the same wherever repr writes no exponent (0 and 1e-4 <= |x| < 1e16,
    checked on 400 k random floats); outside that range, and for NaN and the
    infinities (msgspec writes null), json.dumps writes the item itself."""
    try:
        texts = _ENCODER.encode(values).decode()[1:-1].split(",")
    except (OverflowError, TypeError, ValueError):  # an int beyond 64 bits
        return json.dumps(values, **kwargs)[1:-1].split(", ")
    for i, v in enumerate(values):
        if type(v) is float and not (v == 0.0 or 1e-4 <= abs(v) < 1e16):
            texts[i] = json.dumps(v, **kwargs)
    return texts


def dumps_indent1(doc: Any, **kwargs: Any) -> str:
    """``json.dumps(doc, indent=1, **kwargs)`` (same bytes, same errors for NaN)."""
    if kwargs.get("sort_keys"):  # the placeholders would come out in another order
        return json.dumps(doc, indent=1, **kwargs)
    token = uuid.uuid4().hex  # a trace's names are data: the placeholder must not be one
    lists: list[list[str]] = []

    def swap(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if _scalar_numbers(value):
            lists.append(_number_texts(list(value), kwargs))
            return f"{token}:{len(lists) - 1}"
        if isinstance(value, list | tuple):
            return [swap(v) for v in value]
        return value

    text = json.dumps(swap(doc), indent=1, **kwargs)
    if not lists:
        return text
    out, at = [], 0
    for n, items in enumerate(lists):
        mark = f'"{token}:{n}"'
        where = text.index(mark, at)
        line = text.rfind("\n", 0, where) + 1
        indent = 0
        while text[line + indent] == " ":  # the line's leading spaces
            indent += 1
        inner = "\n" + " " * (indent + 1)
        out.append(text[at:where])
        out.append("[" + inner + ("," + inner).join(items) + "\n" + " " * indent + "]")
        at = where + len(mark)
    out.append(text[at:])
    return "".join(out)
