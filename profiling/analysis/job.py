"""A job: the traces of one distributed run's ranks, recognised, loaded and aligned.

Each rank of a ``torch.distributed`` job writes its own trace, and Kineto records
the rank, the world size and the backend under the top-level ``distributedInfo``.
Traces are one job when they all carry a rank, agree on the world size and the
backend, and no rank appears twice; anything else stays a separate trace (two
runs of the same job in one folder, single-process traces, a world size of 1).

Detection reads only the file's head (and the tail of a plain file), so that
``attn-tui open DIR`` can decide on one pane before loading gigabytes; the
loaded metadata has the last word (``load_job`` checks again).

Ranks load in parallel threads (each big one decodes on the loader's process
pool) and are placed on one time axis (``align_offsets``):

- ``clock``: the traces' own clocks.  Newer Kineto writes ``ts`` relative to a
  per-process ``baseTimeNanoseconds``; older Kineto writes epoch microseconds.
  Either way ``baseTimeNanoseconds + ts`` (base 0 when absent) is the wall
  clock of the host, which is what ranks share (up to the hosts' clock skew);
- ``step``: each rank's first ``ProfilerStep`` starts where the lowest rank's
  does, for hosts whose clocks disagree or steps that should be compared as if
  they had started together.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiling.analysis.ranks import trace_rank, world_size
from profiling.errors import AttnTuiError
from profiling.trace.model import STEP_PREFIX, Kind, Trace

ALIGNMENTS = ("clock", "step")
SNIFF_BYTES = 256 << 10
"""How much of a file's start (and of a plain file's end) detection reads."""

_KEY = re.compile(rb'"distributedInfo"\s*:\s*')


@dataclass(frozen=True)
class RankInfo:
    """What a trace's ``distributedInfo`` says about its place in a job."""

    path: str
    rank: int
    world_size: int | None
    backend: str


def rank_info_of(path: str, metadata: Any) -> RankInfo | None:
    """The trace's rank, world size and backend; None without a rank."""
    rank = trace_rank(metadata)
    if rank is None:
        return None
    info = metadata.get("distributedInfo") if isinstance(metadata, dict) else {}
    backend = info.get("backend") if isinstance(info, dict) else None
    return RankInfo(path, rank, world_size(metadata), str(backend) if backend else "")


def _decode_info(text: bytes) -> dict[str, Any] | None:
    match = _KEY.search(text)
    if match is None:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[match.end():].decode("utf-8", "replace"))
    except ValueError:
        return None
    return {"distributedInfo": value}


