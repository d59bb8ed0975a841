"""Analysis results stored with the index: a reopen maps them instead of recomputing,
gives exactly what a fresh computation gives, and never reads a stale copy."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.analysis import analysed as analysed_module
from profiling.analysis import analysis_store
from profiling.analysis import copies as copies_module
from profiling.analysis import findings as findings_module
from profiling.analysis import key_averages as key_averages_module
from profiling.analysis import op_dtypes as op_dtypes_module
from profiling.analysis.analysed import PARTS, AnalysedTrace
from profiling.analysis.chains import instance_launches
from profiling.analysis.findings import trace_findings
from profiling.analysis.launch_chain import launch_chain
from profiling.analysis.regions import Regions
from profiling.trace.cache import cache_dirs, index_of
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files
from tests.test_trace_cache import cache_itself, many_events

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


def same(a: Any, b: Any, where: str = "") -> None:
    """Deep equality that also compares numpy arrays (values and dtypes; row indexes
    stored as int32 where they fit, ``analysis_parts._narrow_rows``, equal their int64)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        narrowed = {a.dtype, b.dtype} == {np.dtype(np.int32), np.dtype(np.int64)}
        assert (a.dtype == b.dtype or narrowed) and np.array_equal(a, b), where
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        # a reopen's regions are the stored table (StoredRegions), same fields
        assert type(a) is type(b) or isinstance(a, Regions) and isinstance(b, Regions), where
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert type(b) is dict and list(a) == list(b), where
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b and type(a) is type(b), where


def all_parts(a: AnalysedTrace) -> dict[str, Any]:
    parts = {name: getattr(a, name) for name in PARTS}
    for region in a.attention_regions:
        parts[f"instances:{region}"] = a.instances(region)
    parts["findings"] = trace_findings(a)
    return parts


def builders_counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count calls of every function an ``AnalysedTrace`` part is built by."""
    calls: dict[str, int] = {}
    # the three parts a reopened ``kernels`` never reads are imported where they are
    # built, from their own modules: counted there
    for module, name in [*((analysed_module, n) for n in (
            "link_gpu_events", "find_regions", "attention_regions", "launch_chains",
            "region_instances")),
            (key_averages_module, "key_averages"), (copies_module, "copy_stats"),
            (op_dtypes_module, "op_dtypes")]:
        real = getattr(module, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _real(*args, **kw)

        monkeypatch.setattr(module, name, counted)
    real_of = analysed_module.OpTree.of

    def of(trace: Any) -> Any:
        calls["OpTree.of"] = calls.get("OpTree.of", 0) + 1
        return real_of(trace)

    monkeypatch.setattr(analysed_module.OpTree, "of", staticmethod(of))
    real_findings = findings_module._trace_findings

    def findings(*args: Any) -> Any:
        calls["findings"] = calls.get("findings", 0) + 1
        return real_findings(*args)

    monkeypatch.setattr(findings_module, "_trace_findings", findings)
    return calls


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_reopen_gives_what_a_fresh_computation_gives(path: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    fresh = all_parts(AnalysedTrace(load_trace(path, use_cache=False)))
    first = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    assert index_of(first.trace) is not None
    same(all_parts(first), fresh, "first")
    calls = builders_counted(monkeypatch)
    reopened = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    same(all_parts(reopened), fresh, "reopened")
    assert calls == {}, f"a reopen rebuilt {calls}"


def test_reopen_does_not_call_the_builders(write_trace, tmp_path, monkeypatch):
    """The builder counter can fail: a first open calls every builder once."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = SAMPLE_TRACES / "sdpa_flash.json.gz"
    calls = builders_counted(monkeypatch)
    all_parts(AnalysedTrace(load_trace(path, min_cache_bytes=0)))
    assert calls == {"OpTree.of": 1, "link_gpu_events": 1, "find_regions": 1,
                     "attention_regions": 1, "key_averages": 1, "copy_stats": 1,
                     "launch_chains": 1, "op_dtypes": 1, "findings": 1}
    calls.clear()
    a = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    all_parts(a)
    a.instances("aten::scaled_dot_product_attention")  # not an annotation: stored apart
    assert calls == {"region_instances": 1}
    calls.clear()
    AnalysedTrace(load_trace(path, min_cache_bytes=0)).instances(
        "aten::scaled_dot_product_attention")
    assert calls == {}


