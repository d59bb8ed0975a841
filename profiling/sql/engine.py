"""DuckDB over traces: one view per table, spanning every trace and Parquet export given.

``TraceDB`` holds loaded traces (``AnalysedTrace`` with a label) and export folders
(``export.read_manifest``).  A query names the views it reads; only those are
built, and each once per ``TraceDB`` (a query over ``events`` never waits for the
kernel links that ``kernels`` needs).  A trace's Arrow table is registered with
DuckDB as it is (DuckDB scans Arrow memory in place), and the view over it adds
the ``trace`` label and the µs columns; an export's view reads its Parquet files.
Views of several sources are ``UNION ALL BY NAME`` of theirs.

Errors: a query DuckDB rejects raises ``QueryError`` (one line); ``require()``
raises ``MissingExtra`` when duckdb or pyarrow is not installed.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from profiling.analysis.analysed import AnalysedTrace
from profiling.errors import AttnTuiError
from profiling.sql.tables import TABLES, build_table

INSTALL_HINT = "install it with: pip install 'attn-tui[sql]'"


class MissingExtra(AttnTuiError):
    """duckdb or pyarrow is not installed."""


class QueryError(AttnTuiError):
    """DuckDB rejected the query (its message, on one line)."""


def require() -> None:
    """Raise ``MissingExtra`` (what is missing, how to install it) unless both
    duckdb and pyarrow import."""
    missing = []
    for module in ("duckdb", "pyarrow"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise MissingExtra(f"SQL needs {' and '.join(missing)} (the [sql] extra)", "", INSTALL_HINT)


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


EVENTS_SELECT = (
    "SELECT {label} AS trace, row, name, category, kind, device_type, pid, tid, lane, "
    "CAST(ts_ns - {origin} AS DOUBLE) / 1000.0 AS ts_us, "
    "CAST(dur_ns AS DOUBLE) / 1000.0 AS dur_us, depth, "
    "CAST(NULLIF(correlation, -1) AS BIGINT) AS correlation, "
    "CAST(NULLIF(external_id, -1) AS BIGINT) AS external_id, "
    "CAST(NULLIF(stream, -1) AS BIGINT) AS stream, ts_ns, dur_ns FROM {raw}"
)
"""The ``events`` view over a trace's raw table: µs from the trace's first event (as
the ruler and ``kernels`` count), and NULL for an absent id, computed as it is read;
the ids BIGINT whether the index holds them as int32 or int64 (``model.narrow``)."""


@dataclass
class Loaded:
    """A loaded trace and its label (the ``trace`` column of its rows)."""

    label: str
    analysed: AnalysedTrace


@dataclass
class Exported:
    """An export folder: its label -> table -> Parquet file."""

    folder: str
    files: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """A query's answer: column names, DuckDB type names, and the rows."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]


VIEW_WORD = re.compile(r"\b(" + "|".join(TABLES) + r")\b", re.IGNORECASE)


def views_named(query: str) -> list[str]:
    """The views a query may read (every table name that occurs in it as a word)."""
    return sorted({m.group(1).lower() for m in VIEW_WORD.finditer(query)})


