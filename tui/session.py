"""Everything the app shows about one file, computed off the UI thread (pure).

``load_session`` reads the trace (reporting progress), then builds the links,
regions and op table.  A failure in one analysis does not lose the others: the
op table, say, shows its one-line error while the timeline still works.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from profiling.errors import AttnTuiError
from profiling.trace import load_trace
from profiling.trace.model import Trace
from tui.links import Links
from tui.ops_table import Totals
from tui.regions_data import Region, find_regions

Progress = Callable[[str, float], None]


@dataclass
class Session:
    path: str
    trace: Trace
    links: Links
    regions: list[Region] = field(default_factory=list)
    regions_error: str = ""
    ops: list[dict[str, Any]] | None = None
    ops_totals: Totals | None = None
    ops_error: str = ""


def error_line(exc: BaseException) -> str:
    """The one line the headless commands would print for ``exc``."""
    if isinstance(exc, AttnTuiError):
        return exc.line()
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"{where}{exc.strerror or exc}"
    return f"unexpected {type(exc).__name__}: {exc} (please report this with the file)"


def key_averages(trace: Trace) -> tuple[list[dict[str, Any]], Totals]:
    """torch's op table rows (as dicts) and its two footer totals."""
    from profiling.analysis.key_averages import key_averages as analysis_key_averages

    table = analysis_key_averages(trace)
    rows = [r.as_json() for r in table.rows]
    return rows, Totals(table.self_cpu_time_total, table.self_device_time_total)


def load_session(
    path: str | os.PathLike[str], progress: Progress | None = None, *, no_cache: bool = False
) -> Session:
    """Load ``path`` and analyse it.  Raises only for the trace itself (one-line
    ``AttnTuiError``); analysis failures are recorded on the session."""
    report = progress or (lambda stage, fraction: None)

    def loading(stage: str, fraction: float) -> None:
        report(stage, 0.85 * fraction)

    trace = load_trace(path, progress=loading, use_cache=not no_cache)
    report("links", 0.86)
    links = Links(trace)
    session = Session(os.fspath(path), trace, links)
    report("regions", 0.9)
    try:
        session.regions = find_regions(trace, links)
    except Exception as exc:  # noqa: BLE001 - shown in the regions view
        session.regions_error = error_line(exc)
    report("op table", 0.95)
    try:
        session.ops, session.ops_totals = key_averages(trace)
    except Exception as exc:  # noqa: BLE001 - shown in the ops view
        session.ops_error = error_line(exc)
    report("done", 1.0)
    return session
