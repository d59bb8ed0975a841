"""Counts in the status line read as English: ``1 warning``, ``2 warnings``."""

from tui.fmt import counted


def test_counted_is_singular_for_one_only():
    assert counted(1, "warning") == "1 warning"
    assert counted(0, "warning") == "0 warnings"
    assert counted(2, "lane") == "2 lanes"
    assert counted(1234567, "event") == "1,234,567 events"
