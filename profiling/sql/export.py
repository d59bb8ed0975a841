"""The SQL views as Parquet files: one folder per trace, one file per table.

Layout of an export folder (``attn-tui export TRACE... --parquet DIR``)::

    DIR/attn-tui-export.json      which traces are here: label -> path, folder, tables
    DIR/<label>/events.parquet    the ``events`` view's rows of that trace
    DIR/<label>/kernels.parquet   ... one file per table of ``tables.TABLES``

Every file holds exactly what the view shows (the ``trace`` column included), so
``attn-tui sql DIR "QUERY"`` answers as it would over the traces, and any engine
that reads Parquet (DuckDB, Spark, pandas) can take ``DIR/*/events.parquet``.

As ``capture`` writes its traces: each file goes to a temp file in its folder
and is renamed over its name (``os.replace``); the temp file is removed on any
error; an existing file is not replaced without ``force`` (checked before any
work); the manifest is merged, so several exports can fill one folder.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from profiling.atomic import atomic_write_bytes, atomic_write_with
from profiling.errors import AttnTuiError
from profiling.sql.engine import Exported, Loaded, TraceDB, sql_string
from profiling.sql.tables import TABLES

MANIFEST = "attn-tui-export.json"
FORMAT = "attn-tui parquet export"
VERSION = 1


def folder_name(label: str) -> str:
    """A file-system-safe folder name for a trace label."""
    name = re.sub(r"[^A-Za-z0-9._+=-]+", "_", label).strip("._") or "trace"
    return name[:120]


@dataclass(frozen=True)
class Planned:
    """One trace's place in the export: its source index, label and folder."""

    source: int
    label: str
    folder: str


def plan(db: TraceDB, out: str, force: bool) -> list[Planned]:
    """Where each loaded trace goes; raises (before any work) when ``out`` is not a
    folder or a file would be overwritten without ``force``."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise AttnTuiError("exists and is not a folder", out, "choose another --parquet")
    old = _read_json(out) if os.path.isfile(os.path.join(out, MANIFEST)) else {}
    taken = {v.get("folder"): k for k, v in old.get("traces", {}).items() if isinstance(v, dict)}
    planned: list[Planned] = []
    used: set[str] = set()
    for i, source in enumerate(db.sources):
        if not isinstance(source, Loaded):
            continue
        base = folder_name(source.label)
        name, n = base, 1
        while name in used or (name in taken and taken[name] != source.label):
            n += 1
            name = f"{base}~{n}"
        used.add(name)
        planned.append(Planned(i, source.label, name))
    if not force:
        existing = [os.path.join(out, p.folder, f"{t}.parquet") for p in planned for t in TABLES]
        existing = [p for p in existing if os.path.exists(p)]
        if existing:
            more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
            raise AttnTuiError(
                f"would overwrite {existing[0]}{more}",
                out,
                "pass --force to overwrite, or choose another --parquet",
            )
    return planned


def export(db: TraceDB, out: str, force: bool = False, progress: Any = None) -> list[str]:
    """Write every loaded trace of ``db`` under ``out`` (see the module doc); the
    files written, in order.  ``progress(label, table)`` is called before each."""
    planned = plan(db, out, force)
    written: list[str] = []
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise AttnTuiError(
            f"cannot create this folder ({exc.strerror or exc})", out, "choose a writable --parquet"
        ) from None
    manifest = _read_json(out) if os.path.isfile(os.path.join(out, MANIFEST)) else {}
    traces = dict(manifest.get("traces", {}))
    for p in planned:
        folder = os.path.join(out, p.folder)
        os.makedirs(folder, exist_ok=True)
        for table in TABLES:
            if progress is not None:
                progress(p.label, table)
            path = os.path.join(folder, f"{table}.parquet")
            _copy_atomic(db, db.select_of(p.source, table), path)
            written.append(path)
        source = db.sources[p.source]
        assert isinstance(source, Loaded)
        traces[p.label] = {
            "path": os.path.abspath(source.analysed.trace.path),
            "folder": p.folder,
            "tables": list(TABLES),
        }
    doc = {"format": FORMAT, "version": VERSION, "traces": traces}
    atomic_write_bytes(
        os.path.join(out, MANIFEST),
        (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8"),
    )
    return written


def _copy_atomic(db: TraceDB, select: str, path: str) -> None:
    """DuckDB ``COPY (select) TO`` a temp file beside ``path``, then rename it."""

    def copy(tmp: str) -> None:
        db.con.execute(f"COPY ({select}) TO {sql_string(tmp)} (FORMAT parquet, COMPRESSION zstd)")

    atomic_write_with(path, copy)


def _read_json(folder: str) -> dict[str, Any]:
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise AttnTuiError(
            f"cannot read this export manifest ({exc})",
            path,
            "export the traces again with --force",
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise AttnTuiError(
            "is not an attn-tui export manifest",
            path,
            "give a folder written by 'attn-tui export --parquet'",
        )
    return doc


def is_export(folder: str) -> bool:
    """Whether ``folder`` is an export folder (it holds the manifest)."""
    return os.path.isdir(folder) and os.path.isfile(os.path.join(folder, MANIFEST))


def read_export(folder: str) -> Exported:
    """The export in ``folder``: each trace's label and its tables' Parquet files
    (those that are there)."""
    doc = _read_json(folder)
    files: dict[str, dict[str, str]] = {}
    for label, entry in doc.get("traces", {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("folder"), str):
            continue
        sub = os.path.join(folder, entry["folder"])
        found = {t: os.path.join(sub, f"{t}.parquet") for t in TABLES}
        files[label] = {t: p for t, p in found.items() if os.path.isfile(p)}
    if not files:
        raise AttnTuiError(
            "this export holds no trace",
            folder,
            "export some with 'attn-tui export TRACE --parquet DIR'",
        )
    return Exported(folder, files)
