"""Analysis code vectorised for the first open (regions, copies, links), held to
the code it replaced (kept here verbatim) on every sample and real trace, and on
made-up instances that nest and tie (same start, same length, several groups)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.copies import UNKNOWN_LAUNCHER, CopyStats, copy_stats
from profiling.analysis.links import Links
from profiling.analysis.ranges import concat_ranges, range_owner
from profiling.analysis.regions import RegionInstance, Regions, _gpu_annotations, region_rows
from profiling.trace.loader import load_trace
from profiling.trace.model import NO_ID, Kind, Trace
from tests.conftest import SAMPLE_TRACES, real_trace_files


def containing(regions: Regions, links: Links, gpu_rows: np.ndarray) -> list[list[str]]:
    """``Regions.containing_pairs`` as lists: each GPU row's group keys."""
    out: list[list[str]] = [[] for _ in range(gpu_rows.shape[0])]
    at, group, names = regions.containing_pairs(links, gpu_rows)
    for j, g in zip(at.tolist(), group.tolist(), strict=True):
        out[j].append(names[g])
    return out


def reference_containing(regions: Regions, links: Links, gpu_rows: np.ndarray) -> list[list[str]]:
    """``containing`` as it was: a sorted() of (row, instance) pairs."""
    out: list[list[str]] = [[] for _ in range(gpu_rows.shape[0])]
    if not regions.instances or gpu_rows.shape[0] == 0:
        return out
    lo = np.array([i.launch_lo for i in regions.instances], dtype=np.int64)
    hi = np.array([i.launch_hi for i in regions.instances], dtype=np.int64)
    positions = concat_ranges(lo, hi)
    owners = range_owner(lo, hi)
    where = np.full(links.launch.shape[0], -1, dtype=np.int64)
    where[gpu_rows] = np.arange(gpu_rows.shape[0])
    hit = where[links.by_launch[positions]]
    keep = hit >= 0
    pairs = sorted(
        zip(hit[keep].tolist(), owners[keep].tolist(), strict=True),
        key=lambda p: (p[0], regions.instances[p[1]].start_ns, -regions.instances[p[1]].cpu_ns),
    )
    for j, k in pairs:
        group = regions.instances[k].group
        if group not in out[j]:
            out[j].append(group)
    return out


def reference_copy_stats(trace: Trace, links: Links, regions: Regions) -> list[CopyStats]:
    """``copies.copy_stats`` as it was (launcher names looked up row by row)."""
    rows = links.gpu_rows[np.isin(trace.kind[links.gpu_rows], [Kind.MEMCPY, Kind.MEMSET])]
    if rows.shape[0] == 0:
        return []
    inside = reference_containing(regions, links, rows)
    by_name: dict[int, list[int]] = {}
    for j, nid in enumerate(trace.name_id[rows].tolist()):
        by_name.setdefault(nid, []).append(j)
    out = []
    for nid, members in by_name.items():
        sel = rows[members]
        ops = Counter(
            trace.strings[int(trace.name_id[o])] if o >= 0 else UNKNOWN_LAUNCHER
            for o in links.op[sel].tolist()
        )
        seen: dict[str, None] = {}
        for j in members:
            for g in inside[j]:
                seen.setdefault(g, None)
        out.append(
            CopyStats(
                name=trace.strings[nid],
                kind="memcpy" if int(trace.kind[sel[0]]) == Kind.MEMCPY else "memset",
                count=len(members),
                total_us=float(trace.dur_ns[sel].sum()) / 1000.0,
                launched_by=[name for name, _ in ops.most_common()],
                regions=list(seen),
                rows=sel,
            )
        )
    out.sort(key=lambda c: (-c.total_us, c.name))
    return out


def reference_gpu_annotations(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """``regions._gpu_annotations`` as it was: a dict of sums, row by row."""
    out = np.full(rows.shape[0], -1, dtype=np.int64)
    gpu_ann = np.flatnonzero(trace.kind == Kind.GPU_ANNOTATION)
    if gpu_ann.shape[0] == 0:
        return out
    ext = trace.external_id
    by_id: dict[int, int] = {}
    for r in gpu_ann.tolist():
        key = int(ext[r])
        if key != NO_ID:
            by_id[key] = by_id.get(key, 0) + int(trace.dur_ns[r])
    for j, r in enumerate(rows.tolist()):
        key = int(ext[r])
        if key != NO_ID and key in by_id:
            out[j] = by_id[key]
    return out


def same_copies(got: list[CopyStats], want: list[CopyStats]) -> None:
    assert [c.as_json() for c in got] == [c.as_json() for c in want]
    for a, b in zip(got, want, strict=True):
        assert a.rows.dtype == b.rows.dtype and np.array_equal(a.rows, b.rows)


TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: Path(p).name)
def test_containing_as_before(path: Path) -> None:
    a = AnalysedTrace(load_trace(path))
    rows = a.links.gpu_rows
    assert containing(a.regions, a.links, rows) == reference_containing(a.regions, a.links, rows)
    some = rows[::3][::-1]  # any subset, in any order
    assert containing(a.regions, a.links, some) == reference_containing(a.regions, a.links, some)
    same_copies(
        copy_stats(a.trace, a.links, a.regions), reference_copy_stats(a.trace, a.links, a.regions)
    )
    trace = a.trace
    for rows in (region_rows(trace), np.arange(len(trace))):
        assert np.array_equal(_gpu_annotations(trace, rows), reference_gpu_annotations(trace, rows))


