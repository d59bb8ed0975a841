"""Path -> bytes of JSON text: checks the path, undoes gzip, rejects what is not text.

Everything here turns an OS or codec failure into one ``TraceError`` line that
says what is wrong and what to do.  The file is only ever opened for reading.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from profiling.errors import TraceError

GZIP_MAGIC = b"\x1f\x8b"
_BOMS = {
    b"\xef\xbb\xbf": None,  # UTF-8 BOM: harmless, stripped
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def check_path(path: str | os.PathLike[str]) -> Path:
    """The path as a regular, readable file, or a TraceError saying why not."""
    p = Path(path)
    where = str(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise TraceError("no such file", where, "check the path") from None
    except PermissionError:
        raise TraceError("permission denied", where, "check the file's permissions") from None
    except OSError as exc:  # symlink loops, name too long, ...
        raise TraceError(f"cannot open ({exc.strerror or exc})", where, "check the path") from None
    if stat.S_ISDIR(st.st_mode):
        raise TraceError(
            "is a directory, not a trace file", where, "give a .json or .json.gz file inside it"
        )
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(
            "not a regular file (a pipe, socket or device)", where, "save the trace to a file first"
        )
    if not os.access(p, os.R_OK):
        raise TraceError("permission denied", where, "check the file's permissions")
    return p


def read_trace_bytes(path: str | os.PathLike[str]) -> tuple[bytes, int, list[str]]:
    """Read the file and undo gzip (by magic bytes, not the name).

    Returns (json_bytes, size_on_disk, warnings).
    """
    p = check_path(path)
    where = str(path)
    try:
        raw = p.read_bytes()
    except PermissionError:
        raise TraceError("permission denied", where, "check the file's permissions") from None
    except OSError as exc:
        raise TraceError(f"cannot read ({exc.strerror or exc})", where, "check the file") from None
    size = len(raw)
    warnings: list[str] = []
    if raw[:2] == GZIP_MAGIC:
        raw = gunzip(raw, where)
    if not raw.strip():
        raise TraceError(
            "file is empty" if size == 0 else "file holds only whitespace",
            where,
            "the profiler may have stopped before writing; capture the trace again",
        )
    for bom, encoding in _BOMS.items():
        if raw.startswith(bom):
            if encoding is None:
                raw = raw[len(bom) :]
                break
            raise TraceError(
                f"file is {encoding} text; traces are UTF-8",
                where,
                f"convert it, e.g. iconv -f {encoding} -t UTF-8",
            )
    return raw, size, warnings


def gunzip(data: bytes, where: str) -> bytes:
    """Decompress every gzip member; a stream cut short or corrupt is an error."""
    out: list[bytes] = []
    rest = data
    while rest:
        d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out.append(d.decompress(rest))
            out.append(d.flush())
        except zlib.error as exc:
            raise TraceError(
                f"gzip data is corrupt ({exc})",
                where,
                "the file is damaged; copy or capture it again",
            ) from None
        if not d.eof:
            raise TraceError(
                "gzip stream ends early (file cut short)",
                where,
                "copy the file again, or gunzip what is there and open the .json",
            )
        rest = d.unused_data
        if rest and rest[:2] != GZIP_MAGIC:
            if rest.strip(b"\x00"):  # trailing padding of zeros is common and harmless
                raise TraceError(
                    "unexpected bytes after the gzip stream", where, "the file is damaged"
                )
            break
    return b"".join(out)
