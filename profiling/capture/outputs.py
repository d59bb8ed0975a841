"""Files a capture writes, written so that no reader ever sees half of one.

Per variant: ``<variant>.json`` (or ``.json.gz``), the Chrome trace with the
capture config under the top-level key ``attn_tui``; ``<variant>.key_averages.json``,
torch's own ``prof.key_averages()`` rows, unmodified (the oracle the op table is
tested against); and one ``manifest.json`` for the folder (DESIGN.md section 6).

Every file goes to a temp file in the same folder and is renamed over its name
with ``os.replace`` (atomic on POSIX), and the temp file is removed on any
error, Ctrl+C included.  An existing trace or oracle is never replaced without
``--force``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from profiling.atomic import atomic_write_bytes
from profiling.capture.config import ALL_VARIANT_NAMES
from profiling.errors import CaptureError

MANIFEST = "manifest.json"
ORACLE_FIELDS = (
    "key",
    "device_type",
    "count",
    "self_cpu_time_total",
    "cpu_time_total",
    "self_device_time_total",
    "device_time_total",
)


def trace_path(out: Path, variant: str, gz: bool) -> Path:
    return out / (f"{variant}.json.gz" if gz else f"{variant}.json")


def oracle_path(out: Path, variant: str) -> Path:
    return out / f"{variant}.key_averages.json"


def rank_stem(variant: str, rank: int) -> str:
    """``<variant>.rank<k>``: the name of one rank's files of a job (``capture --nproc``)."""
    return f"{variant}.rank{rank}"


def job_files(out: Path, variant: str) -> list[Path]:
    """Every rank file of ``variant`` in ``out``, from a job of any size."""
    if not out.is_dir():
        return []
    pattern = re.compile(re.escape(variant) + r"\.rank\d+\.(json|json\.gz|key_averages\.json)$")
    return sorted(p for p in out.iterdir() if pattern.match(p.name))


def variant_files(out: Path, variant: str) -> list[Path]:
    """Every file a capture of ``variant`` could write or leave behind in ``out``."""
    return [trace_path(out, variant, False), trace_path(out, variant, True),
            oracle_path(out, variant)]


def prepare_out_dir(out: Path, variants: list[str], force: bool) -> None:
    """Create ``out``; refuse (before any work) to overwrite a variant's files without force."""
    if out.exists() and not out.is_dir():
        raise CaptureError("exists and is not a folder", str(out), "choose another --out")
    if not force:
        existing = [p for v in variants for p in variant_files(out, v) if p.exists()]
        if existing:
            more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
            raise CaptureError(f"would overwrite {existing[0]}{more}", str(out),
                               "pass --force to overwrite, or choose another --out")
        refuse_foreign_manifest(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=out, prefix=".attn-tui-probe-", delete=True)
        probe.close()
    except OSError as exc:
        raise CaptureError(f"cannot write there ({exc.strerror or exc})", str(out),
                           "choose a writable --out") from None


def json_bytes(obj: Any, gz: bool = False, indent: int | None = None) -> bytes:
    """JSON as UTF-8 bytes; gzip'd with a fixed mtime so equal input gives equal bytes."""
    data = json.dumps(obj, indent=indent, ensure_ascii=False).encode("utf-8")
    if indent is not None:
        data += b"\n"
    return gzip.compress(data, compresslevel=9, mtime=0) if gz else data


def write_json(path: Path, obj: Any, gz: bool = False, indent: int | None = None) -> None:
    atomic_write_bytes(path, json_bytes(obj, gz=gz, indent=indent))


def read_json(path: Path) -> Any:
    """Read JSON, gzip'd or not (decided by the magic bytes, not the name)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def oracle_rows(prof: Any) -> list[dict[str, Any]]:
    """torch's ``key_averages()`` as ``table --json`` rows, numbers untouched."""
    rows = []
    for avg in prof.key_averages():
        device_type = getattr(avg.device_type, "name", str(avg.device_type))
        rows.append({
            "key": avg.key,
            "device_type": device_type,
            "count": int(avg.count),
            "self_cpu_time_total": float(avg.self_cpu_time_total),
            "cpu_time_total": float(avg.cpu_time_total),
            "self_device_time_total": float(avg.self_device_time_total),
            "device_time_total": float(avg.device_time_total),
        })
    return rows


def remove_quietly(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def is_own_manifest(data: Any) -> bool:
    """Whether ``data`` is a manifest attn-tui wrote (only those are merged or replaced)."""
    return isinstance(data, dict) and data.get("tool") == "attn-tui capture"


def refuse_foreign_manifest(out: Path) -> None:
    """Stop (before any work) when ``out/manifest.json`` is not attn-tui's own.

    Someone else's ``manifest.json`` (or one that does not parse) would be silently
    replaced by the capture's; like a trace, it goes only with ``--force``.
    """
    path = out / MANIFEST
    if not path.is_file():
        return
    try:
        data = read_json(path)
    except (OSError, ValueError, EOFError):
        data = None
    if not is_own_manifest(data):
        raise CaptureError("not written by attn-tui; the capture would replace it",
                           str(path), "move it away, pass --force to replace it, "
                           "or choose another --out")


def load_manifest(out: Path) -> dict[str, Any] | None:
    """The folder's attn-tui manifest, or None (none there, unreadable or someone else's)."""
    path = out / MANIFEST
    if not path.exists():
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError, EOFError):
        return None
    return data if is_own_manifest(data) else None


def merge_manifest(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Keep earlier entries of variants not captured now, if they share the config.

    Rerunning one variant into a folder must not erase what the folder says about
    the others; entries of another shape, dtype or device are dropped instead,
    since the table would compare what was never comparable.
    """
    if not old or old.get("comparable") != new.get("comparable"):
        return new
    merged = dict(new)
    variants = dict(new.get("variants", {}))
    for name, entry in (old.get("variants") or {}).items():
        if name not in variants:
            variants[name] = entry
    merged["variants"] = {name: variants[name] for name in ALL_VARIANT_NAMES if name in variants}
    return merged