@cache_itself
def test_no_index_no_store(write_trace, tmp_path, monkeypatch):
    """``--no-cache`` and small traces: nothing is written, everything computed."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = write_trace(many_events(3))
    for trace in (load_trace(path), load_trace(path, use_cache=False, min_cache_bytes=0)):
        assert index_of(trace) is None
        all_parts(AnalysedTrace(trace))
    assert not (tmp_path / "cache").exists()


def parts_in(trace_path: Path) -> list[str]:
    return sorted(p.name for p in cache_dirs(trace_path)[0].iterdir() if p.is_dir())


def test_beside_keeps_the_parts_beside(write_trace, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ATTN_TUI_CACHE", "beside")
    path = write_trace(many_events(3))
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions is not None
    folder = path.with_name(path.name + ".attn-tui-cache")
    assert (folder / f"analysis-{analysis_store.ANALYSIS_VERSION}-regions" / "part.json").is_file()


@pytest.mark.parametrize("threads", [False, True], ids=["inline", "threads"])
def test_a_stale_or_damaged_part_is_never_read(write_trace, tmp_path, monkeypatch, threads):
    """Also with the arrays' checks on threads (``in_threads``, as on a big trace)."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    if threads:
        from profiling.trace import column_threads

        monkeypatch.setattr(column_threads, "MIN_ROWS", 0)
    path = write_trace(many_events(5))
    want = AnalysedTrace(load_trace(path, use_cache=False)).regions
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions is not None
    part = cache_dirs(path)[0] / f"analysis-{analysis_store.ANALYSIS_VERSION}-regions"
    # Another analysis version's key: ignored, recomputed and replaced.
    doc = json.loads((part / "part.json").read_bytes())
    (part / "part.json").write_text(json.dumps(dict(doc, key=doc["key"] + "-other")))
    calls = builders_counted(monkeypatch)
    same(AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions, want)
    assert calls.get("find_regions") == 1
    # A damaged array: recomputed, never fatal.
    table = part / "instances.npy"
    table.write_bytes(table.read_bytes()[:40])
    same(AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions, want)
    assert calls.get("find_regions") == 2
    calls.clear()
    same(AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions, want)
    assert calls == {}


