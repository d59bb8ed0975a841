"""The ``attn-tui`` command line: argparse subcommands, each run by its own module.

Every subcommand lives in ``tui/commands/<name>.py`` as ``run(args) -> int`` and is
imported only when chosen, so ``attn-tui stats`` never imports Textual and
``attn-tui open`` never imports torch.  User errors (``AttnTuiError``) become one
line on stderr and exit status 2; a traceback is shown only with ``--debug``.
Each subcommand's options are in ``tui.cli_options``; only the chosen one's are added.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from tui.cli_options import DEBUG_HELP, SUBCOMMANDS

# NumPy's huge-page hint off for the columns a load builds, unless the user set it: they
# are built once and touched once, and on a VM whose kernel compacts each huge page on
# first touch (THP defrag "madvise") the 1 GB first open took 7-16 % longer with it, in 7
# of 8 pairs (bench/bench_hugepage.py).  NumPy reads it once, on import: hence here.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


class _SubcommandParser(_Parser):
    """A subcommand's parser: its PATHs may come after options, as people type them
    (``compare a.json --region r b.json``); plain argparse took ``a.json`` alone and
    refused ``b.json`` as an unrecognized argument."""

    _intermixed = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        if self._intermixed:  # the two passes of parse_known_intermixed_args
            return super().parse_known_args(args, namespace)
        self._intermixed = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed = False


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand.  Given the command line it is for (``argv``),
    only the chosen subcommand gets its options; the others are listed by name and
    help alone, which is all a parse of that line reads from them.  argparse spends a
    formatter and gettext's file look-ups on each option, and three command modules
    were imported for theirs: importing ``tui.cli``, building and parsing one line
    took 33 ms (median) on the 2-core machine with every subcommand's options, 23 ms
    with one's."""
    parser = _Parser(
        prog="attn-tui",
        description="Explore PyTorch profiler traces of attention in the terminal.",
    )
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubcommandParser,
                                help="one of these ('attn-tui COMMAND --help' for its options)")
    sub.required = True
    chosen = None if argv is None else _chosen(argv)
    for name, (help_text, add_options) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if chosen is None or chosen == name:
            add_options(p)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand of a command line: its first word that is no option (the
    top-level options, ``--debug`` and ``--help``, take no value); None when that is
    no subcommand (the parse then reports it, with every subcommand built)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in SUBCOMMANDS else None


def _finish_warming() -> None:
    """A first open's warm-up (``tui.loading.analysed_for_command``) ends before the
    process does; its threads are daemons, so an interrupt never waits for them."""
    if "tui.loading" in sys.modules:
        from tui.loading import finish_warming

        finish_warming()


def main(argv: Sequence[str] | None = None) -> int:
    """The program (``argv`` None: the process's arguments), or one command line."""
    if argv is not None:
        return _main(argv)
    code = _main(sys.argv[1:])
    # The process ends now: what is left is freed at exit by reference counting, and
    # hiding it from the collector spares the exit's full passes (objects arrays of
    # texts, the model's lists): 40 ms of a reopened 'kernels' on 2 cores.
    import gc

    gc.freeze()
    return code


def _main(argv: Sequence[str]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    _one_blas_thread(args.command)  # before anything imports NumPy
    from tui.prestart import prestart

    prestart(args)  # a first open's decoding pool starts while the command imports
    from profiling.errors import AttnTuiError

    if getattr(args, "jobs", None) is not None:
        from profiling.trace.loader import set_default_jobs

        set_default_jobs(args.jobs)  # every load of this command, the TUI's threads too

    try:
        from tui.inputs import resolve_args

        resolve_args(args, args.command)  # folders -> traces; oracles, manifests skipped
        module = importlib.import_module(f"tui.commands.{args.command}")
        code = int(module.run(args) or 0)
        _finish_warming()
        return code
    except AttnTuiError as exc:
        if args.debug:
            raise
        _say(args.command, exc.line())
        _finish_warming()
        return exc.exit_code
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"attn-tui {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not the user's doing: still one line, no traceback
        if args.debug:
            raise
        _say(args.command, f"internal error ({type(exc).__name__}: {exc}) "
             "(this is a bug: rerun with --debug and report the traceback)")
        return 70  # EX_SOFTWARE


def _one_blas_thread(command: str) -> None:
    """NumPy's OpenBLAS starts a thread per core as NumPy is imported (on 2 cores
    40 ms of a 0.25 s reopen of ``stats``, and 0.13 s of CPU; more on more cores),
    and the viewing commands multiply no float matrices: they get one thread, so the
    pool is never started.  Integer products (``times``) never use BLAS, so no output
    changes.  The commands that import torch keep the default (torch may use OpenBLAS
    on a CPU), and a setting of the user's own wins."""
    if command not in ("capture", "variants"):
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _say(command: str, line: str) -> None:
    """One line on stderr; control characters from paths or names are shown escaped."""
    from tui.names import visible

    print(f"attn-tui {command}: {visible(line)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
