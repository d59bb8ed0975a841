"""The index format version moves with what the index stores.

``cache.LOADER_VERSION`` is part of every index's key, so an index written by an
older loader is never read as current.  That only works if the version is bumped
whenever what is stored changes: its files, their columns and dtypes, the meta
fields, or the values the loader puts in them.  This test keeps a fingerprint of
all that, taken from the index of one reference trace, beside each version.

When it fails: bump ``LOADER_VERSION`` in ``profiling/trace/cache.py`` and add
the new version's fingerprint below (the failure prints it).  Never edit an
existing entry: a changed index under an old version number is what this guards
against.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from profiling.trace import cache
from profiling.trace.cache_store import ENTRY_FILE
from profiling.trace.loader import load_trace
from profiling.trace.model import Group, Lane
from tests.test_trace_devices import accelerator_trace
from tests.test_trace_loader import EVENTS

FINGERPRINTS = {
    6: "7ccd0a8bcff6702ec23ea4489524a0376323fa4d87cda3dc9fb6645285ccd424",
    7: "5f7afb43d9cd1bac8f1618ebd4615992afcdfa397f90c33e9253cd919e98f6c3",  # gzip text as blocks
    8: "1e2d037d83b9310463afd87a2fa7a293cef75d1c9fa1e850fae6f1fac7a0c6cf",  # ties by External id
    9: "ad50c5c3ce396d77b4cc9da0f1c100322d51352d8eabfe70e050e14b1f0fba74",  # thread/stream split
    10: "966599df2c5ba0d60304d5eb38fd7a4353402985e8a9719f7d354a47c490e8c0",  # op_input column
    11: "dfa6b1e58eef96e2379808c686555a02874f08746059199ad69f2789854d8a6a",  # driver launches
    12: "0d983bfab3d342a51244a1fd6c8e0f491f4a28acd3fca1b091304a631a20965d",  # op before its call
    13: "6b932dbad259abc9e56b0dadeab7825a52620afe76943871c4ad8e1c51f48b57",  # stream from the lane
    14: "02e1840e8de8e119bb2f9af1a741931c5371953dbbfa9f8fdccb9a309b8d000d",  # narrow ids
    15: "b3c318112d4269933ca4bb9e81f0940f10049720bd3878a6520e4dbcb57e14a4",  # old annotations
    16: "fcc19ffaaa999af4f7131a3c86c9637848a7ad878aa168f8566ec3a019e6b246",  # 2021 User spans
    17: "65e0cf259adaab22e9cebbe987f86e9282fb4e8b3be58e134c5abf3e1c912be6",  # bounds in meta
}
"""LOADER_VERSION -> fingerprint of the index format and of the reference trace's index."""


def _reference(added: list[dict[str, object]]) -> bytes:
    # Epoch nanoseconds (exact time), a second process with an MTIA device, B/E pairs,
    # flows, instants, metadata: every column and table of the index has content.
    return json.dumps({"schemaVersion": 1, "traceEvents": EVENTS + [
        dict(e, pid=e["pid"] + 1000 if e["pid"] != 1 else 7, ts=e.get("ts", 0) + 1, tid=5)
        for e in accelerator_trace("mtia_runtime", "mtia_ccp_events")
    ] + added}).replace('"ts": 100.0,', '"ts": 1712195495505828.904,').encode()


REFERENCE_TEXT = _reference([])
"""The reference trace (also the analysis store's, tests/test_analysis_store_version.py)."""

ADDED = [
    # An exact (thread, start, duration) tie written child first, which the loader
    # orders by External id since version 8.
    {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 9, "ts": 300, "dur": 4,
     "args": {"External id": ext}}
    for name, ext in (("detach", 41), ("aten::detach", 40))
]
ADDED_9 = [
    # A kernel on that thread's (pid, tid) (a thread id equal to a stream id, python as
    # PID 1 on GPU 1): a lane of its own since version 9.
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 9, "ts": 301, "dur": 2,
     "args": {"stream": 9, "device": 1}},
]
ADDED_11 = [
    # A driver-level launch of an XPU build: a runtime call (kind) since version 11.
    {"ph": "X", "cat": "xpu_driver", "name": "zeCommandListAppendLaunchKernel", "pid": 1,
     "tid": 9, "ts": 302, "dur": 1, "args": {"correlation": 77}},
]
ADDED_12 = [
    # An op made of one launch, the call written first: the op is the parent since 12.
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 9,
     "ts": 310, "dur": 3, "args": {"correlation": 78, "External id": 42}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::fill_", "pid": 1, "tid": 9, "ts": 310,
     "dur": 3, "args": {"External id": 42}},
]
ADDED_13 = [
    # A kernel written without its stream arg: its lane's tid is its stream since 13.
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 9, "ts": 320, "dur": 2,
     "args": {"device": 1}},
]
ADDED_14 = [
    # A launch whose correlation is past int32: since 14 the id columns are int32 where
    # every value fits, so this trace's correlation stays int64 and the others narrow.
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 9,
     "ts": 330, "dur": 2, "args": {"correlation": 2**33, "External id": 43}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 9, "ts": 331, "dur": 1,
     "args": {"stream": 9, "device": 1, "correlation": 2**33}},
]
OLD_TEXT_15 = json.dumps({"traceEvents": [
    # Kineto of 2021: every CPU range under "Operator", a record_function range among
    # them; since 15 it is a user annotation.  A trace of its own: the rule reads only
    # traces with no cpu_op or user_annotation category.
    {"ph": "X", "cat": "Operator", "name": "attn_fwd", "pid": 1, "tid": 1, "ts": 10,
     "dur": 50, "args": {"External id": 1}},
    {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 12,
     "dur": 20, "args": {"External id": 2}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 14,
     "dur": 5, "args": {"correlation": 7, "external id": 2}},
    {"ph": "X", "cat": "Kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 20,
     "dur": 9, "args": {"correlation": 7, "stream": 7, "device": 0}},
]}).encode()
"""From version 15 on the fingerprint also covers this old-format trace's index."""
OLD_ADDED_16 = [
    # Kineto of 2021's GPU user annotation: category "User", tid "stream 7 user"; since
    # 16 a gpu annotation (a GPU lane), not an "other" event.
    {"ph": "X", "cat": "User", "name": "attn_fwd", "pid": 0, "tid": "stream 7 user",
     "ts": 19, "dur": 12, "args": {"External id": 1}},
]
OLD_TEXT = json.dumps({"traceEvents": json.loads(OLD_TEXT_15)["traceEvents"] + OLD_ADDED_16}
                      ).encode()