def test_an_unwritable_index_only_costs_the_store(write_trace, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ATTN_TUI_CACHE_MAX", "1")  # every part is over the cap
    path = write_trace(many_events(3))
    a = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    same(all_parts(a), all_parts(AnalysedTrace(load_trace(path, use_cache=False))))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_batched_chains_equal_the_walk(path: Path):
    """``chains.instance_launches`` cuts every chain where ``launch_chain`` stops."""
    a = AnalysedTrace(load_trace(path, use_cache=False))
    instances = list(a.regions.instances)
    for region in a.attention_regions:
        instances += [i for i in a.instances(region) if i.row not in {j.row for j in instances}]
    batch = instance_launches(a.trace, a.links, a.chains, instances)
    for k, inst in enumerate(instances[:400]):
        lo, hi = int(batch.inst_ptr[k]), int(batch.inst_ptr[k + 1])
        assert batch.rows[lo:hi].tolist() == inst.gpu_rows(a.trace, a.links).tolist()
        for j in range(lo, hi):
            want = launch_chain(a.trace, a.links, a.ops, int(batch.rows[j]), inst.row)
            assert batch.chain_of(j) == want


def test_parts_stored_by_other_code_are_not_read(write_trace, tmp_path, monkeypatch):
    """An edit of the analysis that forgets ANALYSIS_VERSION still never reads old parts."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = write_trace(many_events(4))
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions.instances
    calls = builders_counted(monkeypatch)
    monkeypatch.setattr(analysis_store, "code_digest", lambda: "edited")
    assert AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions.instances
    assert calls.get("find_regions") == 1


def test_decoded_instances_are_frozen_region_instances(write_trace, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = write_trace(many_events(3))
    want = AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions.instances
    got = AnalysedTrace(load_trace(path, min_cache_bytes=0)).regions.instances
    assert got == want and got and all(type(i) is type(want[0]) for i in got)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got[0].index = 7  # type: ignore[misc]
    assert hash(got[0]) == hash(want[0]) and dataclasses.replace(got[0], index=7).index == 7


def test_writers_of_one_part_at_once_leave_one_whole_part(write_trace, tmp_path, monkeypatch):
    """Threads (standing in for processes: the rename is the same) storing one part at
    once: every save succeeds or steps aside, and what is read is whole and current."""
    import threading

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = write_trace(many_events(6))
    trace = load_trace(path, min_cache_bytes=0)
    a = AnalysedTrace(load_trace(path, use_cache=False))
    arrays = {"instances": np.array([[i.row, i.start_ns] for i in a.regions.instances],
                                    dtype=np.int64)}
    assert arrays["instances"].shape[0] > 0
    results: list[bool] = []

    def save() -> None:
        results.append(analysis_store.save(trace, "race", arrays, {"n": 1}))

    threads = [threading.Thread(target=save) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results) and len(results) == 8
    got, doc = analysis_store.load(trace, "race")
    assert doc == {"n": 1} and np.array_equal(got["instances"], arrays["instances"])
    leftovers = [p for p in index_of(trace)[0].iterdir() if p.name.startswith(".attn-tui")]
    assert leftovers == []


@pytest.mark.parametrize(("part", "column"), [("links", "launch"), ("ops", "parent"),
                                              ("chains", "ops"), ("regions", "instances"),
                                              ("copies", "rows"), ("op_dtypes", "rows")])
def test_a_stored_value_out_of_range_is_recomputed(part, column, tmp_path, monkeypatch):
    """A bit flip keeps a .npy readable: values that would index outside the trace
    make the part recomputed, never used."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = SAMPLE_TRACES / "naive.json.gz"
    want = getattr(AnalysedTrace(load_trace(path, use_cache=False)), part)
    first = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    getattr(first, part)
    stored = index_of(first.trace)[0] / f"{analysis_store.PART_PREFIX}{part}" / f"{column}.npy"
    values = np.load(stored).astype(np.int64)  # a row index may be stored as int32
    assert values.size, "nothing to damage"
    values.reshape(-1)[-1] = 1 << 40
    np.save(stored, values)
    calls = builders_counted(monkeypatch)
    same(getattr(AnalysedTrace(load_trace(path, min_cache_bytes=0)), part), want)
    assert sum(calls.values()) >= 1  # rebuilt


def test_stored_parts_count_towards_the_cache_cap(write_trace, tmp_path, monkeypatch):
    """``attn-tui cache`` and the cap see the parts: they live inside the index entry."""
    from profiling.trace.cache_store import folder_bytes, list_entries

    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = write_trace(many_events(4))
    a = AnalysedTrace(load_trace(path, min_cache_bytes=0))
    folder = index_of(a.trace)[0]
    before = folder_bytes(folder)
    all_parts(a)
    parts = sum(folder_bytes(p, 0) for p in folder.iterdir() if p.is_dir())
    assert parts > 0 and folder_bytes(folder) == before + parts
    assert [e.bytes for e in list_entries()] == [before + parts]


def test_the_source_digest_moves_with_any_write(tmp_path: Path) -> None:
    """Parts are keyed by the analysis source's stamps: an edit of the same size whose
    old mtime is put back still moves the digest (its ctime moved), as does a file
    added; an untouched tree keeps it."""
    import os
    import time

    from profiling.analysis.analysis_store import source_digest

    (tmp_path / "analysis").mkdir()
    source = tmp_path / "analysis" / "a.py"
    source.write_text("X = 1\n")
    first = source_digest(tmp_path, ("analysis",))
    assert source_digest(tmp_path, ("analysis",)) == first
    before = source.stat()
    time.sleep(0.05)  # past the file system's clock tick
    source.write_text("X = 2\n")
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert source.stat().st_mtime_ns == before.st_mtime_ns
    edited = source_digest(tmp_path, ("analysis",))
    assert edited != first
    (tmp_path / "analysis" / "b.py").write_text("")
    assert source_digest(tmp_path, ("analysis",)) not in (first, edited)
