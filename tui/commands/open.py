"""``attn-tui open PATH [PATH ...]``: the Textual app (never imports torch)."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from profiling.errors import AttnTuiError

LOADER_THREAD_PREFIX = "attn-tui load "


def run(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing and len(missing) == len(args.paths):
        raise AttnTuiError(
            "no such file", where=missing[0], hint="give the path of a .json or .json.gz trace"
        )
    from tui.preload import Preloads

    # Start every load before importing Textual: start-up overlaps the load, so the
    # first frame comes as soon as the columns exist (bench/tui_first_frame.py).
    no_cache = bool(getattr(args, "no_cache", False))
    preloads = Preloads(list(args.paths), no_cache=no_cache)
    from tui.app import AttnTuiApp  # Textual is imported only for this subcommand

    app = AttnTuiApp(list(args.paths), no_cache=no_cache, loader=preloads.loader)
    app.run()
    code = int(app.return_code or 0)
    if any(t.name.startswith(LOADER_THREAD_PREFIX) and t.is_alive() for t in threading.enumerate()):
        # Quit while a file was still loading: the terminal is restored already;
        # do not wait for the loader (or its decoding processes) to finish.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
