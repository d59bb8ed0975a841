"""The typed shapes the decoder reads a trace event into (no logic, no other imports).

Both the fast path (``decode``) and the lenient one (``lenient``) build these, so
they live apart from either: that keeps the two modules free of an import circle.

An event is read one of three ways.  ``Event`` takes ``ts``/``dur`` as numbers,
the cheapest form, which is exact for every trace whose times fit a float to the
nanosecond.  ``TsTextEvent`` keeps the JSON text of ``ts``, for traces whose
epoch-sized microsecond times carry decimals a float would round (see ``times``);
its durations are small and stay numbers.  ``TextEvent`` keeps both texts: the
last resort, and what the lenient reader builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec

from profiling.trace.op_inputs import NO_RAW

NO_TEXT = msgspec.Raw(b"")
"""The text of an absent ``ts``: not a number, so the event is skipped with a warning."""

ZERO_TEXT = msgspec.Raw(b"0")
"""The text of an absent ``dur`` (instants, flows, counters): zero."""


class Args(msgspec.Struct):
    """The few ``args`` fields kept as columns (plus the values of metadata events)."""

    # Absent ids decode as -1 (NO_ID) so columns fill without a per-event branch.
    correlation: int = -1
    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_old: int = msgspec.field(default=-1, name="external id")
    stream: int | str = -1
    name: str | None = None  # M events: process_name / thread_name
    labels: str | None = None  # M events: process_labels
    sort_index: int | None = None  # M events: *_sort_index
    # Kept as text, read for the compute and cast ops only (see op_inputs).
    input_type: msgspec.Raw = msgspec.field(default=NO_RAW, name="Input type")
    concrete_inputs: msgspec.Raw = msgspec.field(default=NO_RAW, name="Concrete Inputs")


class _EventFields(msgspec.Struct):
    """The fields of an entry of ``traceEvents`` the model uses, other than its times."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = 0
    tid: int | str = 0
    id: int | str | None = None
    args: Args = msgspec.field(default_factory=Args)


class Event(_EventFields):
    """An event with numeric times: an integer text stays an int, a decimal a float."""

    ts: int | float = math.nan  # NaN: absent; such events are skipped with a warning
    dur: int | float = 0


class TsTextEvent(_EventFields):
    """An event with the JSON text of its ``ts`` (converted exactly later)."""

    ts: msgspec.Raw = NO_TEXT
    dur: int | float = 0


class TextEvent(_EventFields):
    """An event with the JSON text of both its times."""

    ts: msgspec.Raw = NO_TEXT
    dur: msgspec.Raw = ZERO_TEXT


AnyEvent = Event | TsTextEvent | TextEvent


@dataclass
class MetaEvent:
    """A ``ph: M`` event: names and sort order of processes and threads."""

    name: str
    pid: Any
    tid: Any
    value: str | None
    labels: str | None
    sort_index: int | None
