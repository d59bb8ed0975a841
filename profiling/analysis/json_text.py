"""``json.dumps(doc, indent=1)``'s exact text, written in C.

With an indent, the standard library encodes in pure Python, one call per value:
2.6 s for the 86 MB of a ``diff --json`` of two annotations around whole runs, most
of ``compare --json``'s time on a 1 GB trace (two numbers per region instance).
Without an indent it encodes in C, and every value's text is the same (a
float's ``repr``, the same escapes, the same errors for NaN); msgspec's
``json.format`` then lays that text out on lines as the indenting encoder does,
copying each value's text as it is (0.7 s for the same 86 MB).

Even in C, ``repr`` of a float costs about 0.4 us: ``compare --json`` of a 1 GB
trace holds 85 k of them (a GPU time and a rate per region instance), 30-50 ms of
the command.  A caller whose document holds such long lists says so
(``number_lists``): each list whose floats msgspec writes as repr does is written by
msgspec (about ten times faster) and put in the text in place of a placeholder.
``tests/test_json_text.py`` checks the bytes against ``json.dumps``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec

MIN_LIST = 256
"""Shorter lists are left to json (too little to win for the check)."""

_NUMBERS = frozenset((float, int, type(None)))
_ENCODER = msgspec.json.Encoder()


def dumps_indent1(doc: Any, *, number_lists: bool = False, **kwargs: Any) -> str:
    """``json.dumps(doc, indent=1, **kwargs)`` (same bytes, same errors).

    ``number_lists``: look through ``doc``'s dicts and lists for long lists of
    numbers and write those with msgspec (a walk of the document: only for one with
    few containers and long lists, as ``compare``'s)."""
    texts: dict[str, bytes] = {}
    lifted = _lift(doc, os.urandom(16).hex(), texts) if number_lists else doc
    compact = json.dumps(lifted, separators=(",", ":"), **kwargs)
    try:
        data = compact.encode("utf-8")
        for token, text in texts.items():  # a trace's names are data: the token is none
            data = data.replace(f'"{token}"'.encode(), text, 1)
        return msgspec.json.format(data, indent=1).decode("utf-8")
    except (msgspec.DecodeError, UnicodeError):  # NaN, Infinity or a lone surrogate:
        return json.dumps(doc, indent=1, **kwargs)  # not JSON to msgspec, json's own text


def _lift(value: Any, token: str, texts: dict[str, bytes]) -> Any:
    """``value`` with each long list of numbers that msgspec writes as json does
    replaced by a placeholder string (its text kept in ``texts``)."""
    if isinstance(value, dict):
        return {k: _lift(v, token, texts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        text = _number_text(value) if len(value) >= MIN_LIST else None
        if text is None:
            return [_lift(v, token, texts) for v in value]
        key = f"{token}:{len(texts)}"
        texts[key] = text
        return key
    return value


def _number_text(values: list[Any] | tuple[Any, ...]) -> bytes | None:
    """The compact JSON text of ``values`` when all are floats, ints or None and
    msgspec writes each as json does; else None.  msgspec writes a float's shortest
    round-trip digits, as ``float.__repr__`` does, and the same text wherever repr
    writes no exponent: 0 and 1e-4 <= |x| < 1e16 (``tests/test_json_text.py``).
    NaN and the infinities (msgspec's ``null``; json's own text or error) and ints
    beyond 64 bits stay json's."""
    kinds = set(map(type, values))  # one C pass, not a call per item
    if not kinds <= _NUMBERS:
        return None
    if float in kinds:
        import numpy as np

        floats = values if kinds == {float} else [v for v in values if type(v) is float]
        size = np.abs(np.array(floats, dtype=np.float64))
        if not bool(((size == 0) | ((size >= 1e-4) & (size < 1e16))).all()):
            return None  # NaN fails both tests too
    try:
        return _ENCODER.encode(values)
    except OverflowError:  # an int beyond 64 bits
        return None
