"""The quick way to the event list (``split.quick_object_span``: only the text around
the list is read) gives the same trace as decoding the whole top level, or the
same error: on the whole bad-input corpus, on hand-made files whose keys after the
list hold brackets, braces and the key's own name, and on the sample and real traces.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from profiling.errors import TraceError
from profiling.trace import load_trace, split
from tests.conftest import REPO
from tests.fixtures.bad_inputs import CASES, EVENTS, doc

REAL = REPO.parent / "shared" / "real_traces"


def _outcome(path: Path, quick: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(split, "QUICK_MIN_BYTES", 0 if quick else 1 << 62)
    try:
        trace = load_trace(path, use_cache=False, workers=1)
    except TraceError as exc:
        return ("error", exc.line())
    out: dict[str, object] = {}
    for f in dataclasses.fields(trace):
        value = getattr(trace, f.name)
        if f.name == "args_source":
            continue
        if isinstance(value, np.ndarray):
            out[f.name] = (value.dtype.str, value.tobytes())
        elif f.name in ("lanes", "groups"):
            out[f.name] = [dataclasses.asdict(x) for x in value]
        else:
            out[f.name] = value
    return out


def _same(path: Path, monkeypatch: pytest.MonkeyPatch, spans: list[bool] | None = None) -> None:
    if spans is not None:  # say whether the quick route was the one that counted
        real = split.quick_object_span

        def spy(*a: object) -> split.EventsSpan | None:
            span = real(*a)  # type: ignore[arg-type]
            spans.append(span is not None)
            return span

        monkeypatch.setattr(split, "quick_object_span", spy)
    assert _outcome(path, True, monkeypatch) == _outcome(path, False, monkeypatch)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_inputs_same_with_and_without_quick_span(tmp_path, monkeypatch, case):
    path = tmp_path / f"{case.name}.json"
    path.write_bytes(case.data)
    _same(path, monkeypatch)


def _top(after: str, before: str = '"schemaVersion": 1, ') -> bytes:
    events = ",\n".join(json.dumps(e) for e in EVENTS)
    return f'{{{before}"traceEvents": [\n{events}\n]{after}}}'.encode()


TAILS = {
    "nothing_after": ("", True),
    "strings_after": (', "traceName": "a]b}, {c", "displayTimeUnit": "ms"', True),
    "lists_after": (', "deviceProperties": [{"id": 0}, {"id": 1}], "x": [[1], [2]]', True),
    "events_key_nested_after": (', "meta": {"traceEvents": [1]}', True),
    "events_key_again_after": (', "traceEvents": [{"ph": "X", "ts": 1}]', False),
    "events_key_in_a_string_before": ("", True),
    "no_comma_before_key": ("", False),
    "spaces": (' , "a" : [ 1 ] \n', True),
    "nan_after": (', "a": NaN', False),
    "garbage_after": (', "a": 1 x', False),
    "unclosed_after": (', "a": [1', False),
    # over 1 MiB of objects after the events: the last MiB holds no event (no "ph")
    "objects_after": (', "devices": [' + ", ".join(['{"id": 1}'] * 120_000) + "]", False),
}


@pytest.mark.parametrize("name", list(TAILS))
def test_keys_around_the_list(tmp_path, monkeypatch, name):
    after, quick = TAILS[name]
    before = '"schemaVersion": 1, '
    if name == "events_key_in_a_string_before":
        before = '"note": "\\"traceEvents\\": [", '
    if name == "no_comma_before_key":
        before = '"schemaVersion": 1 '
    path = tmp_path / "t.json"
    path.write_bytes(_top(after, before))
    spans: list[bool] = []
    _same(path, monkeypatch, spans)
    assert spans[0] is quick


def test_quick_span_is_the_whole_texts_span():
    text = doc(EVENTS, traceName="t", deviceProperties=[{"id": 0}])
    text = text[:-1] + b', "after": {"a": [1, {"b": 2}]}}'
    split.QUICK_MIN_BYTES, old = 0, split.QUICK_MIN_BYTES
    try:
        quick = split.find_events(text, 0, "t.json")
    finally:
        split.QUICK_MIN_BYTES = old
    whole = split.find_events(text, 0, "t.json", quick=False)
    assert quick.quick and not whole.quick
    assert (quick.begin, quick.end, quick.metadata, quick.warnings) == (
        whole.begin,
        whole.end,
        whole.metadata,
        whole.warnings,
    )


def _traces() -> list[Path]:
    found = sorted((REPO / "sample_traces").glob("*.json.gz"))
    if REAL.is_dir():
        found += sorted(p for p in REAL.rglob("*.json*") if p.name.endswith((".json", ".gz")))
    return found


@pytest.mark.parametrize("path", _traces(), ids=lambda p: p.name)
def test_real_traces_same_with_and_without_quick_span(monkeypatch, path):
    spans: list[bool] = []
    _same(path, monkeypatch, spans)
    if path.parent.name == "sample_traces":  # Kineto's object form: the quick route counted
        assert spans[0] is True
