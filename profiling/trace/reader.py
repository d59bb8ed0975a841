"""Path -> ``Source``: the trace's JSON text, mapped (plain files) or decompressed (gzip).

Everything here turns an OS or codec failure into one ``TraceError`` line that
says what is wrong and what to do.  Files are only ever opened for reading; a
plain file is memory-mapped so its pages cost nothing until they are parsed, and
the lazy ``args`` reader can come back to them later.
"""

from __future__ import annotations

import mmap
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from profiling.errors import TraceError
from profiling.trace.textblocks import read_blocks

GZIP_MAGIC = b"\x1f\x8b"
_BOMS = {
    b"\xef\xbb\xbf": None,  # UTF-8 BOM: harmless, skipped
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


@dataclass
class Source:
    """The JSON text of one trace and the identity of the file it came from."""

    path: str
    text: bytes | mmap.mmap  # the JSON text (decompressed when the file is gzip)
    start: int  # first byte of the JSON text within ``text`` (after a BOM)
    size: int  # bytes on disk
    mtime_ns: int
    gzipped: bool
    gzip_cut_short: bool = False  # the gzip stream ended early: ``text`` is what it held


def check_path(path: str | os.PathLike[str]) -> os.stat_result:
    """stat() of a regular, readable file, or a TraceError saying why not."""
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
    return st


def open_source(path: str | os.PathLike[str]) -> Source:
    """Open a trace file for decoding: map it, or decompress it if it is gzip."""
    st = check_path(path)
    where = os.fspath(path)
    text: bytes | mmap.mmap
    cut = False
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            if head[:2] == GZIP_MAGIC:
                f.seek(0)
                text, cut = gunzip_salvaged(f.read(), where)
            elif st.st_size == 0:
                text = b""
            else:
                text = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except PermissionError:
        raise TraceError("permission denied", where, "check the file's permissions") from None
    except OSError as exc:
        raise TraceError(f"cannot read ({exc.strerror or exc})", where, "check the file") from None
    start = _check_text(text, where, len(text), head[:2] == GZIP_MAGIC)
    return Source(where, text, start, st.st_size, st.st_mtime_ns, head[:2] == GZIP_MAGIC, cut)


def _check_text(text: bytes | mmap.mmap, where: str, size: int, gzipped: bool = False) -> int:
    """Reject empty and non-UTF-8 text; return where the JSON starts (after a BOM)."""
    head = bytes(text[:4])
    start = 0
    for bom, encoding in _BOMS.items():
        if head.startswith(bom):
            if encoding is None:
                start = len(bom)
                break
            _raise_wide(encoding, where)
    encoding = _wide_encoding(head) if start == 0 else None
    if encoding is not None:
        _raise_wide(encoding, where)
    if len(text) == start or not _has_non_space(text, start):
        if size == 0:
            what = "gzip file holds no data" if gzipped else "file is empty"
        elif len(text) == start:
            what = "file holds only a byte-order mark"
        elif _only_zero_bytes(text, start):
            what = "file holds only zero bytes (it was never written, e.g. after a crash)"
        else:
            what = "file holds only whitespace"
        raise TraceError(
            what, where, "the profiler may have stopped before writing; capture the trace again"
        )
    return start


def _raise_wide(encoding: str, where: str) -> None:
    raise TraceError(
        f"file is {encoding} text; traces are UTF-8",
        where,
        f"convert it, e.g. iconv -f {encoding} -t UTF-8",
    )


def _wide_encoding(head: bytes) -> str | None:
    """UTF-16/32 without a BOM, told by where the zero bytes of ASCII text fall."""
    if len(head) < 4 or 0 not in head or head.strip(b"\x00")[:1] not in (b"{", b"[", b" ", b"\n"):
        return None
    zeros = (head[0] == 0, head[1] == 0, head[2] == 0, head[3] == 0)
    return {
        (False, True, True, True): "UTF-32LE",
        (True, True, True, False): "UTF-32BE",
        (False, True, False, True): "UTF-16LE",
        (True, False, True, False): "UTF-16BE",
    }.get(zeros)


def _has_non_space(text: bytes | mmap.mmap, start: int = 0) -> bool:
    step = 1 << 20
    for pos in range(start, len(text), step):
        if bytes(text[pos : pos + step]).strip(b" \t\r\n\x00"):
            return True
    return False


def _only_zero_bytes(text: bytes | mmap.mmap, start: int) -> bool:
    step = 1 << 20
    for pos in range(start, len(text), step):
        if bytes(text[pos : pos + step]).strip(b"\x00"):
            return False
    return True


def gunzip(data: bytes, where: str) -> bytes:
    """Decompress every gzip member (a stream cut short gives what it holds)."""
    return gunzip_salvaged(data, where)[0]


def gunzip_salvaged(data: bytes, where: str) -> tuple[bytes, bool]:
    """Decompress every gzip member; also say whether the stream ended early.

    A stream cut short (a copy or download stopped, a writer killed) gives every
    byte it holds, as a plain file cut short does: the JSON reader then keeps
    every complete event.  Corrupt data, or bytes after the stream that are not
    another member, are errors; a stream cut before any of its data is one too.
    """
    out: list[bytes] = []
    rest = data
    cut = False
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
            cut = True
            break
        rest = d.unused_data
        if rest and rest[:2] != GZIP_MAGIC:
            if rest.strip(b"\x00"):  # trailing padding of zeros is common and harmless
                raise TraceError(
                    "unexpected bytes after the gzip stream", where, "the file is damaged"
                )
            break
    text = b"".join(out)
    if cut and not text:
        raise TraceError(
            "gzip stream ends early, before any of its data (file cut short)",
            where,
            "copy the file again, or capture the trace again",
        )
    return text, cut


def populate_pages(text: bytes | mmap.mmap, lo: int, hi: int) -> None:
    """Map the file pages of ``text[lo:hi]`` in one system call before they are copied.

    Touching a fresh mapping page by page costs a fault per 4 KiB: copying a 16 MB
    chunk out of it took about 10 ms, against under 3 ms once populated
    (``MADV_POPULATE_READ``, Linux 5.14; elsewhere this does nothing)."""
    if not isinstance(text, mmap.mmap):
        return
    page = mmap.PAGESIZE
    start = (lo // page) * page
    length = min(hi, len(text)) - start
    if length > 0:
        try:
            text.madvise(getattr(mmap, "MADV_POPULATE_READ", _MADV_POPULATE_READ), start, length)
        except (OSError, ValueError):
            pass  # an older kernel: the copy faults the pages in as before


_MADV_POPULATE_READ = 22  # Linux's value; Python's mmap names it from 3.13 on


def release_pages(text: bytes | mmap.mmap, lo: int, hi: int) -> None:
    """Let the kernel drop mapped pages this process has finished parsing.

    File pages stay in the page cache (a later read is cheap) but stop counting
    in this process's resident memory, which keeps a 1 GB load near the size of
    its columns rather than the size of the file.
    """
    if not isinstance(text, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return
    page = mmap.PAGESIZE
    start = (lo // page) * page
    length = min(hi, len(text)) - start
    if length > 0:
        try:
            text.madvise(mmap.MADV_DONTNEED, start, length)
        except (OSError, ValueError):
            pass


class TextSpans:
    """Byte ranges of a loaded trace's JSON text, read again on demand (lazy ``args``).

    The file is not kept mapped: a mapping kills the process (SIGBUS) when the file
    is truncated while the trace is open, e.g. by a profiler writing it again.  Each
    read checks the file is the one that was loaded (size and mtime) and returns
    None when it is not, since the loaded offsets mean nothing in a changed file.
    Gzip text is kept decompressed (it cannot be read in place): in memory after a
    parse, or in the cache index's ``text_file`` after a reopen.
    """

    def __init__(
        self,
        path: str,
        size: int,
        mtime_ns: int,
        text: bytes | None = None,
        gzipped: bool = False,
        text_file: str | None = None,
    ) -> None:
        self.path = path
        self._identity = (size, mtime_ns)
        self._text = text
        self._gzipped = gzipped or text is not None
        self._text_file = text_file

    def read(self, lo: int, hi: int) -> bytes | None:
        if self._text is not None:
            return bytes(self._text[lo:hi])
        if self._text_file is not None:
            return self._read_decompressed_copy(lo, hi)
        try:
            # O_NONBLOCK: a FIFO put in the file's place must not block the reader.
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with open(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns) != self._identity:
                    return None
                if self._gzipped:
                    self._text = gunzip(f.read(), self.path)
                    return bytes(self._text[lo:hi])
                return os.pread(f.fileno(), hi - lo, lo)
        except (OSError, TraceError):
            return None

    def _read_decompressed_copy(self, lo: int, hi: int) -> bytes | None:
        try:
            st = os.stat(self.path)
            if (st.st_size, st.st_mtime_ns) != self._identity:
                return None
            return read_blocks(self._text_file or "", lo, hi)  # the index's text blocks
        except OSError:
            return None
