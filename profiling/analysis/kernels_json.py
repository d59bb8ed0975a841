"""``kernels --json`` written from columns: the text ``json.dumps(..., indent=1)`` gives.

With an indent, the standard library encodes in pure Python, one call per value:
14 s for the 270,000 GPU events of a 1 GB trace's 38,400 ``attn_fwd``
instances, far more than computing them.  An event's text differs from another's
only in its two times when its name, kind, stream, launcher, chain and
attribution are the same, and a trace has few such combinations: each
combination's text is made once (by ``json.dumps`` itself, so strings are
escaped exactly as before), and an event is that text with its two times put in.
No Python operation runs per event, and per instance only the look-up of its
name's text: every other piece (a combination's text picked by index, a time's
integer part and fraction) is made for a whole column by one C call, laid out by position
in one object array and joined once per chunk (``_chunk_text``); times are written
from their integer ns as ``repr`` writes the float (``_us_pieces``).
``tests/test_kernels_batch.py`` checks the result byte for byte against
``json.dumps`` on every sample and real trace, ``tests/test_kernels_json_numbers.py``
the times against ``repr``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import KIND_NAMES, KernelColumns, kernel_columns
from profiling.analysis.launch_chain import ATTRIBUTIONS
from profiling.analysis.listing_chunks import PART_UNITS, Chunk, Chunks
from profiling.analysis.regions import INSTANCE_COL as _COL
from profiling.analysis.regions import RegionInstance
from profiling.analysis.stored_regions import instance_names, instance_table
from profiling.trace.model import NO_ID


def _floats(values: np.ndarray) -> list[str]:
    """``repr`` of each float64 (what ``json`` writes), in one C-level call."""
    if values.shape[0] == 0:
        return []
    return repr(values.tolist())[1:-1].split(", ")


def _event_texts(analysed: AnalysedTrace, cols: KernelColumns) -> tuple[list[str], list[str]]:
    """The texts before the start offset and after the duration of each combination of
    an event's other fields (``KernelColumns.combos``)."""
    kinds = {int(k): v for k, v in KIND_NAMES.items()}
    strings, dumps, chains = analysed.trace.strings, json.dumps, cols.chains
    pre, post = [], []
    for name, kind, stream, launcher, ch, a in cols.combos.tolist():
        pre.append('{\n    "name": ' + dumps(strings[name]) + ',\n    "kind": '
                   + dumps(kinds.get(kind, "other")) + ',\n    "start_offset_us": ')
        names = chains[ch]
        chain_text = ("[\n     " + ",\n     ".join(dumps(n) for n in names) + "\n    ]"
                      if names else "[]")
        post.append(',\n    "stream": ' + ("null" if stream == NO_ID else str(stream))
                    + ',\n    "launched_by": '
                    + ("null" if launcher < 0 else dumps(strings[launcher]))
                    + ',\n    "launch_chain": ' + chain_text
                    + ',\n    "attribution": ' + dumps(ATTRIBUTIONS[a]) + "\n   }")
    return pre, post


def kernels_json(analysed: AnalysedTrace, instances: Sequence[RegionInstance]) -> str:
    """Exactly ``json.dumps([k.as_json() for k in kernels_of(analysed, instances)],
    indent=1, allow_nan=False)``, without a Python call per value."""
    return "".join(kernels_json_parts(analysed, instances))


def kernels_json_parts(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
                       per: int = PART_UNITS) -> Iterator[str]:
    """``kernels_json``'s text in chunks of ``per`` heads and events (``listing_chunks``),
    to write as they come: the text of a 1 GB trace's 38,400 instances is 150 MB,
    and one instance may hold most of it; it is never held at once."""
    return (part() for part in kernels_json_tasks(analysed, instances, per))


def kernels_json_tasks(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
                       per: int = PART_UNITS) -> list[Callable[[], str]]:
    """``kernels_json_parts`` as parts to make in any order (side by side:
    ``tui.parallel_write``): the listing's columns are made now, each part's text
    when it is called."""
    if not instances:
        return [lambda: "[]"]
    cols = kernel_columns(analysed, instances)
    pre, post = _event_texts(analysed, cols)
    names, heads = instance_heads(analysed, instances, cols)
    pre_obj = objects(pre)
    # An event's closing text: its combination's, then what follows it in its instance.
    post_obj = objects([p + tail for p in post for tail in (",\n   ", "\n  ]\n }")])
    counts = np.diff(cols.ptr)
    last = np.zeros(cols.rows.shape[0], dtype=np.int64)  # 1: its instance's last event
    last[cols.ptr[1:][counts > 0] - 1] = 1
    closing = 2 * cols.combo + last  # each event's row of post_obj
    every = Chunks(cols.ptr, per, _H, _E)

    def part(j: int) -> str:
        chunk = every[j]
        events = slice(chunk.e0, chunk.e1)
        text = _chunk_text(analysed, cols, names, heads, chunk, pre_obj[cols.combo[events]],
                           post_obj[closing[events]])
        return text + "\n]" if j == len(every) - 1 else text

    return [functools.partial(part, j) for j in range(len(every))]


def objects(texts: list[str] | list[bytes]) -> np.ndarray:
    """A list of str (or bytes) as a numpy object array (to pick from by index, in C)."""
    out = np.empty(len(texts), dtype=object)
    out[:] = texts
    return out


EXACT_NS = 10**15
"""Below this, ``n / 1000.0`` has at most 15 significant digits, so ``float.__repr__``
writes exactly its decimal digits (the shortest text that reads back as that float)."""


