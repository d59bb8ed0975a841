"""The Query view's data, without Textual: which open files a query sees, the query
run with a cap on the rows kept, and where a result row jumps to.

The view's DuckDB (``profiling.sql.engine.TraceDB``) is built over the loaded
files' own ``AnalysedTrace`` (the one every other view shares), so a query over
``kernels`` reuses the links the timeline already computed; it is rebuilt only
when the set of loaded files changes.  A file's label is the ``trace`` column's
value, as ``attn-tui sql`` would give it, which is how a row finds its file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from profiling.analysis.analysed import AnalysedTrace

MAX_ROWS = 5000
"""Rows the view keeps of a result (the count says when there were more)."""

EXAMPLE = (
    "SELECT trace, name, count(*) AS n, sum(dur_us) AS total_us, min(row) AS row "
    "FROM events WHERE kind = 'kernel' GROUP BY ALL ORDER BY total_us DESC LIMIT 100"
)
"""The query the field starts with: runnable as it is, with a ``row`` to jump to."""


class PaneLike(Protocol):
    path: str
    state: str
    session: Any


@dataclass(frozen=True)
class Answer:
    """A query's columns, DuckDB types, the rows kept, and whether more were cut."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]
    more: bool


def extra_missing() -> str:
    """The one-line hint when the ``[sql]`` extra is absent, else ''."""
    from profiling.sql.engine import MissingExtra, require

    try:
        require()
    except MissingExtra as exc:
        return exc.line()
    return ""


class QueryFiles:
    """The open files a query sees (loaded ones), and one ``TraceDB`` over them."""

    def __init__(self) -> None:
        self._key: tuple[int, ...] = ()
        self.db: Any = None
        self.labels: list[str] = []
        self.files: list[int] = []  # pane index of each label

    def update(self, panes: Sequence[PaneLike]) -> tuple[int, int]:
        """Take the panes' loaded sessions (rebuilding the DB if they changed);
        returns (files loaded, files open)."""
        loaded = [
            (i, p.session.analysis)
            for i, p in enumerate(panes)
            if p.state == "ready" and p.session is not None
        ]
        key = tuple(id(a) for _, a in loaded)
        if key != self._key or self.db is None:
            self._build(loaded)
            self._key = key
        return len(loaded), len(panes)

    def _build(self, loaded: list[tuple[int, AnalysedTrace]]) -> None:
        from profiling.analysis.compare import trace_label
        from profiling.sql.engine import Loaded, TraceDB, unique_labels

        if self.db is not None:
            self.db.close()
        self.labels = unique_labels(
            [trace_label(a.trace.path, a.trace.metadata) for _, a in loaded]
        )
        self.files = [i for i, _ in loaded]
        self.db = TraceDB(
            [Loaded(label, a) for label, (_, a) in zip(self.labels, loaded, strict=True)]
        )

    def run(self, query: str, limit: int = MAX_ROWS) -> Answer:
        """The query's answer (raises ``QueryError`` with DuckDB's one line)."""
        result = self.db.query(query, limit=limit + 1)
        return Answer(result.columns, result.types, result.rows[:limit], len(result.rows) > limit)

    def interrupt(self) -> None:
        """Stop the query running now (a new one replaces it)."""
        if self.db is not None:
            self.db.con.interrupt()


def jump_target(
    answer: Answer, index: int, labels: Sequence[str], files: Sequence[int]
) -> tuple[int, int] | None:
    """(pane index, event row) for result row ``index``: it needs a ``row`` column,
    and a ``trace`` column naming an open file unless only one file is open."""
    if "row" not in answer.columns or not 0 <= index < len(answer.rows):
        return None
    values = answer.rows[index]
    row = values[answer.columns.index("row")]
    if not isinstance(row, int) or isinstance(row, bool) or row < 0:
        return None
    if "trace" in answer.columns:
        label = values[answer.columns.index("trace")]
        if label not in labels:
            return None
        return files[list(labels).index(label)], row
    return (files[0], row) if len(files) == 1 else None


class History:
    """The queries run in this session, for ↑ / ↓ in the field (newest last, no repeats
    in a row); ``step`` walks it and past the newest gives back what was being typed."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.pos = 0
        self.draft = ""

    def add(self, query: str) -> None:
        if query.strip() and (not self.items or self.items[-1] != query):
            self.items.append(query)
        self.pos = len(self.items)

    def step(self, direction: int, current: str) -> str | None:
        """The query ``direction`` (-1 older, +1 newer) from where the walk is, or None."""
        if self.pos == len(self.items):
            self.draft = current
        pos = self.pos + direction
        if not 0 <= pos <= len(self.items) or pos == self.pos:
            return None
        self.pos = pos
        return self.draft if pos == len(self.items) else self.items[pos]
