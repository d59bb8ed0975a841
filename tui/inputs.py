"""PATH arguments -> the trace files a command reads (no Textual, no Rich, no torch).

``attn-tui capture --out traces`` writes, beside each trace, torch's own
``key_averages`` output (``*.key_averages.json``) and one ``manifest.json``.
Both are JSON, so ``attn-tui open traces/*.json`` would otherwise open them as
traces (empty tabs, warnings).  This module runs before every command that takes
PATHs (``tui.cli``), so the command modules only ever see traces:

- a folder stands for the traces in it: a capture folder's in its manifest's
  variant order, any other folder's in name order (``worker2`` before
  ``worker10``); a folder holding no trace is an error;
- an oracle or a manifest is recognised by its content (a short look at the
  start of the file), not by its name, and skipped with one line on stderr;
  named alone, it is an error that says what the file is;
- anything else (a missing path, a text file) goes through unchanged, so the
  loader reports it with its usual one line.
"""

from __future__ import annotations

import json
import os
import re
import sys
import zlib
from collections.abc import Callable
from typing import Any

from profiling.errors import AttnTuiError

HEAD_BYTES = 64 << 10
"""How much of a file (decompressed) the sniff reads."""

MANIFEST_MAX_BYTES = 4 << 20
"""A JSON object without ``traceEvents`` near its start is parsed whole to check for
a manifest only up to this size (a manifest is a few kB; a trace can be GBs)."""

TRACE = "trace"
ORACLE = "oracle"
MANIFEST = "manifest"
EXPORT = "export"
OTHER = "other"
EXPORT_FORMAT = "attn-tui parquet export"
"""``format`` of the manifest ``attn-tui export`` writes (``profiling.sql.export.FORMAT``,
not imported: that module needs the [sql] extra's engine)."""

_ORACLE_KEYS = frozenset({"key", "device_type", "count"})
_BOM = b"\xef\xbb\xbf"

WHAT = {
    ORACLE: "torch's key_averages output, not a trace",
    MANIFEST: "a capture manifest, not a trace",
    EXPORT: "the manifest of an attn-tui Parquet export, not a trace",
}

Say = Callable[[str], None]


def _head(path: str) -> tuple[bytes, bool]:
    """The first ``HEAD_BYTES`` of the file's text (gunzipped), and whether that is all."""
    with open(path, "rb") as f:
        raw = f.read(HEAD_BYTES + 1)
        if raw[:2] == b"\x1f\x8b":
            # here: most traces are plain JSON, and every command sniffs them
            from profiling.trace.gzip_head import gzip_head

            raw = gzip_head(f, HEAD_BYTES + 1)  # a file cut short gives what it holds
    complete = len(raw) <= HEAD_BYTES
    raw = raw[:HEAD_BYTES]
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    return raw.lstrip(), complete


def kind_of(path: str) -> str:
    """``trace``, ``oracle``, ``manifest`` or ``other`` (not JSON text: not a trace).

    ``trace`` means "JSON that may be a trace": the loader has the last word."""
    try:
        head, complete = _head(path)
    except (OSError, EOFError, zlib.error):
        return OTHER
    if head[:1] == b"[":
        return ORACLE if _first_item_is_oracle_row(head) else TRACE
    if head[:1] != b"{":
        return OTHER
    if b'"traceEvents"' in head:
        return TRACE
    return _manifest_kind(path, head, complete)


def _first_item_is_oracle_row(head: bytes) -> bool:
    """A bare list whose first item is a ``FunctionEventAvg`` row, not a trace event."""
    text = head.decode("utf-8", errors="replace")
    start = text.find("{")
    if start < 0 or text[1:start].strip():
        return False
    try:
        first, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return False
    return isinstance(first, dict) and _ORACLE_KEYS <= first.keys() and "ph" not in first


def _manifest_kind(path: str, head: bytes, complete: bool) -> str:
    """``manifest``: a JSON object with a ``variants`` table and a manifest marker, and
    no events; ``export``: the manifest ``attn-tui export`` writes; else ``trace``."""
    if complete:
        data = head
    else:
        try:
            if os.path.getsize(path) > MANIFEST_MAX_BYTES:
                return TRACE
            with open(path, "rb") as f:
                data = f.read()
            if data[:2] == b"\x1f\x8b":
                import gzip  # as in _head

                data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return TRACE
    try:
        doc = json.loads(data.decode("utf-8", errors="replace").lstrip("\ufeff"))
    except ValueError:
        return TRACE
    if not isinstance(doc, dict) or "traceEvents" in doc:
        return TRACE
    if doc.get("format") == EXPORT_FORMAT:
        return EXPORT
    capture = "manifest_version" in doc or doc.get("tool") == "attn-tui capture"
    return MANIFEST if capture and isinstance(doc.get("variants"), dict) else TRACE


def _natural(name: str) -> list[Any]:
    """Sort key that puts ``worker2`` before ``worker10``."""
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", name)]


