"""``attn-tui kernels`` without ``--json``: each instance's GPU events as a table of text.

Rich laid out one table per instance, half a millisecond a row: 147 s for the
38,400 instances of a 1 GB trace.  The rows are made here as ``kernels_json``
makes its text, from columns: an event's cells other than its number, offset
and duration come from its combination of name, kind, stream, chain and
attribution (a trace has few), the times from ``time_texts`` (``fmt_ns`` of a
whole column), all laid out by position and joined a chunk at a time
(``listing_chunks``).  Columns have one width for the whole listing, so
instances line up with each other; names and chains are cut to fit a terminal,
and are written with their control characters made visible (never markup).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import KIND_NAMES, KernelColumns, kernel_columns
from profiling.analysis.kernels_json import instance_heads, objects
from profiling.analysis.launch_chain import ATTRIBUTIONS
from profiling.analysis.listing_chunks import PART_UNITS, Chunks
from profiling.analysis.ranges import unique_rows
from profiling.analysis.regions import RegionInstance
from profiling.analysis.time_texts import ns_texts
from profiling.trace.model import NO_ID, Kind, Trace
from tui.links import chain_text
from tui.names import cells, fit, visible

NAME_WIDTH, CHAIN_WIDTH = 80, 60
"""The widest a name and a launch chain are written (wider ones end in ``…``)."""
GAP = "   "
KINDS = ((Kind.KERNEL, "kernel"), (Kind.MEMCPY, "memcpy"), (Kind.MEMSET, "memset"))
_H, _E = 9, 4
"""Pieces per instance head and per event (``_chunk``)."""


def kernels_text_parts(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
                       width: int | None = None, per: int = PART_UNITS) -> Iterator[str]:
    """The listing's text in chunks of ``per`` heads and events; ``width``: the
    terminal's columns, to cut names and chains to (None: not a terminal)."""
    return (part() for part in kernels_text_tasks(analysed, instances, width, per))


def kernels_text_tasks(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
                       width: int | None = None, per: int = PART_UNITS,
                       utf8_errors: str | None = None) -> list[Callable[[], Any]]:
    """``kernels_text_parts`` as parts to make in any order (``tui.parallel_write``):
    what the whole listing shares now, each part's pieces when it is called.
    With ``utf8_errors`` (an error handler: ``"strict"``, ``"surrogateescape"``)
    each part is the UTF-8 bytes of its text, else the text.

    WHY so little now: the parts are made by forked workers side by side, this by
    the parent alone first.  Only what the whole listing shares is made here (the
    columns, the widths, each combination's cells); the times, the heads' texts
    and every piece laid out per event come from the part's own slice of the
    columns.  WHY bytes: every launch chain holds `` › ``, so a part's text (1.6 M
    characters on the 1 GB trace) is kept at two bytes a character, and encoding it
    cost a quarter of the part (1.35 of 5.4 ms, 2-core VM); here each distinct piece
    is encoded once, when it is made, and the part is joined as bytes."""
    if not instances:
        return []
    enc: Callable[[str], Any] = (
        (lambda text: text) if utf8_errors is None
        else functools.partial(str.encode, encoding="utf-8", errors=utf8_errors))
    empty = enc("")
    cols = kernel_columns(analysed, instances)
    trace = analysed.trace
    names, heads = instance_heads(analysed, instances, cols)
    counts = np.diff(cols.ptr)
    w = [len(str(max(int(counts.max(initial=0)) - 1, 0))), max(6, cols.time_widths[0]),
         max(3, cols.time_widths[1])]
    combo, header = _combo_cells(analysed, cols, w, width)
    # an event's cells after its duration, and the end of its line (and instance)
    ends = objects([enc(c + tail) for c in combo for tail in ("\n", "\n\n")])
    every = Chunks(cols.ptr, per, _H, _E)

    def part(j: int) -> str | bytes:  # bytes with ``utf8_errors``
        chunk = every[j]
        out = np.empty(chunk.size, dtype=object)
        h0, h1, e0, e1 = chunk.h0, chunk.h1, chunk.e0, chunk.e1
        if h1 > h0:
            pieces = _head_pieces(trace, cols, names[h0:h1], heads[h0:h1], (h0, h1),
                                  header, enc)
            for i, column in enumerate(pieces):
                out[chunk.head_at + i] = column
        if e1 > e0:
            at, owner = chunk.event_at, every.owner[e0:e1]
            event = np.arange(e0, e1)
            out[at] = _numbers(event - cols.ptr[owner], w[0], enc)
            out[at + 1] = _cells(cols.offset_ns[e0:e1], w[1], enc)
            out[at + 2] = _cells(trace.dur_ns[cols.rows[e0:e1]], w[2], enc)
            last = event + 1 == cols.ptr[owner + 1]
            out[at + 3] = ends[2 * cols.combo[e0:e1] + last]
        return empty.join(out.tolist())

    return [functools.partial(part, j) for j in range(len(every))]


def _cells(ns: np.ndarray, width: int, enc: Callable[[str], Any]) -> np.ndarray:
    """The times ``ns`` as cells (``fmt_ns``, after ``GAP``, right-aligned in ``width``)."""
    texts, codes = ns_texts(ns)
    return objects([enc(GAP + t.rjust(width)) for t in texts])[codes]


