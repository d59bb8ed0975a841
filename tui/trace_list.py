"""The traces in a folder, described for ``attn-tui open`` with no PATH (pure; no Textual).

``attn-tui open`` in a capture folder should not make a person type file
names: it lists the traces there (newest first, with their size, the variant
and the device they came from) and opens the ones picked.  Which files are
traces is ``tui.inputs``'s call (oracles and manifests never are).  What a
trace is comes from its top-level metadata, read from its first and last
64 KiB, never by loading it: Kineto writes ``deviceProperties`` (GPU names)
before the events, ``attn-tui capture`` stores its config (``attn_tui``:
variant, device) after them.  A field that is
not there shows as ``-``.
"""

from __future__ import annotations

import gzip
import json
import os
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui.inputs import MANIFEST, _head, folder_traces, kind_of

UNKNOWN = "-"


@dataclass(frozen=True)
class TraceEntry:
    """One trace in the folder, as the picker and the listing show it."""

    path: str
    size: int  # bytes on disk (compressed for .gz)
    mtime: float
    variant: str
    device: str

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


TAIL_BYTES = 64 << 10
GZIP_TAIL_MAX = 8 << 20
"""A gzip trace's tail is read only up to this compressed size (it takes a full
decompression); a bigger one is described from its head alone."""

META_KEYS = ("attn_tui", "deviceProperties", "computeProperties")
"""The top-level fields the listing reads: Kineto writes ``deviceProperties``
before the events, ``attn-tui capture`` adds ``attn_tui`` after them."""