def sniff_rank(path: str) -> RankInfo | None:
    """``distributedInfo`` read from the file's head (or a plain file's tail), unloaded."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            if head[:2] == b"\x1f\x8b":
                from profiling.trace.gzip_head import gzip_head  # plain traces (most) skip it

                head, tail = gzip_head(f, SNIFF_BYTES), b""  # a rank cut short too
            else:
                size = os.fstat(f.fileno()).st_size
                f.seek(max(size - SNIFF_BYTES, len(head)))
                tail = f.read(SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return None
    meta = _decode_info(head) or _decode_info(tail)
    return rank_info_of(path, meta) if meta else None


_RANK_WORD = re.compile(r"(rank|worker)[_-]?\d+", re.IGNORECASE)
_STAMP = re.compile(r"\.\d{10,}")


def name_stem(path: str) -> str:
    """A trace's file name without its rank number and timestamps: ranks of one run
    share it (``ring.rank3.json`` -> ``ring.rank.json``, as ``capture --nproc`` names
    them; ``worker3_step_12.1694128201557.pt.trace.json`` -> ``worker_step_12.pt.trace.json``)."""
    return _STAMP.sub("", _RANK_WORD.sub(r"\1", os.path.basename(path)))


def job_groups(infos: Sequence[RankInfo | None], paths: Sequence[str]) -> list[list[int]]:
    """Indexes of ``paths`` grouped: each job's in rank order, every other path alone.

    A job is two or more ranked traces with one world size (above 1) and backend
    and no rank twice; when ranks repeat (a capture folder holds one job per
    variant), traces are told apart by ``name_stem``.  Groups keep the order in
    which their first path was given.
    """
    keys: dict[tuple[Any, ...], list[int]] = {}
    order: list[tuple[Any, ...]] = []
    for i, info in enumerate(infos):
        if info is None or not info.world_size or info.world_size < 2:
            key: tuple[Any, ...] = ("alone", i)
        else:
            key = ("job", info.world_size, info.backend)
        if key not in keys:
            keys[key] = []
            order.append(key)
        keys[key].append(i)
    out: list[list[int]] = []
    for key in order:
        members = keys[key]
        if key[0] != "job":
            out.append(members)
            continue
        ranks = [infos[i].rank for i in members]  # type: ignore[union-attr]
        subgroups = [members]
        if len(set(ranks)) < len(ranks):  # several jobs alike: tell them apart by name
            by_stem: dict[str, list[int]] = {}
            for i in members:
                by_stem.setdefault(name_stem(paths[i]), []).append(i)
            subgroups = list(by_stem.values())
        for sub in subgroups:
            sub_ranks = [infos[i].rank for i in sub]  # type: ignore[union-attr]
            if len(sub) > 1 and len(set(sub_ranks)) == len(sub_ranks):
                out.append(sorted(sub, key=lambda i: infos[i].rank))  # type: ignore[union-attr]
            else:
                out.extend([i] for i in sub)
    out.sort(key=lambda group: min(group))
    return out


def group_paths(paths: Sequence[str]) -> list[list[str]]:
    """``paths`` as jobs (lists of two or more, in rank order) and single traces."""
    infos = [sniff_rank(p) for p in paths]
    return [[paths[i] for i in group] for group in job_groups(infos, paths)]


def base_ns(metadata: dict[str, Any]) -> int:
    """``baseTimeNanoseconds`` (0 when absent or not a whole number)."""
    value = metadata.get("baseTimeNanoseconds")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return 0
    try:
        return int(value)
    except ValueError:
        return 0


def step_starts(trace: Trace, rows: tuple[int, int] | None = None,
                shift: int = 0) -> dict[int, int]:
    """``ProfilerStep#N`` -> its start (``ts_ns`` less ``shift``) among ``rows``
    (all by default): the steps a rank recorded, by number."""
    ids = {i: s[len(STEP_PREFIX):] for i, s in enumerate(trace.strings)
           if s.startswith(STEP_PREFIX)}
    if not ids or not len(trace):
        return {}
    lo, hi = rows if rows is not None else (0, len(trace))
    kind, names = trace.kind[lo:hi], trace.name_id[lo:hi]
    found = np.flatnonzero(np.isin(names, list(ids)) & (
        (kind == Kind.USER_ANNOTATION) | (kind == Kind.CPU_OP)))
    out: dict[int, int] = {}
    for name, ts in zip(names[found].tolist(), trace.ts_ns[found + lo].tolist(), strict=True):
        number = ids[name]
        if number.isdigit():
            out[int(number)] = min(out.get(int(number), ts - shift), ts - shift)
    return out


def aligning_steps(starts: Sequence[dict[int, int]]) -> tuple[list[int | None], str]:
    """The step start each rank is aligned on, and its words for the header: the
    first step number every rank with steps recorded, so that ranks whose windows
    opened on different steps are not aligned one step apart; each rank's first
    step when they share none."""
    present = [set(s) for s in starts if s]
    common = set.intersection(*present) if present else set()
    if common and any(min(s) != min(common) for s in starts if s):
        n = min(common)
        return [s[n] if s else None for s in starts], f"{STEP_PREFIX}{n}"
    return [min(s.values()) if s else None for s in starts], "first ProfilerStep"


EPOCH_MIN_NS = 10**18
"""Timestamps (ns) at or after this (2001-09-09) are wall-clock epoch times: older
Kineto's ``ts``; newer Kineto's ``ts`` count from its ``baseTimeNanoseconds``."""


def lost_bases(bases: Sequence[int], firsts: Sequence[int | None]) -> list[int]:
    """Positions of the ranks whose ``ts`` count from a base they do not carry, in a
    job whose other ranks carry theirs.  Kineto writes ``baseTimeNanoseconds`` last,
    after the events, so a rank file cut before its end has relative ``ts`` and no
    base; read as wall-clock times they would sit 50 years before the other ranks.
    A rank without a base whose ``ts`` are epoch times (``firsts``: its first event)
    is placed right by its clock and is not one of them; nor is any rank of a job
    whose bases do not put it on the wall clock."""
    def wall(i: int) -> bool:
        first = firsts[i]
        return first is not None and bases[i] + first >= EPOCH_MIN_NS

    if not any(bases[i] and wall(i) for i in range(len(bases))):
        return []  # no rank on the wall clock by its base: nothing to be lost
    return [i for i, b in enumerate(bases) if not b and not wall(i)]


def align_offsets(traces: Sequence[Trace], alignment: str) -> tuple[list[int], str]:
    """Nanoseconds to add to each trace's ``ts_ns``, and the words for the header."""
    if alignment not in ALIGNMENTS:
        raise AttnTuiError(f"unknown alignment {alignment!r}", "--align",
                           "use " + " or ".join(ALIGNMENTS))
    bases = [base_ns(t.metadata) for t in traces]
    firsts = [int(t.ts_ns.min()) if len(t) else None for t in traces]
    need_steps = alignment != "clock" or bool(lost_bases(bases, firsts))
    steps, label = aligning_steps([step_starts(t) for t in traces]) if need_steps else ([], "")
    return offsets_of(bases, steps, alignment, firsts, label)