def _numbers(number: np.ndarray, width: int, enc: Callable[[str], Any]) -> np.ndarray:
    """Each event's number within its instance, right-aligned in ``width``: the texts
    of the slice's range only (one instance can hold 300,000 events)."""
    lo, hi = int(number.min()), int(number.max())
    return objects([enc("  " + str(i).rjust(width)) for i in range(lo, hi + 1)])[number - lo]


def _combo_cells(analysed: AnalysedTrace, cols: KernelColumns, w: list[int],
                 width: int | None) -> tuple[list[str], str]:
    """Each combination's cells after the duration (``GAP`` before each), and the
    table's header and rule for the widths ``w`` of the first three columns."""
    strings, kinds = analysed.trace.strings, {int(k): v for k, v in KIND_NAMES.items()}
    rows = cols.combos.tolist()
    kind = [kinds.get(k, "other") for _, k, *_ in rows]
    stream = ["" if s == NO_ID else visible(str(s)) for _, _, s, *_ in rows]
    name = [visible(strings[n]) for n, *_ in rows]
    kind_w = max([4, *map(len, kind)])
    stream_w = max([6, *map(len, stream)])
    name_w = min(NAME_WIDTH, max([4, *map(cells, name)]))
    chain_w = CHAIN_WIDTH
    if width is not None:  # a terminal: name and chain share what the rest leaves
        room = width - (2 + sum(w) + len(GAP) * 5 + kind_w + stream_w)
        name_w = min(name_w, max(12, room * 4 // 7))
        chain_w = min(chain_w, max(12, room - name_w - len(GAP)))
    chain = [_chain_cell(cols.chains[ch], ATTRIBUTIONS[a], chain_w)
             for *_, ch, a in rows]
    cells_of = [GAP + k.ljust(kind_w) + GAP + s.rjust(stream_w) + GAP + fit(n, name_w)
                + GAP + c for k, s, n, c in zip(kind, stream, name, chain, strict=True)]
    head = ("  " + "#".rjust(w[0]) + GAP + "offset".rjust(w[1]) + GAP + "dur".rjust(w[2])
            + GAP + "kind".ljust(kind_w) + GAP + "stream".rjust(stream_w) + GAP
            + "name".ljust(name_w) + GAP + "launch chain")
    return cells_of, head + "\n " + "─" * (cells(head) - 1) + "\n"


def _chain_cell(chain: tuple[str, ...], attribution: str, width: int) -> str:
    """The launch chain, labelled when its op was found by nesting alone (``table``
    credits that op with no device time for this event)."""
    label = " (by nesting)" if attribution == "nesting" else ""
    return (chain_text(chain, max(width - len(label), 8)) or "-") + label


Texts = tuple[list[str], np.ndarray]
"""A column as its distinct texts and an index into them per row (``ns_texts``)."""


def _head_pieces(trace: Trace, cols: KernelColumns, names: Sequence[str], heads: np.ndarray,
                 span: tuple[int, int], header: str,
                 enc: Callable[[str], Any]) -> list[np.ndarray]:
    """The ``_H`` pieces of the titles (and their tables' header) of instances
    ``span`` (``names`` and ``heads`` are theirs), as columns: name, number, start,
    CPU and GPU time, what it launched; each distinct piece passed through ``enc``."""
    region = {n: enc(visible(n) + " #") for n in set(names)}
    (starts, start), (cpus, cpu), (gpus, gpu) = (
        ns_texts(heads[:, 1], 4), ns_texts(heads[:, 2]), ns_texts(heads[:, 3]))
    what, which = _launched(trace, cols, span)
    k = len(names)
    return [objects([region[n] for n in names]),
            objects([enc(n) for n in repr(heads[:, 0].tolist())[1:-1].split(", ")] if k
                    else []),
            objects([enc(": starts ")] * k), objects([enc(t) for t in starts])[start],
            objects([enc(", CPU ")] * k), objects([enc(t) for t in cpus])[cpu],
            objects([enc(", GPU ")] * k), objects([enc(t) for t in gpus])[gpu],
            objects([enc(t + ("\n\n" + header if t != _NONE else "\n\n"))
                     for t in what])[which]]


_NONE = ", no GPU events launched"


def _launched(trace: Trace, cols: KernelColumns, span: tuple[int, int]) -> Texts:
    """What each instance of ``span`` launched (``, 5 kernels, 1 memcpy``), as texts
    and an index per instance: counted per kind for all of them at once."""
    h0, h1 = span
    ptr = cols.ptr[h0 : h1 + 1]
    kind = trace.kind[cols.rows[int(ptr[0]) : int(ptr[-1])]]
    codes = np.full(kind.shape[0], len(KINDS), dtype=np.int64)  # other
    for j, (each, _) in enumerate(KINDS):
        codes[kind == int(each)] = j
    k, width = h1 - h0, len(KINDS) + 1
    owner = np.repeat(np.arange(k), np.diff(ptr))
    table = np.bincount(owner * width + codes, minlength=k * width).reshape(k, width)
    unique, which = unique_rows(table)
    labels = [name for _, name in KINDS] + ["other"]
    texts = []
    for row in unique.tolist():
        parts = [f"{n} {label}{'s' if n != 1 else ''}"
                 for n, label in zip(row, labels, strict=True) if n]
        texts.append(", " + ", ".join(parts) if parts else _NONE)
    return texts, which
