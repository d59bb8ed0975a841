"""Every key the app answers to, in one place: the help screen shows this and
the README copies it (pure)."""

from __future__ import annotations

KEYMAP: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Everywhere",
        (
            ("1 / 2 / 3 / 5", "timeline / regions / ops / findings view of the file"),
            ("4", "compare the open files side by side (open two or more)"),
            ("/", "search event names (substring; re:<regex> for a regex)"),
            ("n / N", "next / previous search match, on the timeline"),
            ("[ / ]", "previous / next file (when several are open)"),
            ("?", "this help"),
            ("ctrl+p", "command palette: every action by name"),
            ("ctrl+t", "switch light / dark theme"),
            ("ctrl+s", "save an SVG screenshot of the screen (any view)"),
            ("q / ctrl+c", "quit (also while a file is loading)"),
        ),
    ),
    (
        "Timeline (1)",
        (
            ("w / + , s / -", "zoom in / out (around the selected event, else the middle)"),
            ("a / ← , d / →", "pan left / right"),
            ("0", "fit the whole trace"),
            ("f", "zoom to the selected event"),
            ("j / k , ↓ / ↑", "move the row cursor (pgup/pgdn by ten)"),
            ("⏎ / space", "fold / unfold the group or lane under the cursor"),
            ("E / C", "unfold / fold every lane"),
            ("l / h , . / ,", "select the next / previous event on the cursor row"),
            ("g", "jump CPU⇄GPU: kernel -> its launch; op or launch -> its first kernel"),
            ("b / backspace", "back to the event selected before the jump"),
            ("esc", "clear the selection"),
            ("mouse", "click selects (on a label: folds); ctrl/shift+wheel zooms"),
        ),
    ),
    (
        "Regions (2)",
        (
            ("↑ / ↓", "move in the focused table"),
            ("⏎", "region -> its instances -> their GPU events (full name below)"),
            ("▁▃█", "GPU time of each instance, in order (height from zero)"),
            ("z", "show the instance or GPU event on the timeline"),
            ("esc", "back to the table above"),
        ),
    ),
    (
        "Ops (3)",
        (
            ("o / O", "sort by the next / previous column"),
            ("r", "reverse the sort"),
            ("click header", "sort by that column"),
            ("f", "filter by name (re:<regex> for a regex); ⏎ back to the table"),
        ),
    ),
    (
        "Compare (4)",
        (
            ("↑ / ↓", "move in the table; the row's implementation in full below"),
            ("bars", "average GPU time per instance of each file, with its implementation"),
        ),
    ),
    (
        "Findings (5)",
        (
            ("↑ / ↓", "choose a finding: what it is and what to try, its evidence below"),
            ("⏎", "finding -> its evidence events"),
            ("z / ⏎", "show the evidence event on the timeline (z on a finding: its first)"),
            ("esc", "back to the findings"),
        ),
    ),
)


def keymap_text() -> str:
    """The key map as plain text (for the README and ``--help``-like output)."""
    lines: list[str] = []
    width = max(len(k) for _, keys in KEYMAP for k, _ in keys)
    for section, keys in KEYMAP:
        lines.append(section)
        lines.extend(f"  {k.ljust(width)}  {what}" for k, what in keys)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
