"""Each ``attn-tui`` subcommand's help line and options (``SUBCOMMANDS``).

``tui.cli.build_parser`` lists every subcommand and adds the options of the one a
command line chooses.  Names the other packages own (variants, sort keys, capture
defaults) are spelled here so that parsing imports neither torch nor the analysis;
tests hold them equal.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

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


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {value}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def common_options(parser: argparse.ArgumentParser, *, cache: bool = False) -> None:
    """Options every subcommand takes.  ``--debug`` is accepted after the subcommand
    too (SUPPRESS keeps a subcommand that lacks it from resetting the top-level one)."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help=DEBUG_HELP)
    if cache:
        parser.add_argument("--no-cache", action="store_true",
                            help="neither read nor write the trace's index cache "
                                 "(traces of 4 MB or more get one)")
        parser.add_argument("--jobs", type=positive_int, metavar="N",
                            help="processes that decode a big trace, or make a long "
                                 "listing (kernels) (default: every core)")


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


def _open_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help=OPEN_PATHS_HELP)
    p.add_argument(
        "--screenshot-dir", metavar="DIR",
        help="folder for ctrl+s screenshots (default: $ATTN_TUI_SCREENSHOT_DIR, else here)",
    )  # fmt: skip
    common_options(p, cache=True)
    _align(p)


def _align(p: argparse.ArgumentParser) -> None:
    """``--align`` of ``open`` and ``findings``: the choice ``ranks`` makes for a job."""
    p.add_argument("--align", choices=("clock", "step"), default="clock",
                   help="a job's ranks on one time axis by the traces' clocks, or "
                        "on each rank's first ProfilerStep (default: %(default)s)")


def _stats_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--json", action="store_true", help="print JSON (README: JSON output)")
    common_options(p, cache=True)


def _table_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--sort", default="self_device_time_total", metavar="KEY", help=SORT_HELP)
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="show only the first N rows (torch's row_limit; default: all with "
                   "--json, the first 1000 as a table)")
    p.add_argument(
        "--python-functions", action="store_true",
        help="count python_function events as torch >= 2.13 does (default: left out, as 2.11)",
    )
    p.add_argument("--json", action="store_true",
                   help="print the rows as JSON (torch's FunctionEventAvg fields)")
    common_options(p, cache=True)


def _kernels_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--region", metavar="NAME",
                   help="region to list (default: the attention regions, else the top-level "
                        "annotations, else ProfilerStep*; stderr says which)")
    p.add_argument("--instance", type=non_negative_int, metavar="K",
                   help="only this instance of the region (0-based; default: every one)")
    p.add_argument("--json", action="store_true", help="print the instances as JSON")
    common_options(p, cache=True)


def _compare_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help=PATHS_HELP)
    p.add_argument("--region", default="attn_fwd", metavar="NAME",
                   help="record_function region to compare (default: %(default)s)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print one JSON object per trace")
    fmt.add_argument("--markdown", action="store_true", help="print a Markdown table")
    common_options(p, cache=True)


def _findings_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help=PATH_OR_JOB_HELP)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the findings as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print the findings as Markdown")
    common_options(p, cache=True)
    _align(p)


def _ranks_options(p: argparse.ArgumentParser) -> None:
    from tui.commands.ranks import add_options  # issue 14: its options live with it

    add_options(p)


def _sql_options(p: argparse.ArgumentParser) -> None:
    from tui.commands.sql import sql_options  # issue 16

    sql_options(p)


def _export_options(p: argparse.ArgumentParser) -> None:
    from tui.commands.sql import export_options

    export_options(p)


def _variants_options(p: argparse.ArgumentParser) -> None:
    common_options(p)


def _cache_options(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--info", action="store_true",
                      help="where it is, its size and cap, and each trace in it (the default)")
    what.add_argument("--clear", action="store_true", help="remove every index in it")
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    common_options(p)


def _diff_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help=PATHS_HELP + "; the first is the base, each other one is set against it")
    p.add_argument("--region", metavar="NAME",
                   help="region to diff (default: the first attention region, as kernels "
                        "chooses them, else the first top-level annotation, else ProfilerStep*)")
    p.add_argument("--instance", type=non_negative_int, metavar="K",
                   help="diff instance K of the region in every trace (0-based; default: each "
                        "trace's median instance by GPU time)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true",
                     help="print a list of pairwise diffs (the first trace against each other)")
    fmt.add_argument("--markdown", action="store_true", help="print a Markdown table")
    common_options(p, cache=True)


def _slices_options(p: argparse.ArgumentParser) -> None:
    from tui.commands.slices import DESCRIPTION, time_arg

    p.description = DESCRIPTION
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
    common_options(p, cache=True)


def _capture_options(p: argparse.ArgumentParser) -> None:
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
    p.add_argument("--batch", type=positive_int, metavar="B",
                   help=_shape_help("batch size", "batch"))
    p.add_argument("--heads", type=positive_int, metavar="H",
                   help=_shape_help("attention heads", "heads"))
    p.add_argument("--seq", type=positive_int, metavar="S",
                   help=_shape_help("sequence length", "seq"))
    p.add_argument("--head-dim", type=positive_int, metavar="D",
                   help=_shape_help("head dimension", "head_dim"))
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"),
                   help=_shape_help("data type", "dtype"))
    p.add_argument("--wait", type=non_negative_int, default=1, metavar="N",
                   help="profiler schedule: steps skipped first (default: %(default)s)")
    p.add_argument("--warmup", type=non_negative_int, default=1, metavar="N",
                   help="profiler schedule: steps traced but not kept (default: %(default)s)")
    p.add_argument("--active", type=positive_int, default=3, metavar="N",
                   help="profiler schedule: steps kept, one attn_fwd region each "
                        "(default: %(default)s)")
    p.add_argument("--gzip", action="store_true", help="write .json.gz traces")
    p.add_argument("--kernel-repo", metavar="REPO_OR_DIR",
                   help="hub repo id or local folder for the 'kernels' variant "
                        "(default: the hub's flash kernel, else attn-tui's bundled one)")
    p.add_argument("--force", action="store_true", help="overwrite existing traces")
    p.add_argument("--nproc", type=positive_int, metavar="N",
                   help="run each variant as a job of N ranks through torch.distributed.run "
                        "(NCCL on GPUs, one GPU a rank; gloo on CPU): one trace per rank, "
                        "<variant>.rank<k>.json")
    common_options(p)


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "capture": ("profile attention variants with torch.profiler", _capture_options),
    "open": ("browse traces in the terminal (the TUI)", _open_options),
    "stats": ("what is in a trace: lanes, regions, copies, warnings", _stats_options),
    "table": ("the key_averages op table, as torch prints it", _table_options),
    "kernels": ("GPU events of every region instance", _kernels_options),
    "compare": ("traces side by side", _compare_options),
    "diff": ("kernel sequences of a region aligned: what the first trace launches that each "
             "other one does not, and back", _diff_options),
    "findings": ("what an expert would point out, with evidence", _findings_options),
    "slices": ("what is in a time range: per lane kind and name, count and time",
               _slices_options),
    "ranks": ("a job's ranks: where each rank's GPU time went", _ranks_options),
    "sql": ("a DuckDB query over traces or Parquet exports", _sql_options),
    "export": ("the SQL views of traces as Parquet files", _export_options),
    "variants": ("which variants this machine can capture, and why not", _variants_options),
    "cache": ("the folder of trace indexes in the user cache", _cache_options),
}
"""Each subcommand, in ``--help``'s order: its help line, and what adds its options
(``tui/commands/<name>.py`` runs it)."""


