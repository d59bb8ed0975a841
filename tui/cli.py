"""The ``attn-tui`` command line: argparse subcommands, each run by its own module.

Every subcommand lives in ``tui/commands/<name>.py`` as ``run(args) -> int`` and is
imported only when chosen, so ``attn-tui stats`` never imports Textual and
``attn-tui open`` never imports torch.  User errors (``AttnTuiError``) become one
line on stderr and exit status 2; a traceback is shown only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

# NumPy's huge-page hint off for the columns a load builds, unless the user set it: they
# are built once and touched once, and on a VM whose kernel compacts each huge page on
# first touch (THP defrag "madvise") the 1 GB first open took 7-16 % longer with it, in 7
# of 8 pairs (bench/bench_hugepage.py).  NumPy reads it once, on import: hence here.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

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
MULTI_RANK_VARIANTS = ("ring", "sdpa_cp")
"""``profiling.capture.config.MULTI_RANK_VARIANTS``: variants of ``capture --nproc N``."""


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


def _common(parser: argparse.ArgumentParser, *, cache: bool = False) -> None:
    """Options every subcommand takes.  ``--debug`` is accepted after the subcommand
    too (SUPPRESS keeps a subcommand that lacks it from resetting the top-level one)."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help=DEBUG_HELP)
    if cache:
        parser.add_argument("--no-cache", action="store_true",
                            help="neither read nor write the trace's index cache "
                                 "(traces of 4 MB or more get one)")
        parser.add_argument("--jobs", type=_positive_int, metavar="N",
                            help="processes that decode a big trace (default: every core)")


DEBUG_HELP = "show the traceback of an error (works before or after the subcommand)"
PATHS_HELP = ("a trace (.json or .json.gz), or a folder of traces (a capture folder opens "
              "in its manifest's order); key_averages oracles and manifests are skipped")
PATH_HELP = "a trace (.json or .json.gz), or a folder holding one trace"
PATH_OR_JOB_HELP = PATH_HELP + "; or a job: its folder or its rank traces"
OPEN_PATHS_HELP = PATHS_HELP + "; none: pick from the traces in the current folder"


SORT_KEYS = (
    "self_cpu_time_total", "cpu_time_total", "cpu_time",
    "self_device_time_total", "device_time_total", "device_time", "count",
)
"""``profiling.analysis.key_averages.SORT_KEYS``, repeated so that parsing the command
line does not import the analysis (a test keeps the two equal)."""

SORT_HELP = (
    "column to sort by, largest first: one of " + ", ".join(SORT_KEYS)
    + " (torch's sort_by keys; self_cuda_time_total and the other cuda_/xpu_ spellings "
    "work too) (default: %(default)s)"
)

SHAPE_DEFAULTS = {
    "batch": (8, 2), "heads": (16, 4), "seq": (1024, 256), "head_dim": (64, 64),
    "dtype": ("bf16", "fp32"),
}
"""(GPU, CPU) defaults of ``profiling.capture.config`` for the help text, repeated so
that the viewing commands never import capture (a test keeps them equal)."""


def _shape_help(what: str, key: str) -> str:
    gpu, cpu = SHAPE_DEFAULTS[key]
    return f"{what} (default: {gpu} on a GPU, {cpu} on the CPU)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="attn-tui",
        description="Explore PyTorch profiler traces of attention in the terminal.",
    )
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubcommandParser,
                                help="one of these ('attn-tui COMMAND --help' for its options)")
    sub.required = True
    _capture_parser(sub)

    p = sub.add_parser("open", help="browse traces in the terminal (the TUI)")
    p.add_argument("paths", nargs="*", metavar="PATH", help=OPEN_PATHS_HELP)
    p.add_argument(
        "--screenshot-dir", metavar="DIR",
        help="folder for ctrl+s screenshots (default: $ATTN_TUI_SCREENSHOT_DIR, else here)",
    )  # fmt: skip
    _common(p, cache=True)

    p = sub.add_parser("stats", help="what is in a trace: lanes, regions, copies, warnings")
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--json", action="store_true", help="print JSON (README: JSON output)")
    _common(p, cache=True)

    p = sub.add_parser("table", help="the key_averages op table, as torch prints it")
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--sort", default="self_device_time_total", metavar="KEY", help=SORT_HELP)
    p.add_argument("--limit", type=_positive_int, metavar="N",
                   help="show only the first N rows (torch's row_limit; default: all)")
    p.add_argument(
        "--python-functions", action="store_true",
        help="count python_function events as torch >= 2.13 does (default: left out, as 2.11)",
    )
    p.add_argument("--json", action="store_true",
                   help="print the rows as JSON (torch's FunctionEventAvg fields)")
    _common(p, cache=True)

    p = sub.add_parser("kernels", help="GPU events of every region instance")
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--region", metavar="NAME",
                   help="region to list (default: the attention regions, else the top-level "
                        "annotations, else ProfilerStep*; stderr says which)")
    p.add_argument("--instance", type=_non_negative_int, metavar="K",
                   help="only this instance of the region (0-based; default: every one)")
    p.add_argument("--json", action="store_true", help="print the instances as JSON")
    _common(p, cache=True)

    p = sub.add_parser("compare", help="traces side by side")
    p.add_argument("paths", nargs="+", metavar="PATH", help=PATHS_HELP)
    p.add_argument("--region", default="attn_fwd", metavar="NAME",
                   help="record_function region to compare (default: %(default)s)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print one JSON object per trace")
    fmt.add_argument("--markdown", action="store_true", help="print a Markdown table")
    _common(p, cache=True)

    _diff_parser(sub)

    p = sub.add_parser("findings", help="what an expert would point out, with evidence")
    p.add_argument("paths", nargs="+", metavar="PATH", help=PATH_OR_JOB_HELP)  # --align: ranks
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the findings as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print the findings as Markdown")
    _common(p, cache=True)

    _slices_parser(sub)
    importlib.import_module("tui.commands.ranks").add_parser(sub)  # issue 14
    _sql_parsers(sub)

    p = sub.add_parser("variants", help="which variants this machine can capture, and why not")
    _common(p)

    p = sub.add_parser("cache", help="the folder of trace indexes in the user cache")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--info", action="store_true",
                      help="where it is, its size and cap, and each trace in it (the default)")
    what.add_argument("--clear", action="store_true", help="remove every index in it")
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    _common(p)
    return parser