def test_containing_ties_and_nesting() -> None:
    """Instances over the same launches with equal starts and lengths, in several
    groups, shuffled: order and de-duplication as the sorted() pairs had them."""
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "naive.json.gz"))
    base = a.regions.instances
    rng = np.random.default_rng(5)
    n = a.links.by_launch.shape[0]
    made = []
    for k in range(300):
        lo = int(rng.integers(0, n))
        hi = min(n, lo + int(rng.integers(0, 40)))
        start = int(rng.integers(0, 4))
        twin = base[k % len(base)]
        fields = {f: getattr(twin, f) for f in RegionInstance.__dataclass_fields__}
        fields.update(
            group=f"g{rng.integers(0, 5)}",
            start_ns=start,
            end_ns=start + int(rng.integers(0, 3)),
            launch_lo=lo,
            launch_hi=hi,
        )
        made.append(RegionInstance(**fields))
    regions = Regions(made)
    rows = a.links.gpu_rows
    got = containing(regions, a.links, rows)
    assert got == reference_containing(regions, a.links, rows)
    assert any(len(g) > 2 for g in got)
    same_copies(
        copy_stats(a.trace, a.links, regions), reference_copy_stats(a.trace, a.links, regions)
    )


def test_gpu_annotations_shared_and_missing_ids() -> None:
    """Several GPU annotations per External id (summed), ids absent on either side,
    and NO_ID rows: as the dict of sums had them."""
    trace = load_trace(SAMPLE_TRACES / "naive.json.gz")
    rng = np.random.default_rng(9)
    n = len(trace)
    for _ in range(20):
        kind = trace.kind.copy()
        ann = rng.random(n) < 0.3
        kind[ann] = int(Kind.GPU_ANNOTATION)
        ext = rng.integers(0, 40, n).astype(np.int64)
        ext[rng.random(n) < 0.2] = NO_ID
        t = Trace(
            **{
                **{f: getattr(trace, f) for f in trace.__dataclass_fields__},
                "kind": kind,
                "external_id": ext,
            }
        )
        rows = rng.integers(0, n, 500)
        got = _gpu_annotations(t, rows)
        assert np.array_equal(got, reference_gpu_annotations(t, rows))
        assert (got >= 0).any() and (got == -1).any()


def test_copies_with_tied_launchers_and_many_names() -> None:
    """Copy rows renamed among a few names (one string twice, under two ids, and one
    named like UNKNOWN_LAUNCHER), launchers drawn so that counts tie: names, launcher
    order (count, then first appearance) and regions as the Counter code had them."""
    a = AnalysedTrace(load_trace(SAMPLE_TRACES / "sdpa_math.json.gz"))  # 60 GPU rows
    trace, links = a.trace, a.links
    gpu = links.gpu_rows
    ops = np.flatnonzero(trace.kind == Kind.CPU_OP)[:6]
    strings = [*trace.strings, "Memcpy X", "Memcpy X", UNKNOWN_LAUNCHER, "Memset Y"]
    extra = np.arange(len(trace.strings), len(strings))
    rng = np.random.default_rng(13)
    for _ in range(15):
        kind = trace.kind.copy()
        copies = gpu[rng.random(gpu.shape[0]) < 0.8]
        kind[copies] = rng.choice([int(Kind.MEMCPY), int(Kind.MEMSET)], copies.shape[0])
        name_id = trace.name_id.copy()
        name_id[copies] = rng.choice(extra, copies.shape[0])
        name_id[ops[:2]] = extra[2]  # an op named "(unknown)" too
        op = links.op.copy()
        op[copies] = rng.choice(np.r_[-1, ops], copies.shape[0])
        t = Trace(
            **{
                **{f: getattr(trace, f) for f in trace.__dataclass_fields__},
                "kind": kind,
                "name_id": name_id,
                "strings": strings,
            }
        )
        ln = dataclasses.replace(links, op=op)
        got = copy_stats(t, ln, a.regions)
        same_copies(got, reference_copy_stats(t, ln, a.regions))
        assert len(got) >= 3 and any(len(c.launched_by) > 3 for c in got)
