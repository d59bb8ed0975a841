"""``attn-tui export TRACE... --parquet DIR``: lives with ``sql`` (``tui.commands.sql``),
whose views it writes; this module is the name the command line dispatches to."""

from __future__ import annotations

from tui.commands.sql import run

__all__ = ["run"]
