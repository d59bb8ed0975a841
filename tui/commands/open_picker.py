"""``attn-tui open`` with no PATH: the current folder's traces, to pick from.

In a terminal, a small picker app (``tui.screens.picker``) runs before the
viewer and returns the chosen paths.  Without one (a pipe, a script) there is
nothing to pick with: the listing goes to stderr and the command fails with
one line saying to name the traces.  A folder with no trace is one line and
exit status 2, as for a folder given as PATH.
"""

from __future__ import annotations

import os
import sys

from profiling.errors import AttnTuiError


def pick(folder: str, *, interactive: bool | None = None) -> list[str] | None:
    """The traces chosen in ``folder``'s picker (None: left without choosing)."""
    from tui.trace_list import list_traces, listing_lines

    entries = list_traces(folder)
    where = os.path.abspath(folder)
    if not entries:
        raise AttnTuiError("no trace in this folder", where,
                           "give a trace or a folder of traces: attn-tui open PATH")
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        for line in listing_lines(entries):
            print(line, file=sys.stderr)
        raise AttnTuiError(f"no PATH given and no terminal to pick one of these "
                           f"{len(entries)} traces in", where,
                           "name the traces to open: attn-tui open PATH ...")
    from tui.screens.picker import PickerApp

    chosen = PickerApp(entries, where).run()
    return [os.path.normpath(p) for p in chosen] if chosen else None
