"""A gzip trace's text, kept in the index as independently compressed blocks.

Lazy ``args`` read byte ranges of the trace's JSON text.  A gzip stream cannot be
entered in the middle, so the index keeps its own copy of the text, cut into
1 MiB blocks each compressed on its own (in threads: the compressors let go of the
GIL): a range costs decompressing the one or two blocks it touches (about 3 ms a
block), and the copy is smaller than the gzip file, not the size of the text (a
1 GB text kept whole would be most of the index).

The blocks are xz (LZMA2 preset 0, a CRC-32 each, so a damaged block is found):
on Kineto text they come to 0.025-0.050x the text, where zlib level 3 gave
0.047-0.100x, and the index has to stay within 0.3x of the text with its columns
(about 50 bytes an event) and analysis beside them.  They cost three times zlib's
time to write (about 100 MB/s a core).  A Python built without ``lzma`` writes zlib
blocks instead; both are read.

File layout: a magic naming the codec (``XZ_MAGIC`` or ``ZLIB_MAGIC``), then
little-endian u64 text length, block size and block count, then block count + 1 u64
offsets (from the end of the header) of the compressed blocks, then the blocks.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from profiling.cores import usable_cores

ZLIB_MAGIC = b"ATTNTXB1"
XZ_MAGIC = b"ATTNTXB2"
BLOCK_BYTES = 1 << 20
ZLIB_LEVEL = 3
"""zlib level of the blocks where ``lzma`` is missing: on Kineto text 3 is faster
than 1 (250 vs 170 MB/s) and 8-17 % smaller; 5 and up cost twice the time."""
XZ_PRESET = 0
"""xz preset of the blocks: on the benchmark trace's text 1 is 9 % smaller and a
third slower; 6 (xz's default) is 25 % smaller and takes 14 times as long."""
_HEAD = struct.Struct("<QQQ")


def _lzma() -> ModuleType | None:
    """The ``lzma`` module; None in a Python built without liblzma."""
    try:
        import lzma
    except ImportError:
        return None
    return lzma


def _compressor() -> tuple[bytes, Callable[[bytes | memoryview], bytes]]:
    """The magic and the block compressor this Python can write."""
    lzma = _lzma()
    if lzma is None:
        return ZLIB_MAGIC, lambda piece: zlib.compress(piece, ZLIB_LEVEL)
    return XZ_MAGIC, lambda piece: lzma.compress(piece, format=lzma.FORMAT_XZ,
                                                 check=lzma.CHECK_CRC32, preset=XZ_PRESET)


def _decompress(magic: bytes, data: bytes) -> bytes:
    """A block's text; OSError if it is damaged or its codec is missing here."""
    codec: Callable[[bytes], bytes]
    if magic == ZLIB_MAGIC:
        codec, error = zlib.decompress, zlib.error
    else:
        lzma = _lzma()
        if lzma is None:
            raise OSError("xz blocks, and this Python has no lzma module")
        codec, error = lambda d: lzma.decompress(d, format=lzma.FORMAT_XZ), lzma.LZMAError
    try:
        return codec(data)
    except error as exc:
        raise OSError(f"damaged block ({exc})") from None


def write_blocks(path: Path, text: bytes | memoryview, block: int = BLOCK_BYTES) -> None:
    """Write ``text`` to ``path`` as compressed blocks (OSError if it cannot)."""
    # here, not at the top: a reopen (which only reads blocks) skips concurrent.futures
    # and the logging it imports
    from concurrent.futures import ThreadPoolExecutor

    magic, compress = _compressor()
    view = memoryview(text)
    count = (len(view) + block - 1) // block
    pieces = [view[k * block:(k + 1) * block] for k in range(count)]
    with ThreadPoolExecutor(usable_cores()) as pool:
        parts = list(pool.map(compress, pieces))
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    with path.open("wb") as f:
        f.write(magic + _HEAD.pack(len(view), block, count))
        f.write(struct.pack(f"<{count + 1}Q", *offsets))
        for part in parts:
            f.write(part)


def read_blocks(path: str, lo: int, hi: int) -> bytes:
    """Bytes ``lo:hi`` of the text; OSError if the file is missing or damaged."""
    with open(path, "rb") as f:
        fd = f.fileno()
        head = os.pread(fd, len(XZ_MAGIC) + _HEAD.size, 0)
        magic = head[:len(XZ_MAGIC)]
        if len(head) != len(XZ_MAGIC) + _HEAD.size or magic not in (XZ_MAGIC, ZLIB_MAGIC):
            raise OSError(f"{path}: not a text block file")
        size, block, count = _HEAD.unpack_from(head, len(XZ_MAGIC))
        if block <= 0 or count != (size + block - 1) // block or count > (1 << 40) // block:
            raise OSError(f"{path}: damaged header")
        lo, hi = max(0, lo), min(hi, size)
        if hi <= lo:
            return b""
        first, last = lo // block, (hi - 1) // block
        base = len(head) + 8 * (count + 1)
        raw = os.pread(fd, 8 * (last - first + 2), len(head) + 8 * first)
        if len(raw) != 8 * (last - first + 2):
            raise OSError(f"{path}: cut short")
        offsets = struct.unpack(f"<{last - first + 2}Q", raw)
        out = bytearray()
        for k in range(last - first + 1):
            start, end = offsets[k], offsets[k + 1]
            if end < start:
                raise OSError(f"{path}: damaged offsets")
            try:
                plain = _decompress(magic, os.pread(fd, end - start, base + start))
            except OSError as exc:
                raise OSError(f"{path}: {exc}") from None
            if len(plain) != min(block, size - (first + k) * block):
                raise OSError(f"{path}: damaged block (wrong length)")
            out += plain
        skip = lo - first * block
        return bytes(out[skip:skip + (hi - lo)])
