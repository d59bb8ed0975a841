"""Analysis results kept with the trace's index, so a reopen maps them instead of
recomputing them.

Every command and view needs the same parts of ``AnalysedTrace`` (the op tree,
the links, the regions and their instances, the op table, the launch chains):
on a 1 GB trace they cost seconds, on every open.  Once a part is computed it is
written into the trace's index entry (``profiling.trace.cache``: the user cache
folder, or beside the trace with ``ATTN_TUI_CACHE=beside``), one subfolder per
part, ``analysis-<ANALYSIS_VERSION>-<part>``, holding its arrays as ``.npy``
files and a ``part.json`` with the rest.  A reopen maps the arrays
(``mmap_mode="r"``) and decodes the small JSON.

Never stale: ``part.json`` carries the index's key (which hashes the trace's
size, mtime, ctime, first and last MiB and ``LOADER_VERSION``), ``ANALYSIS_VERSION``
(in the key and the folder's name) and a hash of the analysis and loader source
(``code_digest``: an edit that changes a result without bumping the version
still never reads the old result); a part whose key differs is ignored and
rewritten, and so is one whose arrays do not match the CRC-32 stored with them (a
disk fault), or whose values would index outside the trace (``analysis_parts``).
Never fatal: a part that cannot be read is recomputed, one that cannot be written
is not.  Atomic: a part is written into a temp folder, then
renamed into place; of two writers one wins.  A trace with no index (small,
``--no-cache``, built in memory) has no store: everything is computed, as before.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from profiling.trace.cache import index_of, stamp
from profiling.trace.cache_store import TMP_PREFIX, cap_bytes, folder_bytes
from profiling.trace.column_threads import in_threads
from profiling.trace.model import Trace

ANALYSIS_VERSION = 8  # 7: a profiler step's GPU work on every thread of its process;
# 8: row indexes of the ops, links and chains stored as int32 where they fit
"""Bump when an analysis part changes what it computes or how it is stored
(``tests/test_analysis_store_version.py`` holds a fingerprint per version)."""

PART_PREFIX = f"analysis-{ANALYSIS_VERSION}-"
PART_FILE = "part.json"


class StoredPart(msgspec.Struct):
    """``part.json``: which index and version the part belongs to, its JSON half, and
    the CRC-32 of each array (a part damaged on disk is recomputed, never read)."""

    key: str
    doc: Any = None
    crc: dict[str, int] = {}


def _crc(array: np.ndarray) -> int:
    """CRC-32 of an array's bytes (about 1 ms per MB: tens of ms for a 1 GB trace)."""
    return zlib.crc32(np.ascontiguousarray(array).view(np.uint8).reshape(-1).data)


_READ_BYTES = 1 << 20


def _checked_map(path: Path, crc: int) -> np.ndarray:
    """The ``.npy`` at ``path`` mapped read-only, once the CRC-32 of its data is ``crc``
    (else ValueError).  The check reads the file through a small buffer, not through
    the mapping: the pages it reads stay in the page cache but out of this process's
    memory, so a command maps in only the parts of a column it uses (a 1 GB trace's
    links are 75 MB; ``stats`` reads a tenth of them)."""
    with open(path, "rb", buffering=0) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:  # 3.0 is for field names this store never writes
            raise ValueError(f"npy format {version}")
        if fortran or dtype.hasobject:
            raise ValueError("not an array this store writes")
        offset = f.tell()
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        buffer = bytearray(min(_READ_BYTES, max(size, 1)))
        view, seen, left = memoryview(buffer), 0, size
        while left:
            n = f.readinto(view[: min(left, len(buffer))])
            if not n:
                raise ValueError("stored array cut short")
            seen = zlib.crc32(view[:n], seen)
            left -= n
        if seen != crc:
            raise ValueError("a stored array does not match its checksum")
        if size == 0:
            return np.zeros(shape, dtype=dtype)
        return np.memmap(f, dtype=dtype, mode="r", offset=offset, shape=shape).view(np.ndarray)


def _rows(files: dict[str, Path]) -> int:
    """About how many rows the stored arrays hold (8 bytes a row), for ``in_threads``
    to decide whether threads pay."""
    return sum(p.stat().st_size for p in files.values()) // 8


