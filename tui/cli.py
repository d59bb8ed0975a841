"""The ``attn-tui`` command line: argparse subcommands, each run by its own module.

Every subcommand lives in ``tui/commands/<name>.py`` as ``run(args) -> int`` and is
imported only when chosen, so ``attn-tui stats`` never imports Textual and
``attn-tui open`` never imports torch.  User errors (``AttnTuiError``) become one
line on stderr and exit status 2; a traceback is shown only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

VARIANTS = (
    "naive",
    "inplace",
    "sdpa_math",
    "sdpa_flash",
    "sdpa_efficient",
    "sdpa_cudnn",
    "kernels",
    "flex",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="attn-tui",
        description="Explore PyTorch profiler traces of attention in the terminal.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("capture", help="profile attention variants with torch.profiler")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every variant (the default)")
    which.add_argument(
        "--variant", action="append", choices=VARIANTS, metavar="NAME",
        help=f"one variant (repeatable): {', '.join(VARIANTS)}",
    )
    p.add_argument("--out", default="traces", help="output folder (default: traces)")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument("--batch", type=_positive_int)
    p.add_argument("--heads", type=_positive_int)
    p.add_argument("--seq", type=_positive_int)
    p.add_argument("--head-dim", type=_positive_int)
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"))
    p.add_argument("--wait", type=_non_negative_int, default=1, help="profiler schedule wait")
    p.add_argument("--warmup", type=_non_negative_int, default=1, help="profiler schedule warmup")
    p.add_argument("--active", type=_positive_int, default=3, help="profiled steps")
    p.add_argument("--gzip", action="store_true", help="write .json.gz traces")
    p.add_argument("--kernel-repo", help="hub repo id or local folder for the 'kernels' variant")
    p.add_argument("--force", action="store_true", help="overwrite existing traces")

    p = sub.add_parser("open", help="browse traces in the terminal (the TUI)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the index cache")

    p = sub.add_parser("stats", help="what is in a trace: lanes, regions, copies, warnings")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-cache", action="store_true")

    p = sub.add_parser("table", help="the key_averages op table, as torch prints it")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--sort", default="self_device_time_total", help="column to sort by")
    p.add_argument("--limit", type=_positive_int)
    p.add_argument(
        "--python-functions", action="store_true",
        help="count python_function events as torch >= 2.13 does (default: left out, as 2.11)",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-cache", action="store_true")

    p = sub.add_parser("kernels", help="GPU events of every region instance")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--region", default="attn_fwd", help="region name (default: attn_fwd)")
    p.add_argument("--instance", type=_non_negative_int, help="only this instance (0-based)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-cache", action="store_true")

    p = sub.add_parser("compare", help="traces side by side")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--region", default="attn_fwd")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--markdown", action="store_true")
    p.add_argument("--no-cache", action="store_true")

    p = sub.add_parser("findings", help="what an expert would point out, with evidence")
    p.add_argument("path", metavar="PATH")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--markdown", action="store_true")
    p.add_argument("--no-cache", action="store_true")

    sub.add_parser("variants", help="which variants this machine can capture, and why not")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from profiling.errors import AttnTuiError

    try:
        module = importlib.import_module(f"tui.commands.{args.command}")
        return int(module.run(args) or 0)
    except AttnTuiError as exc:
        if args.debug:
            raise
        _say(args.command, exc.line())
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


def _say(command: str, line: str) -> None:
    """One line on stderr; control characters from paths or names are shown escaped."""
    from tui.names import visible

    print(f"attn-tui {command}: {visible(line)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