def folder_traces(folder: str) -> list[str]:
    """The traces in ``folder`` (not its subfolders): manifest order first, then by name."""
    try:
        names = sorted(os.listdir(folder), key=_natural)
    except OSError as exc:
        raise AttnTuiError(
            f"cannot list this folder ({exc.strerror or exc})", folder, "check its permissions"
        ) from None
    kinds: dict[str, str] = {}
    for name in names:
        path = os.path.join(folder, name)
        if not name.startswith(".") and os.path.isfile(path):
            kinds[name] = kind_of(path)
    ordered: list[str] = []
    for name, kind in kinds.items():
        if kind == MANIFEST:
            ordered += [t for t in _manifest_traces(os.path.join(folder, name))
                        if kinds.get(t) == TRACE and t not in ordered]
    ordered += [n for n, kind in kinds.items() if kind == TRACE and n not in ordered]
    return [os.path.join(folder, n) for n in ordered]


def _manifest_traces(path: str) -> list[str]:
    """The trace file names a capture manifest lists, in its variant order."""
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8", errors="replace"))
        variants = doc["variants"]
        names: list[str] = []
        for v in variants.values():
            if isinstance(v, dict) and isinstance(v.get("trace"), str):
                names.append(v["trace"])
            elif isinstance(v, dict) and isinstance(v.get("traces"), list):  # capture --nproc
                names += [str(t) for t in v["traces"] if isinstance(t, str)]
        return names
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def _beside(path: str) -> str:
    """For an oracle ``X.key_averages.json``: the trace it came from, if it is there."""
    base = os.path.basename(path)
    stem = base[: -len(".key_averages.json")] if base.endswith(".key_averages.json") else ""
    for suffix in (".json", ".json.gz"):
        candidate = os.path.join(os.path.dirname(path), stem + suffix)
        if stem and os.path.isfile(candidate):
            return candidate
    return ""


def not_a_trace(path: str, kind: str, *, many: bool) -> AttnTuiError:
    """The error for an oracle or manifest named where a trace was expected."""
    if kind == ORACLE:
        trace = _beside(path)
        hint = (f"the trace it was computed from is {trace}" if trace
                else "give the trace it was computed from")
    elif kind == EXPORT:
        return _export_error(os.path.dirname(path) or ".")
    else:
        folder = os.path.dirname(path) or "."
        hint = (f"give its folder to read the traces it lists: {folder}" if many
                else f"give one of the traces in {folder}")
    return AttnTuiError("is " + WHAT[kind], path, hint)


def _export_error(folder: str) -> AttnTuiError:
    return AttnTuiError("is an attn-tui export (Parquet files), not traces", folder,
                        f'query it: attn-tui sql {folder} "SELECT ..."')


def _expand(path: str, say: Say, *, many: bool) -> tuple[list[str], AttnTuiError | None]:
    """One PATH -> its traces, and the error to raise if nothing else is given."""
    if os.path.isdir(path):
        traces = folder_traces(path)
        if not traces and os.path.isfile(os.path.join(path, "attn-tui-export.json")):
            return [], _export_error(path)
        if not traces:
            return [], AttnTuiError(
                "is a directory with no trace in it", path,
                "a trace is the .json or .json.gz file torch.profiler writes",
            )
        return traces, None
    if not os.path.isfile(path):
        return [path], None  # missing, a pipe...: the loader says what is wrong
    kind = kind_of(path)
    if kind in WHAT:
        say(f"skipped {path} ({WHAT[kind]})")
        return [], not_a_trace(path, kind, many=many)
    return [path], None


def resolve_paths(paths: list[str], say: Say, *, many: bool = True) -> list[str]:
    """Every PATH -> the traces to read, in order; raises ``AttnTuiError`` when none
    is left.  With ``many=False`` (commands reading one trace) the result has one path:
    a folder of several traces is an error that names them."""
    out: list[str] = []
    first_error: AttnTuiError | None = None
    skipped: list[str] = []
    collect: Say = skipped.append
    for path in paths:
        traces, error = _expand(path, collect, many=many)
        out += traces
        first_error = first_error or error
        if error is not None and not traces and os.path.isdir(path):
            raise error  # an empty folder is a mistake even beside other paths
    if not out:
        assert first_error is not None
        raise first_error
    for line in skipped:
        say(line)
    if not many and len(out) > 1:
        shown = ", ".join(os.path.basename(p) for p in out[:4]) + (", ..." if len(out) > 4 else "")
        raise AttnTuiError(
            f"holds {len(out)} traces ({shown}); this command reads one",
            paths[0], "name one of them, or give the folder to 'attn-tui compare', 'open' or "
            "'ranks' (a job's ranks)",
        )
    return out


def resolve_args(args: Any, command: str) -> None:
    """Replace ``args.paths`` / ``args.path`` with the traces they stand for (in place)."""

    def say(line: str) -> None:
        from tui.names import visible

        print(f"attn-tui {command}: {visible(line)}", file=sys.stderr)

    if isinstance(getattr(args, "paths", None), list) and args.paths:  # none: open's picker
        args.paths = resolve_paths([os.fspath(p) for p in args.paths], say, many=True)
    elif isinstance(getattr(args, "path", None), str):
        (args.path,) = resolve_paths([args.path], say, many=False)