def _tail(path: str) -> str:
    """The last ``TAIL_BYTES`` of the file's text ('' when not cheap to get)."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
        if gz:
            if os.path.getsize(path) > GZIP_TAIL_MAX:
                return ""
            f.seek(0)
            data = gzip.decompress(f.read())[-TAIL_BYTES:]
        else:
            f.seek(max(os.path.getsize(path) - TAIL_BYTES, 0))
            data = f.read()
    return data.decode("utf-8", errors="replace")


def file_metadata(path: str) -> dict[str, Any]:
    """The trace's top-level ``META_KEYS`` found in its head or its tail (each
    value decoded alone, so a file cut short still describes itself)."""
    try:
        head, _ = _head(path)
        texts = [head.decode("utf-8", errors="replace")]
        texts.append(_tail(path))
    except (OSError, EOFError, zlib.error):
        return {}
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    for text in texts:
        for key in META_KEYS:
            at = text.rfind(f'"{key}"')
            colon = text.find(":", at + len(key) + 2) if at >= 0 else -1
            if colon < 0 or text[at + len(key) + 2:colon].strip():
                continue
            try:
                value, _ = decoder.raw_decode(text, colon + 1 + _spaces(text, colon + 1))
            except ValueError:
                continue
            found.setdefault(key, value)
    return found


def _spaces(text: str, at: int) -> int:
    return len(text[at:at + 64]) - len(text[at:at + 64].lstrip())


def describe(meta: dict[str, Any]) -> tuple[str, str]:
    """(variant, device) from a trace's metadata: the capture's config, Kineto's
    ``deviceProperties`` (GPU names, ``2 × NVIDIA H200`` for several alike)."""
    stored = meta.get("attn_tui")
    config = stored.get("config") if isinstance(stored, dict) else None
    variant = stored.get("variant") if isinstance(stored, dict) else None
    names: list[str] = []
    for key in ("deviceProperties", "computeProperties"):
        props = meta.get(key)
        if isinstance(props, list):
            names += [str(p["name"]) for p in props if isinstance(p, dict) and p.get("name")]
    if names:
        device = names[0] if len(names) == 1 else (
            f"{len(names)} × {names[0]}" if len(set(names)) == 1 else ", ".join(names))
    elif isinstance(config, dict) and isinstance(config.get("device"), str):
        device = config["device"]
    else:
        device = UNKNOWN
    return (variant if isinstance(variant, str) and variant else UNKNOWN), device


def manifest_info(folder: str) -> dict[str, tuple[str, str]]:
    """Trace file name -> (variant, device) from the folder's capture manifest: it
    still describes a gzip trace too big to read the tail of."""
    path = os.path.join(folder, "manifest.json")
    if not os.path.isfile(path) or kind_of(path) != MANIFEST:
        return {}
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8", errors="replace"))
        device = doc.get("gpu") or doc.get("device") or UNKNOWN
        return {str(v["trace"]): (str(name), str(device)) for name, v in doc["variants"].items()
                if isinstance(v, dict) and isinstance(v.get("trace"), str)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def looks_like_trace(path: str) -> bool:
    """Whether the file's text starts like a Chrome trace: ``{`` with ``"traceEvents"``
    in its head, or a bare ``[`` whose first item is an object (gzip'd or not).

    ``tui.inputs`` takes any JSON for "may be a trace" and lets the loader decide, which
    is right for a PATH given by hand; a listing would offer a list of numbers or a
    config file.  The head is the 64 KiB ``tui.inputs`` reads (not 1 KiB: Kineto writes
    ``deviceProperties`` first, and real traces put ``traceEvents`` 26 KiB in)."""
    try:
        head, _ = _head(path)
    except (OSError, EOFError, zlib.error):
        return False
    if head[:1] == b"[":
        return head[1:].lstrip()[:1] == b"{"
    return head[:1] == b"{" and b'"traceEvents"' in head


def list_traces(folder: str = ".") -> list[TraceEntry]:
    """The traces in ``folder``, newest first (then by name); raises ``AttnTuiError``
    when the folder cannot be listed.  A trace's own metadata first, the folder's
    manifest for what it lacks."""
    out = []
    manifest = manifest_info(folder)
    for path in folder_traces(folder):
        if not looks_like_trace(path):
            continue  # JSON, but not a trace: not offered
        try:
            st = os.stat(path)
        except OSError:
            continue  # gone since the listing
        variant, device = describe(file_metadata(path))
        known = manifest.get(os.path.basename(path), (UNKNOWN, UNKNOWN))
        variant = known[0] if variant == UNKNOWN else variant
        device = known[1] if device == UNKNOWN else device
        out.append(TraceEntry(path, st.st_size, st.st_mtime, variant, device))
    out.sort(key=lambda e: (-e.mtime, e.name))
    return out


def fmt_size(n: int) -> str:
    """``77968`` -> ``76.1 KiB``: a file's size, short."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover


def fmt_mtime(mtime: float, now: float | None = None) -> str:
    """When a file was written, local time: ``Dec 01 09:51`` this year, else ``2025-03-04``."""
    t = time.localtime(mtime)
    this_year = time.localtime(time.time() if now is None else now).tm_year
    return time.strftime("%b %d %H:%M" if t.tm_year == this_year else "%Y-%m-%d", t)


HEADERS = ("trace", "variant", "device", "size", "modified")


def rows(entries: Sequence[TraceEntry]) -> list[tuple[str, ...]]:
    """The listing's cells per entry, in ``HEADERS`` order."""
    return [(e.name, e.variant, e.device, fmt_size(e.size), fmt_mtime(e.mtime)) for e in entries]


def listing_lines(entries: Sequence[TraceEntry], name_width: int = 40) -> list[str]:
    """The entries as aligned text lines under a header (the picker's rows and the
    headless listing); long names are cut with an ellipsis."""
    from tui.names import cells, clip, visible

    table = [HEADERS, *[tuple(visible(c) for c in r) for r in rows(entries)]]
    table = [(clip(r[0], name_width), *r[1:]) for r in table]
    widths = [max(cells(r[i]) for r in table) for i in range(len(HEADERS))]
    right = {3}  # size
    # padded in cells, not characters: a CJK or emoji file name takes two a character
    return ["  ".join(" " * (w - cells(c)) + c if i in right else c + " " * (w - cells(c))
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in table]
