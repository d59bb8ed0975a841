"""Two traces' kernel sequences aligned like ``git diff`` aligns lines (``attn-tui diff``).

``compare`` puts totals side by side; it cannot say that the in-place variant is
the naive one minus a ``Memcpy DtoD``.  This module aligns the GPU events of one
typical instance of a region in each trace (the median instance by GPU time, or
a chosen one) and says what each side launches that the other does not, and
what that costs.

Names are compared normalised (``kernel_key``): the return type and parameter
list go, and the template arguments (launch bounds such as ``<128, 4, ...>``,
dtypes, functors) are kept apart from the stem, so one kernel built twice with
other arguments still matches; Memcpy and Memset match by kind and direction
(``Memcpy DtoD``), their memory kinds (``(Pageable -> Device)``) kept apart.
The alignment matches exact names first (stem and arguments) and then, in each
gap left between those matches, stems alone (``same_args`` says which).

The alignment is a longest common subsequence (``lcs``, bit-parallel), so
periodic sequences (the same layer repeated) align fully where ``difflib``'s
longest-block heuristic does not.
Nothing here formats: rows and totals are numbers; the command lays them out.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import trace_label
from profiling.analysis.instance_kernels import InstanceKernels, KernelEntry, kernels_of
from profiling.analysis.lcs import lcs_pairs
from profiling.analysis.region_choice import choose_regions, chosen_instances
from profiling.analysis.regions import RegionInstance
from profiling.analysis.stored_regions import instance_column
from profiling.errors import AttnTuiError

_MEMCPY = re.compile(r"\s*(Memcpy|Memset)\s*(\w+)?\s*(.*)\Z", re.DOTALL)


@dataclass(frozen=True)
class KernelKey:
    """A GPU event name split for matching: ``kind`` and ``stem`` must agree for a
    match; ``args`` (template arguments, spaces removed; a copy's memory kinds)
    decide whether the match is exact."""

    kind: str
    stem: str
    args: str


def _strip_params(name: str) -> str:
    """``name`` without a trailing top-level parameter list ``(...)``."""
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                head = name[:i].rstrip()
                return name if not head or head.endswith("operator") else head
    return name


def split_template(name: str) -> tuple[str, str]:
    """(stem, template arguments) of a C++ kernel name: ``void ns::k<128, 4, F<x> >(int)``
    gives ``("ns::k", "128,4,F<x>")``; a plain name gives ``(name, "")``."""
    s = " ".join(name.split())
    if s.startswith("void "):
        s = s[5:]
    s = _strip_params(s)
    stem: list[str] = []
    args: list[str] = []
    depth = 0
    for ch in s:
        if ch == "<":
            depth += 1
            if depth == 1:
                if args:
                    args.append("|")
                continue
        elif ch == ">" and depth > 0:
            depth -= 1
            if depth == 0:
                continue
        (args if depth else stem).append(ch)
    return "".join(stem).strip() or s, re.sub(r"\s+", "", "".join(args))


@lru_cache(maxsize=65536)
def kernel_key(name: str, kind: str) -> KernelKey:
    """The normalised key of a GPU event (see the module text); cached, as an instance
    repeats a few names many times."""
    if kind in ("memcpy", "memset"):
        m = _MEMCPY.match(name)
        if m:
            stem = m.group(1) + (f" {m.group(2)}" if m.group(1) == "Memcpy" and m.group(2)
                                 else "")
            rest = name[m.end(1):] if m.group(1) == "Memset" else m.group(3)
            return KernelKey(kind, stem, " ".join(rest.split()))
        return KernelKey(kind, " ".join(name.split()), "")
    stem, args = split_template(name)
    return KernelKey(kind, stem, args)


def align(a_levels: Sequence[Sequence[Hashable]], b_levels: Sequence[Sequence[Hashable]],
          ) -> list[tuple[int | None, int | None, int]]:
    """Align two sequences on keys of decreasing strictness: ``a_levels[k][i]`` is
    element i's key at level k.  Level 0 is aligned whole; each later level only
    inside the gaps the earlier ones left.  Returns (i, j, level) in order: a pair
    for a match, (i, None, -1) for A's alone, (None, j, -1) for B's alone (A's
    alone before B's in a gap)."""
    n = len(a_levels[0]) if a_levels else 0
    m = len(b_levels[0]) if b_levels else 0
    return _align(a_levels, b_levels, list(range(n)), list(range(m)), 0)


def _align(al: Sequence[Sequence[Hashable]], bl: Sequence[Sequence[Hashable]],
           ia: list[int], jb: list[int], level: int) -> list[tuple[int | None, int | None, int]]:
    if level >= len(al) or not ia or not jb:
        return [(i, None, -1) for i in ia] + [(None, j, -1) for j in jb]
    pairs = lcs_pairs([al[level][i] for i in ia], [bl[level][j] for j in jb])
    out: list[tuple[int | None, int | None, int]] = []
    pi = pj = 0
    for x, y in [*pairs, (len(ia), len(jb))]:
        out += _align(al, bl, ia[pi:x], jb[pj:y], level + 1)
        if x < len(ia):
            out.append((ia[x], jb[y], level))
        pi, pj = x + 1, y + 1
    return out


@dataclass(frozen=True)
class DiffRow:
    """One aligned row: ``=`` in both, ``-`` only in A, ``+`` only in B."""

    op: str
    kind: str
    key: str  # the normalised stem both sides share
    a_name: str | None
    b_name: str | None
    a_us: float | None
    b_us: float | None
    same_args: bool | None  # for ``=``: template arguments equal too
    a_launch_chain: tuple[str, ...]
    b_launch_chain: tuple[str, ...]
    a_launched_by: str | None
    b_launched_by: str | None

    @property
    def diff_us(self) -> float:
        """B's time minus A's (an absent side counts 0)."""
        return round((self.b_us or 0.0) - (self.a_us or 0.0), 3)

    @property
    def launched_by(self) -> str | None:
        """The launching op: A's, or B's for a ``+`` row."""
        return self.b_launched_by if self.op == "+" else self.a_launched_by

    def as_json(self) -> dict:
        return {
            "op": self.op, "kind": self.kind, "key": self.key,
            "a_name": self.a_name, "b_name": self.b_name,
            "a_us": self.a_us, "b_us": self.b_us, "diff_us": self.diff_us,
            "same_args": self.same_args, "launched_by": self.launched_by,
            "a_launch_chain": list(self.a_launch_chain),
            "b_launch_chain": list(self.b_launch_chain),
        }


@dataclass(frozen=True)
class Side:
    """The instance one side of a diff was read from."""

    path: str
    label: str
    region: str
    instance: int
    instances: int  # how many the region has there
    device_time_us: float

    def as_json(self) -> dict:
        return {"path": self.path, "label": self.label, "region": self.region,
                "instance": self.instance, "instances": self.instances,
                "device_time_us": self.device_time_us}


@dataclass(frozen=True)
class KernelDiff:
    """A's and B's instances aligned, with the totals of each kind of row."""

    a: Side
    b: Side
    rows: tuple[DiffRow, ...]

    def _total(self, op: str, side: str) -> float:
        ns = sum(round((getattr(r, side) or 0.0) * 1000) for r in self.rows if r.op == op)
        return ns / 1000.0

    @property
    def totals(self) -> dict[str, float | int]:
        """Time in matched kernels (A vs B), in A's alone, in B's alone; row counts."""
        return {
            "matched_a_us": self._total("=", "a_us"), "matched_b_us": self._total("=", "b_us"),
            "only_a_us": self._total("-", "a_us"), "only_b_us": self._total("+", "b_us"),
            "matched": sum(r.op == "=" for r in self.rows),
            "only_a": sum(r.op == "-" for r in self.rows),
            "only_b": sum(r.op == "+" for r in self.rows),
        }

    def as_json(self) -> dict:
        return {"a": self.a.as_json(), "b": self.b.as_json(),
                "rows": [r.as_json() for r in self.rows], "totals": self.totals}


def diff_kernels(a: Sequence[KernelEntry], b: Sequence[KernelEntry]) -> list[DiffRow]:
    """The aligned rows of two GPU event sequences (exact keys first, then stems)."""
    ka = [kernel_key(k.name, k.kind) for k in a]
    kb = [kernel_key(k.name, k.kind) for k in b]
    levels_a: list[Sequence[Hashable]] = [ka, [(k.kind, k.stem) for k in ka]]
    levels_b: list[Sequence[Hashable]] = [kb, [(k.kind, k.stem) for k in kb]]
    rows = []
    for i, j, level in align(levels_a, levels_b):
        x = a[i] if i is not None else None
        y = b[j] if j is not None else None
        op = "=" if x and y else "-" if x else "+"
        key = ka[i] if i is not None else kb[j]  # type: ignore[index]
        rows.append(DiffRow(
            op=op, kind=key.kind, key=key.stem,
            a_name=x.name if x else None, b_name=y.name if y else None,
            a_us=x.dur_us if x else None, b_us=y.dur_us if y else None,
            same_args=(level == 0) if op == "=" else None,
            a_launch_chain=x.launch_chain if x else (),
            b_launch_chain=y.launch_chain if y else (),
            a_launched_by=x.launched_by if x else None,
            b_launched_by=y.launched_by if y else None,
        ))
    return rows


def typical_instance(instances: Sequence[RegionInstance]) -> RegionInstance:
    """The median instance by GPU time (the lower one of an even count, so it is a
    real instance), ties by index.  Ranked by column: a stored region's instances
    stay rows of its table, and only the chosen one is made an object."""
    return instances[typical_position(instances)]


def typical_position(instances: Sequence[RegionInstance]) -> int:
    """Where ``typical_instance`` is in ``instances``."""
    order = np.lexsort((instance_column(instances, "index"),
                        instance_column(instances, "device_ns")))
    return int(order[(len(order) - 1) // 2])


class MissingRegion(AttnTuiError):
    """A trace without the region to diff: the diff leaves that trace out (with a note)."""


def _region_instances(a: AnalysedTrace, region: str) -> Sequence[RegionInstance]:
    found = a.lazy_instances(region)
    if not found:
        names = a.regions.names()
        raise MissingRegion(
            f"no region named {region!r} in this trace", a.trace.path,
            "regions there: " + ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
            if names else "it has no record_function regions")
    return found


def default_region(base: AnalysedTrace, other: AnalysedTrace | None = None) -> str:
    """No ``--region``: the base's first region as ``kernels`` chooses them; for
    ``other``, that region when it has it, else its own first choice."""
    choice = choose_regions(base)
    if not choice.names:
        raise MissingRegion("no region to diff: the trace has no record_function regions",
                           base.trace.path, "give --region NAME")
    if other is None or len(other.lazy_instances(choice.names[0])):
        return choice.names[0]
    theirs = choose_regions(other)
    return theirs.names[0] if theirs.names else choice.names[0]


def pick(a: AnalysedTrace, region: str, instance: int | None) -> tuple[Side, InstanceKernels]:
    """One side: the region's median instance, or instance ``instance`` (0-based)."""
    found = _region_instances(a, region)
    if instance is None:
        position = typical_position(found)
    else:
        index = instance_column(found, "index")
        chosen = np.flatnonzero(index == instance)
        if not chosen.size:
            indexes = sorted(set(index.tolist()))
            raise AttnTuiError(
                f"region {region!r} has no instance {instance}", a.trace.path,
                f"instances are {indexes[0]}..{indexes[-1]}" if len(indexes) > 1
                else f"its only instance is {indexes[0]}")
        position = int(chosen[0])
    listing = _listing(a, region, found, position)
    side = Side(a.trace.path, trace_label(a.trace.path, a.trace.metadata), region,
                listing.instance, len(found), listing.device_time_us)
    return side, listing


def _listing(a: AnalysedTrace, region: str, found: Sequence[RegionInstance],
             position: int) -> InstanceKernels:
    """The GPU events of ``found[position]``, from kernel columns of many instances:
    those of the regions ``kernels`` lists by default when ``region`` is one of them
    (a first open keeps them with the index), else those of the region's instances.
    Listing the one instance alone would read the whole trace's links and op nesting."""
    batch, at = found, position
    names = choose_regions(a).names
    if region in names:
        chosen = chosen_instances(a, names)
        row = instance_column(found, "row")[position]
        there = np.flatnonzero(instance_column(chosen, "row") == row)
        if there.shape[0]:  # (always, as both hold every instance of the region)
            batch, at = chosen, int(there[0])
    (listing,) = kernels_of(a, batch, [at])
    return listing


def diff_traces(traces: Sequence[AnalysedTrace], region: str | None = None,
                instance: int | None = None,
                left_out: list[MissingRegion] | None = None) -> list[KernelDiff]:
    """The first trace against each other one, in order (one ``KernelDiff`` each).

    A base without the region raises ``MissingRegion``.  Another trace without it
    raises too, unless ``left_out`` is given: then it is recorded there and left
    out, so one odd trace does not stop the diff of all the others.
    """
    if len(traces) < 2:
        raise AttnTuiError("diff needs two traces or more", "",
                           "give a base trace and one to compare with it")
    base = traces[0]
    base_region = region or default_region(base)
    a_side, a_list = pick(base, base_region, instance)
    out = []
    for other in traces[1:]:
        b_region = region or default_region(base, other)
        try:
            b_side, b_list = pick(other, b_region, instance)
        except MissingRegion as exc:
            if left_out is None:
                raise
            left_out.append(exc)
            continue
        out.append(KernelDiff(a_side, b_side, tuple(diff_kernels(a_list.kernels,
                                                                 b_list.kernels))))
    return out
