"""Searching event names (pure): substring by default, ``re:`` for a regex.

Matching runs over the trace's interned strings (each distinct name once),
then picks the rows carrying a matching name with one ``np.isin``; matches are
ordered by start time across all lanes so ``n``/``N`` walk through time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from profiling.trace.model import Kind, Trace

REGEX_PREFIX = "re:"


class QueryError(ValueError):
    """A search the user typed that cannot be run (a broken regex)."""


@dataclass(frozen=True)
class Query:
    text: str
    regex: bool
    label: str = ""  # what the status line calls a match list that is no search

    def describe(self) -> str:
        if self.label:
            return self.label
        return f"/{self.text}/" if self.regex else repr(self.text)


def parse_query(text: str) -> Query:
    """``re:<pattern>`` is a regex (case-insensitive); anything else a substring."""
    text = text.strip()
    if text.startswith(REGEX_PREFIX):
        pattern = text[len(REGEX_PREFIX) :]
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise QueryError(f"bad regex {pattern!r}: {exc}") from None
        return Query(pattern, True)
    return Query(text, False)


def matching_names(strings: list[str], query: Query) -> np.ndarray:
    """Ids of the interned strings that match ``query``."""
    if not query.text:
        return np.zeros(0, dtype=np.int32)
    if query.regex:
        rx = re.compile(query.text, re.IGNORECASE)
        ids = [i for i, s in enumerate(strings) if rx.search(s)]
    else:
        needle = query.text.casefold()
        ids = [i for i, s in enumerate(strings) if needle in s.casefold()]
    return np.asarray(ids, dtype=np.int32)


def find(trace: Trace, query: Query) -> np.ndarray:
    """Rows whose name matches, flows excluded, in start-time order (all lanes)."""
    ids = matching_names(trace.strings, query)
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64)
    mask = np.isin(trace.name_id, ids) & (trace.kind != Kind.FLOW)
    rows = np.flatnonzero(mask).astype(np.int64)
    # rows are stored lane by lane in start order: a stable sort by start orders them
    # as a lexsort by (start, lane) would (ties keep lane order), a few times faster
    return rows[np.argsort(trace.ts_ns[rows], kind="stable")]


def next_match(trace: Trace, matches: np.ndarray, current: int, direction: int) -> int:
    """Index into ``matches`` after (1) or before (-1) row ``current``, wrapping."""
    n = int(matches.shape[0])
    if n == 0:
        return -1
    hits = np.flatnonzero(matches == current) if current >= 0 else np.zeros(0, dtype=np.int64)
    if hits.size:
        return (int(hits[0]) + direction) % n
    if current < 0:
        return 0 if direction > 0 else n - 1
    t = trace.ts_ns[current]
    ts = trace.ts_ns[matches]
    if direction > 0:
        i = int(np.searchsorted(ts, t, side="right"))
        return i % n
    i = int(np.searchsorted(ts, t, side="left")) - 1
    return i % n
