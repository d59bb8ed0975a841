"""The analysis store's version moves with what it stores.

``analysis_store.ANALYSIS_VERSION`` is part of every stored part's key and folder
name, so results written by an older analysis are never read as current.  That
only works if the version is bumped whenever what is stored changes: the parts,
their arrays and dtypes, their JSON, or the values the analysis computes.  This
test keeps a fingerprint of all that, taken from the parts stored for one
reference trace (the index version test's), beside each version.

When it fails: bump ``ANALYSIS_VERSION`` in ``profiling/analysis/analysis_store.py``
and add the new version's fingerprint below (the failure prints it).  Never edit an
existing entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from profiling.analysis import analysis_parts, analysis_store
from profiling.analysis.analysed import PARTS, AnalysedTrace
from profiling.analysis.findings import trace_findings
from profiling.analysis.regions import RegionInstance
from profiling.trace import cache
from profiling.trace.loader import load_trace
from tests.test_trace_index_version import REFERENCE_TEXT

FINGERPRINTS = {
    1: "939fb62c547f5f058f25b50fed5e2045bbde106d9b322c8f89e03808e2fc16f9",
    2: "194e971663d3e4c54ae36809b80e8c8d3962a220f0d74a06a7c8a94b44a0916b",  # + op_dtypes
    3: "d548ad7dbf642148800b7136063de09a649b44f7a6b732d515726e2a1053a5f7",  # + findings
    4: "90b4261d20d2b82a9868a6db0ba4787e6277e71e83e0e7a8b52cbd4368744766",  # + CRC-32 per array
    5: "5f924edb9c329f3c9e541f51b9f70bbe3b60ecdbd6b03114f1ec1d98617ca29a",  # c10d ranges not ops
    6: "66925a5f80b74de5be73056f0798034f03f61a12f887aee41e751c44da4e803d",  # flows: innermost slice
    7: "9ef6d4f9aef3bbdad0d0c38f90d8c791cdce05f414ef40c70fc27cf87aaafb99",  # steps: whole process
    8: "0a27b5908c810cebe3bdb48376e0a7b278a0f1909ebc67794346e771231834ee",  # int32 row indexes
}
"""ANALYSIS_VERSION -> fingerprint of the stored parts of the reference trace."""


def schema() -> dict[str, object]:
    return {
        "parts": sorted(analysis_parts.CODECS),
        "instance_columns": list(analysis_parts._INSTANCE_INTS),
        "key_average_fields": list(analysis_parts.key_average_fields()),
        "link_fields": list(analysis_parts._LINK_FIELDS),
        "region_instance": [(f.name, str(f.type)) for f in dataclasses.fields(RegionInstance)],
    }


def store_fingerprint(folder: Path) -> str:
    """sha256 of the schema and of every stored part's files (``part.json`` without
    its key, which holds the trace's mtime)."""
    digest = hashlib.sha256(json.dumps(schema(), sort_keys=True).encode())
    parts = sorted(p for p in folder.iterdir() if p.name.startswith("analysis-"))
    assert parts, "no part stored"
    for part in parts:
        for item in sorted(part.iterdir()):
            digest.update(f"{part.name}/{item.name}".encode())
            data = item.read_bytes()
            if item.name == analysis_store.PART_FILE:
                doc = msgspec.json.decode(data)
                doc.pop("key")
                data = json.dumps(doc, sort_keys=True).encode()
            digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


@pytest.fixture
def reference_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "user-cache"))
    path = tmp_path / "reference.json"
    path.write_bytes(REFERENCE_TEXT)
    a = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    for name in PARTS:
        getattr(a, name)
    a.instances("aten::scaled_dot_product_attention")
    trace_findings(a)
    return cache.cache_dirs(path)[0]


def test_the_store_changes_only_with_a_version_bump(reference_store: Path):
    got = store_fingerprint(reference_store)
    assert analysis_store.ANALYSIS_VERSION == max(FINGERPRINTS), (
        f"ANALYSIS_VERSION is {analysis_store.ANALYSIS_VERSION}: add its fingerprint, "
        f"{got!r}, here"
    )
    assert got == FINGERPRINTS[analysis_store.ANALYSIS_VERSION], (
        "the stored analysis changed (parts, arrays, dtypes, JSON or values) without a new "
        "ANALYSIS_VERSION: bump it in analysis_store.py and add "
        f"{{{analysis_store.ANALYSIS_VERSION + 1}: {got!r}}} to FINGERPRINTS"
    )


def test_each_version_has_its_own_fingerprint():
    assert len(set(FINGERPRINTS.values())) == len(FINGERPRINTS)


def test_the_fingerprint_sees_a_changed_value(reference_store: Path):
    """The guard can fail: one byte of one stored array changes the fingerprint."""
    before = store_fingerprint(reference_store)
    column = reference_store / f"{analysis_store.PART_PREFIX}links" / "launch.npy"
    data = bytearray(column.read_bytes())
    data[-1] ^= 1
    column.write_bytes(bytes(data))
    assert store_fingerprint(reference_store) != before
