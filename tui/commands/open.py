"""``attn-tui open PATH [PATH ...]``: the Textual app (never imports torch).

With no PATH, the traces of the current folder are listed to pick from first
(``tui.commands.open_picker``).

When no file loads (a text file, a missing one) there is nothing to browse: the
errors go to stderr and the exit status is 2, as in the headless commands, and
the app does not start at all when the loads fail at once (``SETTLE_S``).  If
some files load and others fail, the app opens with the good ones.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

from profiling.errors import AttnTuiError

LOADER_THREAD_PREFIX = "attn-tui load "

SETTLE_S = 1.0
"""How long after the loads start ``open`` waits to see whether they all failed at
once, before starting the app.  Importing Textual takes about half of it anyway; a
good file's load gets past its first checks in milliseconds, a big one's first scan
may take longer, so the wait is capped."""


def run(args: argparse.Namespace) -> int:
    if not args.paths:
        from tui.commands.open_picker import pick

        chosen = pick(os.curdir)
        if not chosen:
            return 0  # left the picker without choosing
        args.paths = chosen
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing and len(missing) == len(args.paths):
        raise AttnTuiError(
            "no such file", where=missing[0], hint="give the path of a .json or .json.gz trace"
        )
    from tui.job_session import open_targets
    from tui.preload import Preloads

    # Start every load before importing Textual: start-up overlaps the load, so the
    # first frame comes as soon as the columns exist (bench/tui_first_frame.py).
    no_cache = bool(getattr(args, "no_cache", False))
    # the ranks of one job open as one tab (tui.job_session)
    targets, load = open_targets(list(args.paths), getattr(args, "align", None) or "clock")
    preloads = Preloads(targets, no_cache=no_cache, load=load)
    from tui.app import AttnTuiApp  # Textual is imported only for this subcommand

    preloads.settle(SETTLE_S)
    failures = preloads.failures()
    if failures:
        return _report(failures)
    app = AttnTuiApp(targets, no_cache=no_cache, loader=preloads.loader,
                     screenshot_dir=getattr(args, "screenshot_dir", None))  # fmt: skip
    app.run()
    code = int(app.return_code or 0)
    failures = preloads.failures()
    if failures and code == 0:
        code = _report(failures)  # the app showed them; the exit status says so too
    if any(t.name.startswith(LOADER_THREAD_PREFIX) and t.is_alive() for t in threading.enumerate()):
        # Quit while a file was still loading: the terminal is restored already;
        # do not wait for the loader (or its decoding processes) to finish.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _report(lines: list[str]) -> int:
    """Every file's error, one line each on stderr, as the headless commands do: exit 2."""
    from tui.names import visible

    for line in lines:
        print(f"attn-tui open: {visible(line)}", file=sys.stderr)
    return 2