def part_folder_name(part: str) -> str:
    """The subfolder of a part; region names (any text) are hashed into the name."""
    if part.replace("_", "").isalnum():
        return PART_PREFIX + part
    digest = hashlib.sha256(part.encode("utf-8", "surrogateescape")).hexdigest()
    return PART_PREFIX + "h" + digest[:24]


@functools.cache
def code_digest() -> str:
    """A hash of the analysis and loader source: a part stored by other code (an
    edit that forgot to bump ``ANALYSIS_VERSION``, another checkout) is not read.
    Once per process (``source_digest`` of this package)."""
    return source_digest(Path(__file__).resolve().parent.parent, ("analysis", "trace"))


def source_digest(root: Path, folders: tuple[str, ...]) -> str:
    """A hash of the names and stamps (size, mtime and ctime: ``cache.stamp``) of the
    ``.py`` files in ``folders`` of ``root``.  WHY stamps, not bytes: reading and
    hashing 90 files was 5-6 ms of every reopened command; every write of a file
    moves its ctime, which no program can set back, so its stamp changes whenever
    its bytes may have (a checkout, a copy or a chmod moves it too: a recompute)."""
    h = hashlib.sha256()
    for folder in folders:
        for source in sorted((root / folder).glob("*.py")):
            try:
                st = source.stat()
                h.update(f"{source.name}\0{st.st_size}\0{stamp(st)}\0".encode())
            except OSError:
                h.update(f"{source.name}\0?\0".encode())
    return h.hexdigest()[:16]


def _store_key(index_key: str) -> str:
    return f"{index_key}:analysis-{ANALYSIS_VERSION}:{code_digest()}"


def available(trace: Trace) -> bool:
    """Whether ``trace`` has an index to keep analysis results in."""
    return index_of(trace) is not None and not os.environ.get("ATTN_TUI_NO_ANALYSIS_STORE")


def load(trace: Trace, part: str) -> tuple[dict[str, np.ndarray], Any] | None:
    """The stored arrays (mapped, read-only) and JSON of ``part``, or None if there is
    no current copy.  A damaged copy is removed (it is rewritten once recomputed)."""
    found = index_of(trace)
    if found is None or os.environ.get("ATTN_TUI_NO_ANALYSIS_STORE"):
        return None
    folder, index_key = found
    where = folder / part_folder_name(part)
    try:
        stored = msgspec.json.decode((where / PART_FILE).read_bytes(), type=StoredPart)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if stored.key != _store_key(index_key):
        return None
    try:
        files = {p.name[:-4]: p for p in where.iterdir() if p.name.endswith(".npy")}
        if set(files) != set(stored.crc):
            raise ValueError("stored arrays missing or extra")
        names = sorted(files)
        checks = [functools.partial(_checked_map, files[n], stored.crc[n]) for n in names]
        # side by side: the reads and the CRCs release the GIL (one after the other,
        # 19 ms of the reopened `stats` of a 1 GB trace on the H200)
        arrays = dict(zip(names, in_threads(*checks, rows=_rows(files)), strict=True))
    except Exception:  # numpy's header parser alone raises half a dozen types
        shutil.rmtree(where, ignore_errors=True)
        return None
    return arrays, stored.doc


def save(trace: Trace, part: str, arrays: dict[str, np.ndarray], doc: Any = None) -> bool:
    """Write ``part`` into the trace's index entry (atomically); False if it has none
    or the write failed (never raised: the result is already in memory)."""
    found = index_of(trace)
    if found is None or os.environ.get("ATTN_TUI_NO_ANALYSIS_STORE"):
        return False
    folder, index_key = found
    where = folder / part_folder_name(part)
    tmp: Path | None = None
    try:
        size = sum(int(a.nbytes) for a in arrays.values())
        if not folder.is_dir() or folder_bytes(folder) + size > cap_bytes():
            return False
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=folder))
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        crc = {name: _crc(array) for name, array in arrays.items()}
        (tmp / PART_FILE).write_bytes(
            msgspec.json.encode(StoredPart(_store_key(index_key), doc, crc)))
        try:
            os.rename(tmp, where)
        except OSError:  # there already: another writer's, or a stale one
            if load(trace, part) is not None:
                shutil.rmtree(tmp, ignore_errors=True)
                return True
            shutil.rmtree(where, ignore_errors=True)
            os.rename(tmp, where)
        return True
    except (OSError, TypeError, ValueError, OverflowError, msgspec.EncodeError):
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        return False
