"""The smallest terminal the app can draw in, and what it says below that (pure).

Below ``MIN_WIDTH`` x ``MIN_HEIGHT`` the tabs, status line, ruler, timeline,
details and footer do not fit: rather than a garbled screen, the app shows one
message until the terminal is big enough again (everything stays loaded).
"""

from __future__ import annotations

MIN_WIDTH = 40
MIN_HEIGHT = 10


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


def too_small_message(width: int, height: int) -> str:
    """Lines of 20 cells at most: the message itself must fit a tiny terminal."""
    size = f"{width}x{height}; needs {MIN_WIDTH}x{MIN_HEIGHT}"
    return f"Terminal too small\n{size}\nEnlarge it; q quits"