def _diff_parser(sub: Any) -> None:
    """``diff``: its own function so that build_parser stays short."""
    p = sub.add_parser("diff", help="kernel sequences of a region aligned: what the first "
                       "trace launches that each other one does not, and back")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help=PATHS_HELP + "; the first is the base, each other one is set against it")
    p.add_argument("--region", metavar="NAME",
                   help="region to diff (default: the first attention region, as kernels "
                        "chooses them, else the first top-level annotation, else ProfilerStep*)")
    p.add_argument("--instance", type=_non_negative_int, metavar="K",
                   help="diff instance K of the region in every trace (0-based; default: each "
                        "trace's median instance by GPU time)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true",
                     help="print a list of pairwise diffs (the first trace against each other)")
    fmt.add_argument("--markdown", action="store_true", help="print a Markdown table")
    _common(p, cache=True)


def _sql_parsers(sub: Any) -> None:
    """``sql`` and ``export`` (issue 16): their options live with the command."""
    from tui.commands.sql import add_parsers

    add_parsers(sub, _common)


def _slices_parser(sub: Any) -> None:
    from tui.commands.slices import DESCRIPTION, time_arg

    p = sub.add_parser("slices", help="what is in a time range: per lane kind and name, "
                       "count and time", description=DESCRIPTION)
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    # '-5us' is a (negative) time, not an option: Python 3.13's rule, which time_arg refuses
    p._negative_number_matcher = re.compile(r"^-\.?\d")
    p.add_argument("--from", dest="start", type=time_arg, metavar="T",
                   help="range start, e.g. 1.2ms (default: the trace's first event)")
    p.add_argument("--to", dest="end", type=time_arg, metavar="T",
                   help="range end; a bare number is µs (default: the trace's end)")
    p.add_argument("--lanes", choices=("cpu", "gpu", "all"), default="all",
                   help="which lanes to list (default: %(default)s)")
    p.add_argument("--json", action="store_true",
                   help="print the range's figures and rows as JSON")
    _common(p, cache=True)


def _capture_parser(sub: Any) -> None:
    p = sub.add_parser("capture", help="profile attention variants with torch.profiler")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every variant (the default)")
    which.add_argument(
        "--variant", action="append", choices=VARIANTS + MULTI_RANK_VARIANTS, metavar="NAME",
        help=f"one variant (repeatable): {', '.join(VARIANTS)}; with --nproc also "
             f"{', '.join(MULTI_RANK_VARIANTS)} (sequence sharded across the ranks)",
    )
    p.add_argument("--out", default="traces", metavar="DIR",
                   help="folder for the traces, oracles and manifest (default: %(default)s)")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                   help="where to run: auto takes CUDA when torch sees a GPU (default: auto)")
    p.add_argument("--batch", type=_positive_int, metavar="B",
                   help=_shape_help("batch size", "batch"))
    p.add_argument("--heads", type=_positive_int, metavar="H",
                   help=_shape_help("attention heads", "heads"))
    p.add_argument("--seq", type=_positive_int, metavar="S",
                   help=_shape_help("sequence length", "seq"))
    p.add_argument("--head-dim", type=_positive_int, metavar="D",
                   help=_shape_help("head dimension", "head_dim"))
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"),
                   help=_shape_help("data type", "dtype"))
    p.add_argument("--wait", type=_non_negative_int, default=1, metavar="N",
                   help="profiler schedule: steps skipped first (default: %(default)s)")
    p.add_argument("--warmup", type=_non_negative_int, default=1, metavar="N",
                   help="profiler schedule: steps traced but not kept (default: %(default)s)")
    p.add_argument("--active", type=_positive_int, default=3, metavar="N",
                   help="profiler schedule: steps kept, one attn_fwd region each "
                        "(default: %(default)s)")
    p.add_argument("--gzip", action="store_true", help="write .json.gz traces")
    p.add_argument("--kernel-repo", metavar="REPO_OR_DIR",
                   help="hub repo id or local folder for the 'kernels' variant "
                        "(default: the hub's flash kernel, else attn-tui's bundled one)")
    p.add_argument("--force", action="store_true", help="overwrite existing traces")
    p.add_argument("--nproc", type=_positive_int, metavar="N",
                   help="run each variant as a job of N ranks through torch.distributed.run "
                        "(NCCL on GPUs, one GPU a rank; gloo on CPU): one trace per rank, "
                        "<variant>.rank<k>.json")
    _common(p)


def _finish_warming() -> None:
    """A first open's warm-up (``tui.loading.analysed_for_command``) ends before the
    process does; its threads are daemons, so an interrupt never waits for them."""
    if "tui.loading" in sys.modules:
        from tui.loading import finish_warming

        finish_warming()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