class TraceDB:
    """An in-memory DuckDB with views over ``sources`` (see the module doc).

    One query at a time (a lock): the TUI runs them on a worker thread."""

    def __init__(self, sources: Sequence[Loaded | Exported]) -> None:
        require()
        import duckdb

        self.sources = list(sources)
        self.con = duckdb.connect(":memory:")
        self.arrow: dict[str, Any] = {}  # registered name -> Arrow table (kept alive)
        self._views: set[str] = set()
        self._lock = threading.Lock()

    def labels(self) -> list[str]:
        out: list[str] = []
        for s in self.sources:
            out += [s.label] if isinstance(s, Loaded) else list(s.files)
        return out

    def ensure(self, name: str) -> None:
        """Build and register view ``name`` (one of ``TABLES``) unless it is there."""
        if name in self._views:
            return
        selects = []
        for i, source in enumerate(self.sources):
            if isinstance(source, Loaded):
                selects.append(self.select_of(i, name))
            else:
                files = [f[name] for f in source.files.values() if name in f]
                if files:
                    listed = ", ".join(sql_string(f) for f in files)
                    selects.append(f"SELECT * FROM read_parquet([{listed}], union_by_name=true)")
        body = "\nUNION ALL BY NAME\n".join(selects) if selects else "SELECT NULL AS trace LIMIT 0"
        self.con.execute(f"CREATE OR REPLACE VIEW {name} AS {body}")
        self._views.add(name)

    def select_of(self, i: int, name: str) -> str:
        """The SELECT giving table ``name`` of loaded source ``i`` (its Arrow table
        is built and registered on first use)."""
        source = self.sources[i]
        assert isinstance(source, Loaded)
        raw = f"_{name}_{i}"
        if raw not in self.arrow:
            table = build_table(name, source.analysed)
            self.arrow[raw] = table
            self.con.register(raw, table)
        label = sql_string(source.label)
        if name == "events":
            origin = source.analysed.trace.start_ns
            return EVENTS_SELECT.format(label=label, origin=int(origin), raw=raw)
        return f"SELECT {label} AS trace, * FROM {raw}"

    def relation(self, query: str) -> Any:
        """A DuckDB relation for ``query`` with the views it names built first."""
        import duckdb

        for name in views_named(query):
            self.ensure(name)
        try:
            return self.con.sql(query)
        except duckdb.Error as exc:
            raise QueryError(one_line(exc), "query") from None

    def query(self, query: str, limit: int | None = None) -> Result:
        """Run ``query``; ``limit`` caps the rows fetched (the TUI shows a page)."""
        import duckdb

        with self._lock:
            rel = self.relation(query)
            if rel is None:  # a statement with no result (SET, CREATE ...)
                return Result([], [], [])
            try:
                rows = (rel if limit is None else rel.limit(limit)).fetchall()
            except duckdb.Error as exc:
                raise QueryError(one_line(exc), "query") from None
            return Result(list(rel.columns), [str(t) for t in rel.types], rows)

    def batches(self, query: str, size: int = 65_536) -> Iterator[Result]:
        """``query``'s answer ``size`` rows at a time, the first batch (maybe empty)
        always: a print of millions of rows holds one batch of them, not all."""
        import duckdb

        with self._lock:
            rel = self.relation(query)
            if rel is None:  # a statement with no result (SET, CREATE ...)
                yield Result([], [], [])
                return
            columns, types = list(rel.columns), [str(t) for t in rel.types]
            try:
                cursor = self.con.execute(query)
                rows = cursor.fetchmany(size)
            except duckdb.Error as exc:
                raise QueryError(one_line(exc), "query") from None
            while True:
                yield Result(columns, types, rows)
                if len(rows) < size:
                    return
                try:
                    rows = cursor.fetchmany(size)
                except duckdb.Error as exc:
                    raise QueryError(one_line(exc), "query") from None

    def close(self) -> None:
        self.con.close()


def one_line(exc: BaseException) -> str:
    """DuckDB's message on one line: its first line, and its suggestion if any."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    text = lines[0]
    if text.startswith("Catalog Error: Table with name"):
        return f"{text} (the views are: {', '.join(TABLES)})"
    hint = next((line for line in lines[1:] if line.lower().startswith("did you mean")), "")
    return f"{text} {hint}".strip()


def unique_labels(labels: Sequence[str], taken: Sequence[str] = ()) -> list[str]:
    """``labels`` made unique, also against ``taken`` (an export's labels): a repeated
    one gets ``~2``, ``~3``... in order."""
    used = set(taken)
    out = []
    for label in labels:
        name, n = label, 1
        while name in used:
            n += 1
            name = f"{label}~{n}"
        used.add(name)
        out.append(name)
    return out