"""The old-format trace of the fingerprint: ``OLD_TEXT_15``, with ``OLD_ADDED_16`` from 16 on."""

INDEX_TEXT = _reference(ADDED + ADDED_9 + ADDED_11 + ADDED_12 + ADDED_13 + ADDED_14)
"""What the index fingerprint is taken of: the reference trace with ``ADDED`` (from
version 8 on), ``ADDED_9`` (from 9 on), ``ADDED_11`` (from 11 on), ``ADDED_12``
(from 12 on), ``ADDED_13`` (from 13 on) and ``ADDED_14`` (from 14 on); the
fingerprints before 8 are of ``REFERENCE_TEXT``."""


def schema() -> dict[str, object]:
    """What the index is made of, as the code declares it."""
    return {
        "columns": list(cache.COLUMN_DTYPES),
        "dtypes": {name: str(dtype.__name__) for name, dtype in cache.COLUMN_DTYPES.items()},
        "meta": [(f, str(t)) for f, t in zip(cache._Meta.__struct_fields__,
                                             cache._Meta.__annotations__.values(), strict=True)],
        "lane": [(f.name, str(f.type)) for f in dataclasses.fields(Lane)],
        "group": [(f.name, str(f.type)) for f in dataclasses.fields(Group)],
        "files": ["meta.json", cache.GZIP_TEXT, cache.SUFFIX],
    }


def index_fingerprint(folder: Path) -> str:
    """sha256 of the schema and of every file of the index (meta without its key,
    which holds the file's mtime; not the entry's ``entry.json``, which names the
    trace's path)."""
    digest = hashlib.sha256(json.dumps(schema(), sort_keys=True).encode())
    for item in sorted(folder.iterdir()):
        if item.name == ENTRY_FILE:
            continue  # the cache folder's bookkeeping (which trace, when used), not the index
        digest.update(item.name.encode())
        data = item.read_bytes()
        if item.name == "meta.json":
            meta = msgspec.json.decode(data)
            meta.pop("key")
            data = json.dumps(meta, sort_keys=True).encode()
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


@pytest.fixture
def reference_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "user-cache"))
    path = tmp_path / "reference.json"
    path.write_bytes(INDEX_TEXT)
    load_trace(path, min_cache_bytes=0)
    folder = cache.cache_dirs(path)[0]
    assert (folder / "meta.json").is_file()
    return folder


def old_format_fingerprint(tmp_path: Path) -> str:
    """``index_fingerprint`` of ``OLD_TEXT``'s index (the cache folder is the test's)."""
    path = tmp_path / "old.json"
    path.write_bytes(OLD_TEXT)
    load_trace(path, min_cache_bytes=0)
    return index_fingerprint(cache.cache_dirs(path)[0])


def test_the_index_changes_only_with_a_version_bump(reference_index: Path, tmp_path: Path):
    got = index_fingerprint(reference_index)
    if cache.LOADER_VERSION >= 15:
        both = (got + old_format_fingerprint(tmp_path)).encode()
        got = hashlib.sha256(both).hexdigest()
    assert cache.LOADER_VERSION == max(FINGERPRINTS), (
        f"LOADER_VERSION is {cache.LOADER_VERSION}: add its fingerprint, {got!r}, here"
    )
    assert got == FINGERPRINTS[cache.LOADER_VERSION], (
        "the sidecar index changed (files, columns, dtypes, meta fields or stored values) "
        f"without a new LOADER_VERSION: bump it in cache.py and add {{{cache.LOADER_VERSION + 1}:"
        f" {got!r}}} to FINGERPRINTS"
    )


def test_each_version_has_its_own_fingerprint():
    assert len(set(FINGERPRINTS.values())) == len(FINGERPRINTS)


def test_the_fingerprint_sees_a_changed_value(reference_index: Path):
    """The guard can fail: one byte of one column changes the fingerprint."""
    before = index_fingerprint(reference_index)
    column = reference_index / "ts_ns.npy"
    data = bytearray(column.read_bytes())
    data[-1] ^= 1
    column.write_bytes(bytes(data))
    assert index_fingerprint(reference_index) != before
