"""Escapes of half a UTF-16 surrogate pair (``\\udcff``) read as U+FFFD, not as bad JSON.

Python's ``json.dump`` writes them for a name read with ``errors="surrogateescape"``
(Kineto writes raw bytes that are not UTF-8 in names; a script that re-saves such
a trace turns each into ``\\udcXX``).  Python's ``json`` reads them back, msgspec
refused them, and the whole trace was lost: "not valid JSON (invalid utf-16
surrogate pair)".  The small cases are in the bad-input corpus
(``tests/fixtures/bad_inputs.py``); here: where they are found, and a trace big
enough for the parallel decoder, its index and a reopen.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import profiling.trace.loader as loader
from profiling.trace.cache import MIN_CACHE_BYTES
from profiling.trace.lenient import _mask_surrogates, lone_surrogates
from tests.test_trace_parallel import assert_same, small_parallel_path, write_synthetic

__all__ = ["small_parallel_path"]  # a fixture, used by name


@pytest.mark.parametrize(("text", "lone"), [
    (rb'"a\ud800b"', [2]),                       # a high half, then a letter
    (rb'"\udcff"', [1]),                         # a low half alone (surrogateescape)
    (rb'"\ud83d\ude80"', []),                    # a whole pair: one character
    (rb'"\uD83D\uDE80\ud800"', [13]),            # upper-case pair, then a high half
    (rb'"\ude80\ud83d"', [1, 7]),                # the halves in the wrong order
    (rb'"\ud800\ud800\udc00"', [1]),             # the second high half pairs
    (rb'"\\ud800"', []),                         # an escaped backslash, then letters
    (rb'"\\\ud800"', [3]),                       # a backslash, then an escape
    (rb'"\u0041\ud7ff\ue000"', []),              # next to the surrogate range
])
def test_lone_surrogates_are_found_where_they_start(text: bytes, lone: list[int]) -> None:
    assert lone_surrogates(text) == lone
    masked = _mask_surrogates(text)
    assert len(masked) == len(text)
    decoded = json.loads(masked)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in decoded)
    assert decoded.count("\ufffd") == len(lone)


def _with_lone_surrogates(path: Path) -> bytes:
    """The synthetic trace with one op's name made ``op_3\\udcff5`` wherever it occurs
    and a lone high half at the end of the last event's name (where msgspec says
    "truncated", as it does for a file cut short)."""
    data = path.read_bytes().replace(b'"name":"op_3_05"', b'"name":"op_3\\udcff5"')
    last = data.rindex(b'"name":"kernel_') + len(b'"name":"kernel_3_00')
    return data[:last] + b"\\ud800" + data[last:]


def test_a_big_trace_decodes_the_same_in_parallel_and_serially(
        tmp_path: Path, small_parallel_path: list[int]) -> None:
    path = write_synthetic(tmp_path / "t.json", seed=3, events=12_000)
    path.write_bytes(_with_lone_surrogates(path))
    serial = loader.load_trace(path, use_cache=False, workers=1)
    parallel = loader.load_trace(path, use_cache=False, workers=2)
    assert small_parallel_path == [1]
    assert_same(parallel, serial)
    assert "op_3\ufffd5" in serial.strings
    assert any(s.startswith("kernel_3_") and s.endswith("\ufffd") for s in serial.strings)
    assert any("surrogate pair" in w for w in serial.warnings), serial.warnings
    assert not any("cut short" in w for w in serial.warnings), serial.warnings


def _table(path: Path, cache: Path) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "table", str(path), "--json"],
        capture_output=True, check=True, env={"ATTN_TUI_CACHE_DIR": str(cache), "PATH": ""},
    )
    return {row["key"]: row["count"] for row in json.loads(done.stdout)}


def test_the_commands_read_and_reopen_them(tmp_path: Path) -> None:
    """First open (writes the index, which stores the names) and reopen agree, and
    the op keeps its count under its repaired name."""
    plain = write_synthetic(tmp_path / "plain.json", seed=3, events=36_000)
    odd = tmp_path / "odd.json"
    odd.write_bytes(_with_lone_surrogates(plain))
    assert odd.stat().st_size >= MIN_CACHE_BYTES
    want = _table(plain, tmp_path / "c0")
    first = _table(odd, tmp_path / "c1")
    assert list((tmp_path / "c1").glob("*/meta.json")), "the first open wrote an index"
    assert _table(odd, tmp_path / "c1") == first  # from the index
    assert first["op_3\ufffd5"] == want["op_3_05"] > 0
    assert "op_3_05" not in first
    assert sum(first.values()) == sum(want.values())
