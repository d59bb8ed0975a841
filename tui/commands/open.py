"""``attn-tui open PATH [PATH ...]``: the Textual app (never imports torch)."""

from __future__ import annotations

import argparse
import os

from profiling.errors import AttnTuiError


def run(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing and len(missing) == len(args.paths):
        raise AttnTuiError(
            "no such file", where=missing[0], hint="give the path of a .json or .json.gz trace"
        )
    from tui.app import AttnTuiApp  # Textual is imported only for this subcommand

    app = AttnTuiApp(list(args.paths), no_cache=bool(getattr(args, "no_cache", False)))
    app.run()
    return int(app.return_code or 0)
