"""The first bytes of a gzip file's text, also when the file was cut short.

Sniffing a trace (is it one? which rank?) reads its head.  ``GzipFile.read(n)``
raises ``EOFError`` when the stream ends before ``n`` bytes and before its
end-of-stream marker, which is what a rank file cut mid-write looks like when its
whole text is shorter than ``n``: the sniff then saw nothing, and a folder's cut
gzip rank was dropped without a word (the loader itself reads what such a file
holds, ``reader.gunzip_salvaged``).  This gives what the stream holds, up to ``n``.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO

READ = 1 << 16


def gzip_head(f: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes of the text of the gzip file ``f`` (from its start), across
    members; a stream cut short gives what it holds.  Corrupt data raises
    ``zlib.error``."""
    f.seek(0)
    out = bytearray()
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    pending = b""
    while len(out) < n:
        if not pending:
            pending = f.read(READ)
            if not pending:
                break  # cut short (or the end): what it held
        out += d.decompress(pending, n - len(out))
        pending = d.unconsumed_tail
        if d.eof:  # another member may follow
            pending = d.unused_data or f.read(READ)
            if pending[:2] != b"\x1f\x8b":
                break
            d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    return bytes(out)
