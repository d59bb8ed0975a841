"""``json.dumps(doc, indent=1)``'s exact text, written in C.

With an indent, the standard library encodes in pure Python, one call per value:
2.6 s for the 86 MB of a ``diff --json`` of two annotations around whole runs, most
of ``compare --json``'s time on a 1 GB trace (two numbers per region instance).
Without an indent it encodes in C, and every value's text is the same (a
float's ``repr``, the same escapes, the same errors for NaN); msgspec's
``json.format`` then lays that text out on lines as the indenting encoder does,
copying each value's text as it is (0.7 s for the same 86 MB).
``tests/test_json_text.py`` checks the bytes against ``json.dumps``.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec


def dumps_indent1(doc: Any, **kwargs: Any) -> str:
    """``json.dumps(doc, indent=1, **kwargs)`` (same bytes, same errors)."""
    compact = json.dumps(doc, separators=(",", ":"), **kwargs)
    try:
        return msgspec.json.format(compact.encode("utf-8"), indent=1).decode("utf-8")
    except (msgspec.DecodeError, UnicodeError):  # NaN, Infinity or a lone surrogate:
        return json.dumps(doc, indent=1, **kwargs)  # not JSON to msgspec, json's own text
