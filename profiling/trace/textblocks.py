"""A gzip trace's text, kept in the index as independently compressed blocks.

Lazy ``args`` read byte ranges of the trace's JSON text.  A gzip stream cannot be
entered in the middle, so the index keeps its own copy of the text, cut into
1 MiB blocks each compressed on its own (zlib level ``LEVEL``, in threads: zlib
lets go of the GIL): a range costs decompressing the one or two blocks it touches,
and the copy is about the size of the gzip file, not of the text (a 1 GB text kept
whole would be most of the index).

File layout: ``MAGIC``, then little-endian u64 text length, block size and block
count, then block count + 1 u64 offsets (from the end of the header) of the
compressed blocks, then the blocks.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

from profiling.cores import usable_cores

MAGIC = b"ATTNTXB1"
BLOCK_BYTES = 1 << 20
LEVEL = 3
"""zlib level of the blocks: on Kineto text (32 MB of the 200 MB benchmark trace, the
mi300 trace) 3 is faster than 1 (250 vs 170 MB/s) and 8-17 % smaller; 5 and up
cost twice the time."""
_HEAD = struct.Struct("<QQQ")


def write_blocks(path: Path, text: bytes | memoryview, block: int = BLOCK_BYTES) -> None:
    """Write ``text`` to ``path`` as compressed blocks (OSError if it cannot)."""
    # here, not at the top: a reopen (which only reads blocks) skips concurrent.futures
    # and the logging it imports
    from concurrent.futures import ThreadPoolExecutor

    view = memoryview(text)
    count = (len(view) + block - 1) // block
    pieces = [view[k * block:(k + 1) * block] for k in range(count)]
    workers = min(8, usable_cores())
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(lambda piece: zlib.compress(piece, LEVEL), pieces))
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    with path.open("wb") as f:
        f.write(MAGIC + _HEAD.pack(len(view), block, count))
        f.write(struct.pack(f"<{count + 1}Q", *offsets))
        for part in parts:
            f.write(part)


def read_blocks(path: str, lo: int, hi: int) -> bytes:
    """Bytes ``lo:hi`` of the text; OSError if the file is missing or damaged."""
    with open(path, "rb") as f:
        fd = f.fileno()
        head = os.pread(fd, len(MAGIC) + _HEAD.size, 0)
        if len(head) != len(MAGIC) + _HEAD.size or not head.startswith(MAGIC):
            raise OSError(f"{path}: not a text block file")
        size, block, count = _HEAD.unpack_from(head, len(MAGIC))
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
            data = os.pread(fd, end - start, base + start)
            try:
                plain = zlib.decompress(data)
            except zlib.error as exc:
                raise OSError(f"{path}: damaged block ({exc})") from None
            if len(plain) != min(block, size - (first + k) * block):
                raise OSError(f"{path}: damaged block (wrong length)")
            out += plain
        skip = lo - first * block
        return bytes(out[skip:skip + (hi - lo)])
