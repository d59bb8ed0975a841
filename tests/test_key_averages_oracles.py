"""``attn-tui table TRACE --json`` against torch's own key_averages() of the same run.

Oracles: tests/oracles/cpu (made here with the local torch by
tests/oracles/make_cpu_oracles.py), tests/oracles/cuda (the same script run on
an H200), and every sample trace in sample_traces/ with its
``<variant>.key_averages.json``.  Every row must match: ``count`` exactly, the
four times within 0.01 us; the two footer totals too where the oracle
has them.  The tolerance is the README's figure: 0.01 us, the printing
resolution of torch's own table (both sides sum the same integer nanoseconds).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from profiling.analysis.key_averages import key_averages
from profiling.trace import load_trace
from tests.conftest import SAMPLE_TRACES
from tui.cli import main

ORACLES = Path(__file__).resolve().parent / "oracles"
TIMES = ("self_cpu_time_total", "cpu_time_total", "self_device_time_total", "device_time_total")


TOLERANCE_US = 0.01


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE_US


def oracle_cases() -> list[tuple[str, Path, Path]]:
    cases = []
    for trace in sorted(ORACLES.glob("*/*.trace.json.gz")):
        name = trace.name.removesuffix(".trace.json.gz")
        oracle = trace.with_name(f"{name}.key_averages.json")
        cases.append((f"{trace.parent.name}/{name}", trace, oracle))
    manifest = SAMPLE_TRACES / "manifest.json"
    if manifest.exists():
        data = _read_json(manifest)
        for variant, entry in data.get("variants", {}).items():
            if entry.get("status") == "ok" and entry.get("trace") and entry.get("key_averages"):
                cases.append((f"sample/{variant}", SAMPLE_TRACES / entry["trace"],
                              SAMPLE_TRACES / entry["key_averages"]))
    return cases


def _read_json(path: Path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def torch_version(trace: Path) -> tuple[int, int]:
    version = trace.parent / "VERSION"
    if version.exists():
        m = re.search(r"torch (\d+)\.(\d+)", version.read_text())
        if m:
            return int(m.group(1)), int(m.group(2))
    return (0, 0)


def compare(mine: list[dict], oracle: list[dict]) -> tuple[list[str], float, int]:
    """Mismatches (as text), the largest time deviation (us) and the rows compared."""
    by_key_mine, by_key_oracle = defaultdict(list), defaultdict(list)
    for r in mine:
        by_key_mine[r["key"], r["device_type"]].append(r)
    for r in oracle:
        by_key_oracle[r["key"], r["device_type"]].append(r)
    problems, worst, n = [], 0.0, 0
    for key in set(by_key_mine) | set(by_key_oracle):
        a = sorted(by_key_mine[key], key=lambda r: (r["count"], r["cpu_time_total"]))
        b = sorted(by_key_oracle[key], key=lambda r: (r["count"], r["cpu_time_total"]))
        if len(a) != len(b):
            problems.append(f"{key}: {len(a)} rows here, {len(b)} in torch")
            continue
        for x, y in zip(a, b, strict=True):
            n += 1
            if x["count"] != y["count"]:
                problems.append(f"{key}: count {x['count']} != {y['count']}")
            for f in TIMES:
                worst = max(worst, abs(x[f] - y[f]))
                if not close(x[f], y[f]):
                    problems.append(f"{key}: {f} {x[f]:.3f} != {y[f]:.3f}")
    return problems, worst, n


CASES = oracle_cases()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_table_json_agrees_with_torch(case, capsys):
    _, trace, oracle_path = case
    oracle = _read_json(oracle_path)
    python = torch_version(trace) >= (2, 13)
    if python:
        # torch >= 2.13 counts python_function slices as events; the CLI follows
        # torch <= 2.12 (and the capture machine), so ask the analysis directly.
        rows = [r.as_json() for r in key_averages(load_trace(trace), python_functions=True).rows]
    else:
        assert main(["table", str(trace), "--json", "--no-cache"]) == 0
        rows = json.loads(capsys.readouterr().out)
    problems, worst, n = compare(rows, oracle)
    assert not problems, "\n".join(sorted(problems)[:40])
    assert n == len(oracle) > 0


@pytest.mark.parametrize("case", [c for c in CASES if c[2].with_name(
    c[2].name.replace(".key_averages.json", ".totals.json")).exists()], ids=lambda c: c[0])
def test_footer_totals_agree_with_torch(case):
    _, trace, oracle_path = case
    totals = _read_json(oracle_path.with_name(
        oracle_path.name.replace(".key_averages.json", ".totals.json")))
    ka = key_averages(load_trace(trace), python_functions=torch_version(trace) >= (2, 13))
    assert close(ka.self_cpu_time_total, totals["self_cpu_time_total"])
    assert close(ka.self_device_time_total, totals["self_device_time_total"])


def test_there_are_oracles_to_compare_against():
    assert any(c[0].startswith("cpu/") for c in CASES)
