"""Issue 11, item 6: ruler labels with units that fit the zoom, zoom-out stopping
at the whole trace, copies that show without colour, and the legend."""

from __future__ import annotations

import re

import pytest

from profiling.trace.model import Kind
from tui.glyphs import SEPARATOR, copy_label, legend_text, low_colour, run_text
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


# ---- copies and neighbours without colour (tui.glyphs) ----


MEMCPY, MEMSET, KERNEL = int(Kind.MEMCPY), int(Kind.MEMSET), int(Kind.KERNEL)
DTOD = "Memcpy DtoD (Device -> Device)"


@pytest.mark.parametrize(("n", "want"), [
    (1, "C"), (2, "Mc"), (3, "Mc "), (7, "Mc DtoD"), (11, "Memcpy DtoD"), (40, DTOD.ljust(40)),
])  # fmt: skip
def test_a_memcpy_always_shows_a_letter(n, want):
    assert copy_label(MEMCPY, DTOD, n) == want
    assert run_text(MEMCPY, DTOD, n, low=True, touches_next=True) == want


def test_a_memset_and_dense_copies_show_letters():
    assert [copy_label(MEMSET, "Memset (Device)", n) for n in (1, 2, 6)] == ["S", "Ms", "Memset"]
    assert run_text(MEMCPY, "", 1, dense=3) == "C"
    assert run_text(MEMSET, "", 1, dense=20) == "S"
    assert run_text(KERNEL, "", 1, dense=2) == "░" and run_text(KERNEL, "", 1, dense=20) == "▓"


def test_low_colour_is_no_color_or_16_colours():
    assert low_colour(True, "truecolor") and low_colour(False, "standard")
    assert low_colour(False, None) and low_colour(False, "windows")
    assert not low_colour(False, "256") and not low_colour(False, "truecolor")
    assert not low_colour(False, "standard", headless=True) and low_colour(True, "256", True)


def test_touching_events_end_in_a_separator_only_in_low_colour():
    for n in (1, 2, 3, 8, 30):
        low = run_text(KERNEL, "softmax_warp_forward", n, touches_next=True, low=True)
        assert len(low) == n and low.endswith(SEPARATOR)
        rich = run_text(KERNEL, "softmax_warp_forward", n, touches_next=True, low=False)
        assert len(rich) == n and SEPARATOR not in rich
    assert not run_text(KERNEL, "k", 5, touches_next=False, low=True).endswith(SEPARATOR)


def _gpu_doc() -> dict:
    """Three kernels back to back, then a Memcpy and a Memset, on one stream."""
    def gpu(cat: str, name: str, ts_us: float, dur_us: float) -> dict:
        return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts_us,
                "dur": dur_us, "args": {"device": 0, "stream": 7}}

    return {"traceEvents": [
        gpu("kernel", "alpha_kernel", 0, 10), gpu("kernel", "beta_kernel", 10, 10),
        gpu("kernel", "gamma_kernel", 20, 10), gpu("gpu_memcpy", DTOD, 30, 0.2),
        gpu("gpu_memset", "Memset (Device)", 30.2, 0.2), gpu("kernel", "delta_kernel", 30.4, 9.6),
    ]}  # fmt: skip


def _stream_line(app) -> str:
    from tui.widgets.timeline import Timeline

    timeline = app.query_one(Timeline)
    model = timeline.model
    index = next(i for i, s in enumerate(model.rows)
                 if s.kind == "lane" and model.trace.lanes[s.lane].kind == "gpu")
    return timeline.render_line(index - int(timeline.scroll_y)).text[model.label_cells:]


async def test_no_color_keeps_neighbours_apart_and_copies_lettered(write_trace, monkeypatch):
    from tui.app import AttnTuiApp

    from .test_tui_pilot import wait_loaded

    path = write_trace(_gpu_doc()["traceEvents"])
    monkeypatch.setenv("NO_COLOR", "1")
    app = AttnTuiApp([str(path)], theme="attn-dark")
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_loaded(pilot)
        line = _stream_line(app)
    assert app.no_color
    boxes = [b.strip() for b in line.strip().split(SEPARATOR)]
    assert boxes[:3] == ["alpha_kernel", "beta_kernel", "gamma_kernel"]
    assert re.search(r"[CS]", boxes[3])  # the copies, narrower than a cell each: a letter
    assert "delta_kernel" in line


async def test_in_colour_the_boxes_have_no_separator(write_trace, monkeypatch):
    from tui.app import AttnTuiApp
    from tui.widgets.timeline import Timeline

    from .test_tui_pilot import wait_loaded

    monkeypatch.delenv("NO_COLOR", raising=False)
    path = write_trace(_gpu_doc()["traceEvents"])
    app = AttnTuiApp([str(path)], theme="attn-dark")
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_loaded(pilot)
        assert not app.query_one(Timeline).low_colour
        line = _stream_line(app)
    assert SEPARATOR not in line and "alpha_kernel" in line and "beta_kernel" in line


# ---- the legend ----


def test_legend_names_copies_and_density():
    text = legend_text()
    for word in ("Memcpy", "Memset", "density", "░", "▒", "▓", "Mc", "Ms", SEPARATOR, "+12.5 µs"):
        assert word in text, word


async def test_l_opens_the_legend_and_help_ends_with_it(write_trace):
    from textual.widgets import Static

    from tui.app import AttnTuiApp
    from tui.screens.help import HelpScreen
    from tui.screens.legend import LegendScreen

    from .test_tui_pilot import wait_loaded

    app = AttnTuiApp([str(write_trace(_gpu_doc()["traceEvents"]))], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, LegendScreen)
        shown = str(app.screen.query_one("#legend-text", Static).render())
        assert "Memcpy" in shown and "kernel density" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, LegendScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        legend = str(app.screen.query_one("#help-legend", Static).render())
        assert "Timeline legend" in legend and "Memset" in legend
