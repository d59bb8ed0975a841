"""``kernels --json`` written from columns: the text ``json.dumps(..., indent=1)`` gives.

With an indent, the standard library encodes in pure Python, one call per value:
14 s for the 270,000 GPU events of a 1 GB trace's 38,400 ``attn_fwd``
instances, far more than computing them.  An event's text differs from another's
only in its two times when its name, kind, stream, launcher, chain and
attribution are the same, and a trace has few such combinations: each
combination's text is made once (by ``json.dumps`` itself, so strings are
escaped exactly as before), and an event is that text with its two floats
(``repr``, as ``json`` writes them) put in.  ``tests/test_kernels_json.py`` checks
the result byte for byte against ``json.dumps`` on every sample and real trace.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterator, Sequence

import numpy as np

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.instance_kernels import KIND_NAMES, kernel_columns
from profiling.analysis.launch_chain import ATTRIBUTIONS
from profiling.analysis.ranges import unique_rows
from profiling.analysis.regions import RegionInstance
from profiling.trace.model import NO_ID


def _floats(values: np.ndarray) -> list[str]:
    """``repr`` of each float64 (what ``json`` writes), in one C-level call."""
    if values.shape[0] == 0:
        return []
    return repr(values.tolist())[1:-1].split(", ")


def _event_texts(analysed: AnalysedTrace, rows: np.ndarray, chain: np.ndarray,
                 chains: list[tuple[str, ...]], how: np.ndarray) -> tuple[list[str], list[str],
                                                                          np.ndarray]:
    """(texts before the start offset, texts after the duration, combination of each event)."""
    trace, links = analysed.trace, analysed.links
    op = links.op[rows]
    op_name = np.where(op >= 0, trace.name_id[np.maximum(op, 0)], -1)
    key = np.stack([trace.name_id[rows].astype(np.int64), trace.kind[rows].astype(np.int64),
                    trace.stream[rows].astype(np.int64), op_name.astype(np.int64),
                    chain.astype(np.int64), how.astype(np.int64)], axis=1)
    if rows.shape[0] == 0:
        return [], [], np.zeros(0, dtype=np.int64)
    unique, inverse = unique_rows(key)
    kinds = {int(k): v for k, v in KIND_NAMES.items()}
    strings, dumps = trace.strings, json.dumps
    pre, post = [], []
    for name, kind, stream, launcher, ch, a in unique.tolist():
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
    return pre, post, np.asarray(inverse).reshape(-1)


def kernels_json(analysed: AnalysedTrace, instances: Sequence[RegionInstance]) -> str:
    """Exactly ``json.dumps([k.as_json() for k in kernels_of(analysed, instances)],
    indent=1, allow_nan=False)``, without a Python call per value."""
    return "".join(kernels_json_parts(analysed, instances))


def kernels_json_parts(analysed: AnalysedTrace, instances: Sequence[RegionInstance],
                       per: int = 2000) -> Iterator[str]:
    """``kernels_json``'s text in pieces of ``per`` instances, to write as they come:
    the text of a 1 GB trace's 38,400 instances is 150 MB, never held at once."""
    trace = analysed.trace
    if not instances:
        yield "[]"
        return
    cols = kernel_columns(analysed, instances)
    pre, post, combo = _event_texts(analysed, cols.rows, cols.chain, cols.chains,
                                    cols.attribution)
    origin = trace.start_ns
    ptr, first = cols.ptr.tolist(), cols.first_ns.tolist()
    region_text: dict[str, str] = {}
    head = operator.attrgetter("name", "index", "start_ns", "cpu_ns", "device_ns")
    for lo in range(0, len(instances), per):
        hi = min(lo + per, len(instances))
        a0, b0 = ptr[lo], ptr[hi]
        starts = _floats(cols.offset_ns[a0:b0] / 1000.0)
        durs = _floats(trace.dur_ns[cols.rows[a0:b0]] / 1000.0)
        events = [pre[c] + s + ',\n    "dur_us": ' + d + post[c]
                  for c, s, d in zip(combo[a0:b0].tolist(), starts, durs, strict=True)]
        # The instances' own numbers as columns: one repr of a list, not four per instance
        # (an int over 1000.0 in numpy is the same float64 division Python does).
        heads = [head(inst) for inst in instances[lo:hi]]
        ints = np.array([h[1:] for h in heads], dtype=np.int64).reshape(hi - lo, 4)
        inst_start = _floats((ints[:, 1] - origin) / 1000.0)
        cpu, device = _floats(ints[:, 2] / 1000.0), _floats(ints[:, 3] / 1000.0)
        index = ints[:, 0].tolist()
        gpu = _floats((np.asarray(first[lo:hi], dtype=np.int64) - origin) / 1000.0)
        out = []
        for k in range(lo, hi):
            j = k - lo
            inst_name = heads[j][0]
            a, b = ptr[k] - a0, ptr[k + 1] - a0
            name = region_text.get(inst_name)
            if name is None:
                name = region_text[inst_name] = json.dumps(inst_name)
            gpu_start = "null" if a == b else gpu[j]
            kernels = "[\n   " + ",\n   ".join(events[a:b]) + "\n  ]" if b > a else "[]"
            out.append(f'{{\n  "region": {name},\n  "instance": {index[j]!r},\n  '
                       f'"start_us": {inst_start[j]},\n  '
                       f'"cpu_time_us": {cpu[j]},\n  '
                       f'"device_time_us": {device[j]},\n  '
                       f'"gpu_start_us": {gpu_start},\n  "kernels": {kernels}\n }}')
        yield ("[\n " if lo == 0 else ",\n ") + ",\n ".join(out)
    yield "\n]"
