"""Every key the app answers to, in one place (pure: Textual is imported lazily).

Each ``Key`` says which keys, in which view, run which action, with a short title
(footer, palette) and a sentence (help, README).  From this one table come the ``BINDINGS``
of the app and of each view (``bindings``), the help screen, the command palette's entries
(``palette_entries``) and the README's key map (``markdown``; ``python -m tui.keymap
--markdown`` prints it, ``--update README.md`` rewrites the block between ``<!-- keymap -->``
markers, and a test fails when the README and this table differ).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.binding import BindingType


@dataclass(frozen=True)
class Key:
    """One row of the key map.

    ``bind``/``action`` empty: a help-only row (the mouse, a DataTable's own keys,
    a note on a column).  ``footer``: shown in the footer (``footer_key`` is the
    key it shows there).  ``palette``: also a command palette entry."""

    view: str  # a key of SECTIONS
    keys: str  # the keys as the help shows them
    help: str  # what they do, in a sentence
    bind: str = ""  # Textual key names, comma-separated
    action: str = ""  # the Textual action the keys run
    title: str = ""  # short name: footer and palette
    footer: bool = False
    footer_key: str | None = None
    priority: bool = False
    palette: bool = True
    short: str = ""  # the footer's label when shorter than ``title``
    in_help: bool = True  # False: a summary row (``[ / ]``) describes it already


SECTIONS: dict[str, str] = {
    "app": "Everywhere",
    "timeline": "Timeline (1)",
    "details": "Details panel (under the timeline)",
    "range": "Range panel (under the details, once m marks a range)",
    "occurrences": "Occurrences (⏎ on an Ops, Regions GPU event or range row; o)",
    "regions": "Regions (2)",
    "ops": "Ops (3)",
    "compare": "Compare (4)",
    "findings": "Findings (5)",
    "query": "Query (6: SQL over the open files, the [sql] extra)",
    "ranks": "Ranks (8: a job of several ranks, or one trace)",
    "diff": "Diff (7, two or more files)",
    "picker": "Picker (attn-tui open with no PATH: the folder's traces)",
}
"""View id -> its heading in the help and the README (and its palette prefix)."""

PALETTE_PREFIX = {
    "app": "", "timeline": "Timeline", "details": "Details", "range": "Range", "regions": "Regions",
    "occurrences": "Occurrences", "ops": "Ops", "ranks": "Ranks", "picker": "Picker",
    "compare": "Compare", "findings": "Findings", "query": "Query", "diff": "Diff",
}  # fmt: skip

_APP = (
    Key("app", "1", "the timeline: CPU threads and GPU streams over time",
        "1", "view('timeline')", "View: timeline"),
    Key("app", "2", "regions: the kernels of each record_function instance\n"
        "(attn_fwd, ProfilerStep#N) or attention op, one by one",
        "2", "view('regions')", "View: regions"),
    Key("app", "3", "ops: torch's key_averages table (time per op name, as\n"
        "prof.key_averages() prints it)", "3", "view('ops')", "View: ops"),
    Key("app", "4", "compare the open files side by side (open two or more)",
        "4", "compare", "View: compare"),
    Key("app", "5", "findings: what an expert would point out, with evidence",
        "5", "view('findings')", "View: findings"),
    Key("app", "6", "query: SQL (DuckDB) over the open files, as attn-tui sql",
        "6", "query", "View: query"),
    Key("app", "7", "diff: the first file's kernels against another's, aligned\n"
        "(two or more open; not D: shift+d grows the range)",
        "7", "diff", "View: diff"),
    Key("app", "8", "ranks: a job's ranks side by side, where each rank's GPU\n"
        "time went, stragglers, collective waits", "8", "view('ranks')", "View: ranks"),
    Key("app", "/", "search event names (substring; re:<regex> for a regex)",
        "slash", "search", "Search event names", True, "/", short="Search"),
    Key("app", "n", "next search match or occurrence", "n", "match(1)", "Next search match"),
    Key("app", "N", "previous search match", "N", "match(-1)", "Previous search match"),
    Key("app", "[ / ]", "previous / next file (when several are open)"),
    Key("app", "[", "previous file", "left_square_bracket", "tab(-1)", "Previous file",
        in_help=False),
    Key("app", "]", "next file", "right_square_bracket", "tab(1)", "Next file", in_help=False),
    Key("app", "?", "every key (this help)", "question_mark", "help", "Help: every key", True, "?",
        short="Help"),
    Key("app", "ctrl+p", "command palette: every action by name, the open files"),
    Key("app", "ctrl+t", "switch light / dark theme", "ctrl+t", "toggle_theme",
        "Toggle light/dark theme"),
    Key("app", "ctrl+s", "save an SVG screenshot of the screen, and say where:\n"
        "open --screenshot-dir DIR, else $ATTN_TUI_SCREENSHOT_DIR,\nelse the current folder",
        "ctrl+s", "screenshot_here", "Save an SVG screenshot"),
    Key("app", "q", "quit (also while a file is loading)", "q", "quit", "Quit", True),
    Key("app", "ctrl+c", "quit, even from a text field", "ctrl+c", "quit", "Quit",
        priority=True, palette=False),
)

_TIMELINE = (
    Key("timeline", "w / +", "zoom in (around the selected event, else the middle)",
        "w,plus,equals_sign", "zoom_in", "Zoom in", True, "w"),
    Key("timeline", "s / -", "zoom out", "s,minus", "zoom_out", "Zoom out", True, "s"),
    Key("timeline", "a / ←", "pan left", "a,left", "pan(-1)", "Pan left", True, "a", short="Pan ←"),
    Key("timeline", "d / →", "pan right", "d,right", "pan(1)", "Pan right", True, "d",
        short="Pan →"),
    Key("timeline", "0", "fit the whole trace", "0,F", "fit_all", "Fit the whole trace"),
    Key("timeline", "f", "zoom to the selected event (an annotation such as\n"
        "attn_fwd: with the GPU work it launched)", "f", "zoom_selection",
        "Zoom to the selected event"),
    Key("timeline", "j / ↓", "row cursor down", "down,j", "cursor(1)", "Row down"),
    Key("timeline", "k / ↑", "row cursor up", "up,k", "cursor(-1)", "Row up"),
    Key("timeline", "pgdn / pgup", "row cursor ten rows down / up (home / end: first / last)"),
    *(Key("timeline", k, "", k, f"cursor({n})", t, palette=False, in_help=False)  # the row above
      for k, n, t in (("pagedown", 10, "Ten rows down"), ("pageup", -10, "Ten rows up"),
                      ("home", -999999, "Top row"), ("end", 999999, "Bottom row"))),
    Key("timeline", "J / K", "next / previous lane or process (skips depth rows)"),
    Key("timeline", "J", "next lane", "J", "lane(1)", "Next lane", in_help=False),
    Key("timeline", "K", "previous lane", "K", "lane(-1)", "Previous lane", in_help=False),
    Key("timeline", "G", "next GPU lane (wraps; unfolds its device)", "G", "gpu_lane",
        "Next GPU lane"),
    Key("timeline", "⏎ / space", "fold / unfold the process or lane under the cursor",
        "enter,space", "fold", "Fold / unfold", True, "⏎", short="Fold"),
    Key("timeline", "E", "unfold every process and lane", "E", "unfold_all", "Unfold all"),
    Key("timeline", "C", "fold every process and lane", "C", "fold_all", "Fold all"),
    Key("timeline", "l / .", "select the next event on the cursor row\n"
        "(the first press: the first event in the window)", "l,full_stop", "step(1)",
        "Next event on the row"),
    Key("timeline", "h / ,", "select the previous event on the row (first press: as l)",
        "h,comma", "step(-1)", "Previous event on the row"),
    Key("timeline", "g", "jump CPU⇄GPU: kernel -> its launch;\nop or launch -> its first kernel",
        "g", "follow_link", "Jump CPU/GPU", True, short="CPU⇄GPU"),
    Key("timeline", "b / backspace", "back to the event selected before the jump",
        "b,backspace", "back", "Back"),
    Key("timeline", "m", "mark the selected event's span as the range\n"
        "(an annotation such as attn_fwd: its CPU span and the GPU\n"
        "work it launched); the panel below lists what it holds", "m", "mark_range", "Mark range"),
    Key("timeline", "D / shift+→", "grow the range: its end later (a twentieth of the window)",
        "D,shift+right", "resize_range(1)", "Grow the range"),
    Key("timeline", "A / shift+←", "shrink the range: its end earlier",
        "A,shift+left", "resize_range(-1)", "Shrink the range"),
    Key("timeline", "M", "clear the range", "M", "clear_range", "Clear the range"),
    Key("timeline", "'", "add a mark (A, B, ...) at the selected event's start,\n"
        "else the window's centre; the ruler shows its letter,\n"
        "the status line the cursor's distance to the nearest mark",
        "apostrophe", "add_mark", "Add a mark"),
    Key("timeline", "` / ~", "jump to the next / previous mark (centred in the window)"),
    Key("timeline", "`", "next mark", "grave_accent", "jump_mark(1)", "Jump to the next mark",
        in_help=False),
    Key("timeline", "~", "previous mark", "tilde", "jump_mark(-1)",
        "Jump to the previous mark", in_help=False),
    Key("timeline", '"', "clear every mark", "quotation_mark", "clear_marks", "Clear the marks"),
    Key("timeline", "o", "every occurrence of the selected event's name: a list;\n"
        "⏎ shows one, then n / N step through them", "o", "occurrences", "Occurrences"),
    Key("timeline", "p", "pin the cursor's lane (on a process: its lanes) to the\n"
        "top; p again unpins", "p", "pin_lane", "Pin / unpin a lane"),
    Key("timeline", "x", "hide the cursor's lane (a process: its lanes)", "x", "hide_lane", "Hide"),
    Key("timeline", "X", "restore every hidden lane", "X", "restore_lanes", "Restore hidden lanes"),
    Key("timeline", "c", "fold / unfold the whole process the cursor is in; a\n"
        "folded row: busy share per cell (▁▃█), events, busy %", "c", "fold_process",
        "Fold / unfold the process"),
    Key("timeline", "R", "fold / unfold the whole rank the cursor is in (a job:\n"
        "its host process and its GPU together)", "R", "fold_rank", "Fold / unfold the rank"),
    Key("timeline", "links", "a selected kernel marks its launch call and op; an op\n"
        "marks the GPU work it launched; │└─► joins launch\nand kernel where both are on screen"),
    Key("timeline", "L", "legend: what each colour, letter and glyph means\n"
        "(Memcpy, Memset, kernel density); also at the end of help",
        "L", "legend", "Legend: colours and glyphs"),
    Key("timeline", "esc", "clear the selection", "escape", "clear_selection", "Clear selection"),
    Key("timeline", "mouse", "click selects (on a label: folds); ctrl/shift+wheel zoom"),
)

_DETAILS = (
    Key("details", "i", "expand / collapse the details panel", "i", "toggle_details",
        "Expand / collapse the details"),
    Key("details", "y", "copy the selected event as JSON", "y", "copy_event",
        "Copy the event as JSON"),
    Key("details", "j/k pgdn/pgup", "scroll the panel while it has the focus (home / end too)\n"
        "esc: back to the timeline"),
    Key("details", "j / ↓", "scroll down", "down,j", "scroll_down", "Scroll down", in_help=False,
        palette=False),
    Key("details", "k / ↑", "scroll up", "up,k", "scroll_up", "Scroll up", in_help=False,
        palette=False),
    Key("details", "pgdn", "page down", "pagedown,space", "page_down", "Page down",
        in_help=False, palette=False),
    Key("details", "pgup", "page up", "pageup", "page_up", "Page up", in_help=False, palette=False),
    Key("details", "home", "top", "home", "scroll_home", "Top", in_help=False, palette=False),
    Key("details", "end", "bottom", "end", "scroll_end", "Bottom", in_help=False, palette=False),
    Key("details", "esc", "back to the timeline", "escape", "leave", "Back to the timeline",
        in_help=False, palette=False),
)

_RANGE = (
    Key("range", "tab", "into the range table (from the timeline, after\n"
        "the details); ↑ / ↓ move in it. Per lane kind and name:\n"
        "count, time inside the range (clipped to it), avg, min,\n"
        "max, share"),
    Key("range", "⏎", "the row's occurrences in the range (a list)"),
    Key("range", "esc", "back to the timeline", "escape", "leave", "Back to the timeline",
        palette=False),
)

_OCCURRENCES = (
    Key("occurrences", "↑ / ↓", "move in the list: start, duration, lane, launched by"),
    Key("occurrences", "⏎ / z", "show it on the timeline; n / N then step through all", "z",
        "choose", "Show on timeline", True, "z", palette=False),
    Key("occurrences", "esc / q", "close the list", "escape,q", "close", "Close", palette=False),
)

_REGIONS = (
    Key("regions", "↑ / ↓", "move in the focused table"),
    Key("regions", "^home / ^end", "ctrl+home / ctrl+end: first / last row of the whole list"),
    Key("regions", "⏎", "region -> its instances -> their GPU events\n(the full name below); "
        "on a GPU event: its occurrences"),
    Key("regions", "▁▃█", "GPU time of each instance, in order (height from zero)"),
    Key("regions", "z", "show the instance or GPU event on the timeline", "z", "zoom",
        "Show on timeline", True),
    Key("regions", "esc", "back to the table above", "escape", "up", "Back to the table above"),
)

_OPS = (
    Key("ops", "o", "sort by the next column", "o", "next_sort(1)", "Sort by next column",
        True, short="Sort"),
    Key("ops", "O", "sort by the previous column", "O", "next_sort(-1)", "Sort by previous column"),
    Key("ops", "⏎", "every occurrence of the op, listed; then n / N step"),
    Key("ops", "r", "reverse the sort", "r", "reverse", "Reverse the sort", True, short="Reverse"),
    Key("ops", "click header", "sort by that column"),
    Key("ops", "f / ctrl+f", "filter by name (re:<regex> for a regex)",
        "f,ctrl+f", "focus_filter", "Filter by name", True, "f",
        short="Filter"),
    Key("ops", "⏎ / esc", "from the filter back to the table (the filter stays)",
        "escape", "focus_table", "Back to the table", palette=False),
    Key("ops", "← / →", "scroll sideways: the columns past the window's edge"),
    Key("ops", "^home / ^end", "ctrl+home / ctrl+end: first / last op of the whole list"),
    Key("ops", "Device", "CPU or CUDA: torch lists an op once per device it ran on"),
    Key("ops", "Self CUDA %", "share of torch's Self CUDA total, which leaves out GPU\n"
        "annotations: so an annotation row (attn_fwd on CUDA)\ncan pass 100%"),
)

_COMPARE = (
    Key("compare", "↑ / ↓", "move in the table; the row's implementation below"),
    Key("compare", "← / →", "scroll the table sideways (its columns pass 80 cells)"),
    Key("compare", "bars", "average GPU time per instance of each file, and its\nimplementation"),
)

_FINDINGS = (
    Key("findings", "↑ / ↓", "choose a finding: what it is and what to try;\nits evidence below"),
    Key("findings", "⏎", "finding -> its evidence events"),
    Key("findings", "z", "show the evidence event on the timeline\n(on a finding: its first)",
        "z", "zoom", "Show on timeline", True),
    Key("findings", "esc", "back to the findings", "escape", "up", "Back to the findings"),
)

_DIFF = (
    Key("diff", "lanes", "A (the first file) above B on A's time axis, B's matched\n"
        "kernels under A's; - only in A, + only in B; ↑ ↓ rows"),
    Key("diff", "⏎ / z", "show the row's kernel on its own file's timeline\n"
        "(A's; B's for a + row)", "z", "jump", "Show on timeline", True, "z", palette=False),
    Key("diff", "r", "next region of the first file (ProfilerStep*, ...)",
        "r", "region", "Next region", True, "r", palette=False),
    Key("diff", "[ / ]", "with three or more files: the file set against the first"),
    Key("diff", "[", "previous file to diff", "left_square_bracket", "other(-1)",
        "Previous file to diff", palette=False, in_help=False),
    Key("diff", "]", "next file to diff", "right_square_bracket", "other(1)",
        "Next file to diff", palette=False, in_help=False),
    Key("diff", "a / A", "next / previous instance of A's region (b / B: of B's);\n"
        "the status line: #k of n, (median) at the median", "a", "instance(0, 1)", "A: next",
        palette=False),
    Key("diff", "A", "", "A", "instance(0, -1)", "A: previous", palette=False, in_help=False),
    Key("diff", "b", "", "b", "instance(1, 1)", "B: next", palette=False, in_help=False),
    Key("diff", "B", "", "B", "instance(1, -1)", "B: previous", palette=False, in_help=False),
)

_QUERY = (
    Key("query", "⏎", "run the query (↑ / ↓ in the field: earlier ones); on a\n"
        "row with a row column: its event on the timeline (or z)"),
    Key("query", "z", "show the row's event on the timeline", "z", "jump", "Show on timeline",
        True, "z", palette=False, in_help=False),
    Key("query", "esc", "the query field ⇄ the results (there 1-8, ? and q work)", "escape",
        "edit", "Edit query", palette=False),
)

_PICKER = (
    Key("picker", "space", "mark / unmark a trace (↑ ↓ move; several open together)"),
    Key("picker", "a", "mark every trace, or none", "a", "toggle_all", "Mark all / none",
        True, "a", palette=False),
    Key("picker", "⏎", "open the marked traces (none marked: the highlighted)",
        "enter", "open", "Open", True, "⏎", priority=True, palette=False),
    Key("picker", "q / esc", "leave without opening anything", "q,escape", "cancel", "Quit",
        True, "q", palette=False),
)

_RANKS = (  # ↑/↓ move in a table, tab to the stragglers' (as in every table)
    Key("ranks", "⏎ / z", "show on the timeline: a rank's first GPU event, or the\n"
        "straggler's instance on its slowest rank", "z", "zoom", "Show on timeline", True),
    Key("ranks", "f", "the rank alone on the timeline", "f", "focus_rank", "Focus the rank"),
    Key("ranks", "a", "align the ranks on each one's first ProfilerStep, or\n"
        "again on the clock (the status line says which)", "a", "align", "Switch the alignment",
        True, short="Align"),
)

KEYS: tuple[Key, ...] = (_RANKS + _APP + _TIMELINE + _DETAILS + _RANGE + _OCCURRENCES + _REGIONS
                         + _OPS + _COMPARE + _FINDINGS + _DIFF + _PICKER + _QUERY)


def help_rows(view: str) -> list[Key]:
    """The rows the help shows for ``view`` (a key that a summary row describes
    with its pair, ``[`` under ``[ / ]``, is not repeated)."""
    return [k for k in KEYS if k.view == view and k.in_help]


def bindings(view: str, via: str = "") -> list[BindingType]:
    """Textual ``Binding``s for the app (``"app"``) or one view's widget.

    ``via``: bind them on an ancestor, whose ``action_<via>(action)`` runs each
    on the widget (the timeline's keys on its view, so they also work while the
    details panel under it has the focus)."""
    from textual.binding import Binding

    return [
        Binding(k.bind, f"{via}({k.action!r})" if via else k.action, k.short or k.title,
                show=k.footer, key_display=k.footer_key, priority=k.priority)  # fmt: skip
        for k in KEYS
        if k.view == view and k.bind
    ]


def palette_entries() -> list[tuple[str, str, Key]]:
    """(title, help, key) of every palette entry: each action once, titled with its view
    and keys, e.g. ``Timeline: Zoom in (w / +)``."""
    out = []
    seen: set[tuple[str, str]] = set()
    for k in KEYS:
        if not (k.bind and k.palette) or (k.view, k.action) in seen:
            continue
        seen.add((k.view, k.action))
        title = f"{PALETTE_PREFIX[k.view]}: {k.title}" if PALETTE_PREFIX[k.view] else k.title
        out.append((f"{title} ({k.keys})", k.help, k))
    return out


def keymap_text() -> str:
    """The key map as plain text: the help screen's content, and the README's."""
    lines: list[str] = []
    sections = [(title, help_rows(view)) for view, title in SECTIONS.items()]
    width = max(len(k.keys) for _, rows in sections for k in rows)
    for title, rows in sections:
        lines.append(title)
        for k in rows:
            first, *more = k.help.split("\n")
            lines.append(f"  {k.keys.ljust(width)}  {first}")
            lines.extend(f"  {'':{width}}  {line}" for line in more)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


BEGIN, END = "<!-- keymap -->", "<!-- /keymap -->"


def markdown() -> str:
    """The README block between the markers (made here, never edited by hand)."""
    return f"{BEGIN}\n```\n{keymap_text()}```\n{END}"


def readme_block(text: str) -> str:
    """The block between the markers in a README's text (markers included)."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def update_readme(path: Path) -> bool:
    """Rewrite the key map block of ``path``; True when it changed."""
    text = path.read_text(encoding="utf-8")
    new = text.replace(readme_block(text), markdown())
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tui.keymap", description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--markdown", action="store_true", help="print the README block")
    group.add_argument("--update", metavar="README", help="rewrite the README's block in place")
    args = ap.parse_args(argv)
    changed = not args.markdown and update_readme(Path(args.update))
    print(markdown() if args.markdown else "updated" if changed else "already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
