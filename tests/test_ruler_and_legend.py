"""Issue 11, item 6: ruler labels with units that fit the zoom, zoom-out stopping
at the whole trace, copies that show without colour, and the legend."""

from __future__ import annotations

import re

import pytest

from tui.ruler import ruler_text, tick_format, tick_label
from tui.viewport import Viewport

LABEL = re.compile(r"┊(0|[+-]\d+(?:\.\d+)?) (s|ms|µs|ns)")


def _labels(text: str) -> list[tuple[str, str]]:
    return LABEL.findall(text)


def test_labels_are_signed_offsets_in_one_unit():
    vp = Viewport(total=5_000_000, width=100)
    labels = _labels(ruler_text(vp))
    assert labels[0] == ("0", "ms") and labels[1] == ("+1", "ms")
    assert {u for _, u in labels} == {"ms"}


def test_deep_zoom_far_into_the_trace_reads_in_a_large_unit():
    vp = Viewport(total=5_000_000, width=100)
    vp.show(3_262_000, 3_262_100)
    labels = _labels(ruler_text(vp))
    assert len(labels) >= 3 and {u for _, u in labels} == {"ms"}
    assert all(len(v.split(".")[1]) == 5 for v, _ in labels)  # the 20 ns step's digits
    assert "3262050 ns" not in ruler_text(vp)
    values = [float(v) * 1e6 for v, _ in labels]  # back to ns: on the 20 ns grid
    assert all(v % 20 == pytest.approx(0, abs=1e-3) for v in values)


def test_labels_count_from_a_given_zero_with_fitting_units():
    vp = Viewport(total=5_000_000, width=100)
    vp.show(3_262_000, 3_282_100)
    labels = _labels(ruler_text(vp, zero=3_270_000))
    assert ("0", "µs") in labels and ("-5", "µs") in labels and ("+10", "µs") in labels


def test_tick_label_format():
    assert tick_label(12_500, *tick_format(40_000, 500)) == "+12.5 µs"
    assert tick_label(-2_000_000, *tick_format(5_000_000, 1_000_000)) == "-2 ms"
    assert tick_label(0.0, *tick_format(10, 1)) == "0 ns"
    assert tick_format(1_500_000_000, 200_000_000) == (1_000_000_000, "s", 1)


def test_zoom_out_stops_at_the_whole_trace():
    vp = Viewport(total=1_000_000, width=100)
    fit = (vp.start, vp.span)
    assert vp.start <= 0 and vp.end >= 1_000_000  # fit-all shows everything
    vp.zoom_out()
    assert (vp.start, vp.span) == fit
    vp.zoom_in(10)
    for _ in range(20):
        vp.zoom_out(10)
    assert vp.span == fit[1]
