"""Keep the cyclic garbage collector's full passes off the frames of an open trace.

A full (generation 2) pass of Python's collector walks every object it tracks:
Textual's widgets, the loaded modules and a trace's analysis come to ~80 k
objects, 50-120 ms on the 2-core machine, and the pass lands on whatever frame is
being drawn.  It was the slowest frame of ``bench/tui_frame_links.py`` in every
state (64-81 ms on the H200 at 10 M events, the median 15 ms), and the same with a
3,000-event trace: the trace's columns are numpy arrays the collector never walks.

What is alive once a trace is loaded, or analysed, lives as long as its pane, so it
is frozen (``gc.freeze``: out of the collector's sight, still freed by reference
counting); full passes then walk only what was made since.  When a pane goes (at
the latest when the app quits), everything is thawed so that cycles made unreachable
meanwhile are collected again, as a process running many apps (the tests) needs.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """Hide every object tracked now from later collections (O(1): moves a list)."""
    gc.freeze()


def thaw() -> None:
    """Undo ``freeze_long_lived``: the next full pass walks (and may free) them again."""
    gc.unfreeze()