@functools.cache
def _fractions(suffix: str) -> np.ndarray:
    """``repr``'s text after the integer part of ``n / 1000.0`` for each ``n % 1000``
    (``.0``, ``.001``, ``.25`` ...), with ``suffix`` after it."""
    return objects([("." + f"{r:03d}".rstrip("0") if r else ".0") + suffix
                     for r in range(1000)])


SMALL_US = 1 << 16
"""Integer parts (µs) below this are picked from a table of their texts (``_int_texts``)
rather than written by ``repr`` of the list and split again: two passes over the
text saved per column, for a table of at most 65,536 short strings made once."""


@functools.cache
def _int_texts(size: int) -> np.ndarray:
    """``str(i)`` for ``i`` in ``range(size)``, as an object array to pick from."""
    return objects([str(i) for i in range(size)])


def _us_pieces(ns: np.ndarray, suffix: str) -> tuple[list[str] | np.ndarray, np.ndarray]:
    """``repr(n / 1000.0) + suffix`` of each integer ``n`` in two pieces (the integer
    part, then the rest): integers are written far faster than floats (``repr`` of
    a list of ints, one C call, or picked from ``_int_texts`` when small), the rest
    is one of 1000 texts.  Values outside
    [0, ``EXACT_NS``) take ``repr`` of the float itself (``_floats``)."""
    ns = np.asarray(ns, dtype=np.int64)
    if ns.shape[0] == 0:
        return [], np.empty(0, dtype=object)
    if int(ns.min()) >= 0 and int(ns.max()) < EXACT_NS:
        whole = ns // 1000
        top = int(whole.max())
        if top < SMALL_US:  # most times of a GPU listing: each picked from a table, in C
            return _int_texts(max(1024, 1 << top.bit_length()))[whole], \
                _fractions(suffix)[ns % 1000]
        return repr(whole.tolist())[1:-1].split(", "), _fractions(suffix)[ns % 1000]
    rest = np.empty(ns.shape[0], dtype=object)
    rest[:] = suffix
    return _floats(ns / 1000.0), rest


def instance_heads(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
                    cols: KernelColumns) -> tuple[list[str], np.ndarray]:
    """The instances' names, and their own numbers as an int64 table, one row each:
    index, then in ns: start (from the trace's start), CPU time, GPU time, first GPU
    start (from the trace's start; -1: none)."""
    origin = analysed.trace.start_ns
    t = instance_table(instances)
    start = t[:, _COL["start_ns"]]
    first = cols.first_ns
    table = np.stack([t[:, _COL["index"]], start - origin, t[:, _COL["end_ns"]] - start,
                      t[:, _COL["device_ns"]], np.where(first >= 0, first - origin, -1)], axis=1)
    return instance_names(instances), table


_H, _E = 11, 6
"""Pieces of text per instance head and per event (``_chunk_text``)."""


def _chunk_text(analysed: AnalysedTrace, cols: KernelColumns, names: Sequence[str],
                heads: np.ndarray, chunk: Chunk, pre: np.ndarray, post: np.ndarray) -> str:
    """The chunk's heads and events as ``json.dumps(indent=1)`` writes them inside the
    list (an instance's separator starts its head): one join of pieces laid out by
    position (each head's 11 pieces, each event's 6), every piece made by a C call
    over a column (``_us_pieces``).  ``pre``/``post``: the chunk's events' texts
    before their start and after their duration."""
    h0, h1, e0, e1 = chunk.h0, chunk.h1, chunk.e0, chunk.e1
    out = np.empty(chunk.size, dtype=object)
    at, ev = chunk.head_at, chunk.event_at
    if h1 > h0:
        _put_heads(out, at, names[h0:h1], heads[h0:h1], np.diff(cols.ptr)[h0:h1] > 0, h0 == 0)
    if e1 > e0:
        out[ev] = pre
        out[ev + 1], out[ev + 2] = _us_pieces(cols.offset_ns[e0:e1], ',\n    "dur_us": ')
        out[ev + 3], out[ev + 4] = _us_pieces(analysed.trace.dur_ns[cols.rows[e0:e1]], "")
        out[ev + 5] = post
    return "".join(out.tolist())


def _put_heads(out: np.ndarray, at: np.ndarray, names: Sequence[str], heads: np.ndarray,
               has: np.ndarray, first: bool) -> None:
    """Each instance's 11 head pieces at ``at`` in ``out``: its separator and region,
    its numbers, and the opening of its events (``has``: it has some; ``first``:
    the listing's first instance, opened by the list's bracket)."""
    region_text: dict[str, str] = {}
    for name in names:
        if name not in region_text:
            region_text[name] = ',\n {\n  "region": ' + json.dumps(name) + ',\n  "instance": '
    out[at] = [region_text[name] for name in names]
    if first:  # the list's opening in place of the separator
        out[at[0]] = "[\n " + out[at[0]][3:]
    out[at + 1] = repr(heads[:, 0].tolist())[1:-1].split(", ")
    out[at + 2] = ',\n  "start_us": '
    out[at + 3], out[at + 4] = _us_pieces(heads[:, 1], ',\n  "cpu_time_us": ')
    out[at + 5], out[at + 6] = _us_pieces(heads[:, 2], ',\n  "device_time_us": ')
    out[at + 7], out[at + 8] = _us_pieces(heads[:, 3], ',\n  "gpu_start_us": ')
    out[at + 9], out[at + 10] = "null", ',\n  "kernels": []\n }'
    if has.any():
        out[at[has] + 9], out[at[has] + 10] = _us_pieces(heads[has, 4],
                                                         ',\n  "kernels": [\n   ')