def offsets_of(bases: Sequence[int], steps: Sequence[int | None], alignment: str,
               firsts: Sequence[int | None] | None = None,
               label: str = "") -> tuple[list[int], str]:
    """``align_offsets`` from each rank's ``baseTimeNanoseconds``, first step start and
    first event on its own clock (``steps`` may be empty for ``clock`` when no rank
    lost its base, ``lost_bases``).  A rank that lost its base is placed by its first
    ``ProfilerStep`` on the first rank with a base and a step, else by its first event
    on the earliest first event of the ranks with a base; the header says so.
    ``label``: which step ``steps`` are (``aligning_steps``)."""
    bases = list(bases)
    n = len(bases)
    firsts = list(firsts) if firsts is not None else [None] * n
    steps = list(steps) or [None] * n
    lost = lost_bases(bases, firsts)
    kept = [i for i in range(n) if i not in lost]
    ref = next((j for j in kept if steps[j] is not None), None)
    starts = [bases[j] + f for j in kept if (f := firsts[j]) is not None]

    def by_clock(i: int) -> int:
        if i not in lost:
            return bases[i]
        step, first = steps[i], firsts[i]
        if step is not None and ref is not None:
            return bases[ref] + int(steps[ref]) - step  # type: ignore[arg-type]
        return min(starts) - first if starts and first is not None else 0

    clock = ("clock: baseTimeNanoseconds + ts" if any(bases)
             else "clock: the traces' timestamps")
    if lost:
        how = ("first ProfilerStep" if all(steps[i] is not None for i in lost) and ref is not None
               else "first ProfilerStep, else first event")
        clock += (f" ({len(lost)} rank{'s' if len(lost) > 1 else ''} without "
                  f"baseTimeNanoseconds, a file cut short: placed by its {how})")
    if alignment == "clock":
        return [by_clock(i) for i in range(n)], clock
    known = [i for i, s in enumerate(steps) if s is not None]
    if not known:
        return [by_clock(i) for i in range(n)], clock + " (no ProfilerStep to align on)"
    target = by_clock(known[0]) + int(steps[known[0]])  # type: ignore[arg-type]
    offsets = [target - int(s) if s is not None else by_clock(i) for i, s in enumerate(steps)]
    note = (f"{label} of each rank (the first step all have)" if label.startswith(STEP_PREFIX)
            else "first ProfilerStep of each rank")
    if len(known) < n:
        note += f" ({n - len(known)} ranks without one: by clock)"
    return offsets, note


Loader = Callable[[str], Trace]


def load_all(paths: Sequence[str], load: Loader) -> list[Trace]:
    """Every path loaded, in parallel threads (big ones decode on the process pool);
    the first failure is raised after the others have finished."""
    loaded = load_each(paths, load)
    for item in loaded:
        if isinstance(item, BaseException):
            raise item
    return loaded  # type: ignore[return-value]


def load_each(paths: Sequence[str], load: Loader) -> list[Trace | Exception]:
    """Every path loaded in parallel threads: its trace, or the exception it raised."""

    def one(path: str) -> Trace | Exception:
        try:
            return load(path)
        except Exception as exc:  # noqa: BLE001 - handed back, in the path's place
            return exc

    if len(paths) == 1:
        return [one(paths[0])]
    # here, not at the top: compare and findings import this module for group_paths
    # alone, and concurrent.futures brings logging with it
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(paths), thread_name_prefix="attn-tui load rank") as ex:
        return list(ex.map(one, paths))
