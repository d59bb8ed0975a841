"""``tui.fmt``: the one time formatter (readable and torch-table styles) and ruler ticks."""

from __future__ import annotations

import math

import pytest

from tui.fmt import fmt_ns, fmt_tick, fmt_time, fmt_us, nice_step


def test_fmt_ns_units():
    assert fmt_ns(0) == "0 ns"
    assert fmt_ns(850) == "850 ns"
    assert fmt_ns(1250) == "1.25 µs"
    assert fmt_ns(12_345_000) == "12.3 ms"
    assert fmt_ns(2e9) == "2 s"
    assert fmt_ns(-1500) == "-1.5 µs"


def test_rounding_never_shows_a_thousand_of_a_unit():
    assert fmt_ns(999.6) == "1 µs"
    assert fmt_ns(999_960) == "1 ms"
    assert fmt_ns(999_960_000) == "1 s"
    assert fmt_ns(999_400) == "999 µs"
    assert fmt_ns(-0.4) == "0 ns"  # no "-0"


def test_unknown_is_a_dash():
    assert fmt_ns(None) == "-"
    assert fmt_ns(math.nan) == "-"
    assert fmt_time(math.inf, "us") == "-"
    assert fmt_us(None) == "-"


@pytest.mark.parametrize("ns", [0, 7, 850, 1250, 95_940, 1_070_000, 12_345_000, 2e9, -3_456])
def test_every_unit_names_the_same_duration(ns: float):
    same = {fmt_time(ns, "ns"), fmt_time(ns / 1e3, "us"), fmt_time(ns / 1e6, "ms"),
            fmt_time(ns / 1e9, "s")}
    assert len(same) == 1, same


def test_readable_keeps_three_significant_digits():
    assert fmt_time(95.94, "us") == "95.9 µs"
    assert fmt_time(1070, "us") == "1.07 ms"
    assert fmt_time(1.079, "ms") == "1.08 ms"
    assert fmt_time(1.079, "ms", digits=4) == "1.079 ms"


def test_torch_style_is_torchs_own_format():
    profiler_util = pytest.importorskip("torch.autograd.profiler_util")
    for us in (0.0, 0.0004, 12.3456, 999.9996, 1234.5, 999_999.9, 2_000_000.0, 3.5e7):
        assert fmt_us(us) == profiler_util._format_time(us), us
        assert fmt_time(us * 1000, "ns", style="torch") == fmt_us(us)


def test_torch_style_examples():
    assert fmt_us(12.3456) == "12.346us"
    assert fmt_us(1234.5) == "1.234ms"  # torch rounds to three decimals in its unit
    assert fmt_us(-1234.5) == "-1.234ms"  # a difference keeps its unit


def test_ticks_use_one_unit_and_nice_steps():
    step = nice_step(5_250_000, 110)
    assert step in (500_000, 1_000_000)
    assert [fmt_tick(t, 500_000) for t in (0, 500_000, 1_000_000)] == ["0 ms", "0.5 ms", "1 ms"]
    assert fmt_tick(-0.0, 1000) == "0 µs"


def test_one_time_formatter_for_analysis_and_ui() -> None:
    """The analysis (findings' sentences) and the TUI/CLI format times with one function."""
    from profiling.analysis import units
    from tui import fmt

    assert fmt.fmt_time is units.fmt_time and fmt.fmt_ns is units.fmt_ns
    assert fmt.fmt_us is units.fmt_us
