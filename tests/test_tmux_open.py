"""``attn-tui open`` in a real terminal: tmux at 140x45 and 80x24.

Starts the real command line in a private tmux server, reads the screen with
``capture-pane`` and types keys with ``send-keys``.  Skipped only when tmux is
not installed (CI installs it).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.synthetic import naive_like_doc, write_doc

TMUX = shutil.which("tmux")
REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_traces" / "naive.json.gz"

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(TMUX is None, reason="tmux is not installed")]


_SOCKETS = itertools.count()


class Terminal:
    """One tmux session on a private server socket.  WHY a new socket each time:
    ``close`` stops the server, and one started at once on the same socket could
    meet the old one still shutting down (a parametrized test's second run saw no
    session at all)."""

    def __init__(self, name: str, width: int, height: int) -> None:
        self.socket = f"attn-tui-test-{os.getpid()}-{name}-{next(_SOCKETS)}"
        self.name = name
        self.width, self.height = width, height

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None  # the module is skipped without tmux
        return subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=20
        )

    def _tmux(self, *args: str) -> str:
        return self._run(*args).stdout

    def start(self, command: str) -> None:
        made = self._run(
            "-f", "/dev/null", "new-session", "-d", "-s", self.name,
            "-x", str(self.width), "-y", str(self.height), command,
        )  # fmt: skip
        assert made.returncode == 0, f"tmux new-session failed: {made.stderr}"
        self._tmux("set-option", "-t", self.name, "status", "off")
        self._tmux("set-option", "-s", "escape-time", "0")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def send(self, *keys: str) -> None:
        for key in keys:  # one at a time: a lone Escape must not merge with the next key
            self._tmux("send-keys", "-t", self.name, key)
            time.sleep(0.15)

    def wait_for(self, *texts: str, timeout: float = 20.0) -> float:
        """Seconds until every text is on screen at once (fails after ``timeout``)."""
        start = time.monotonic()
        screen = ""
        while time.monotonic() - start < timeout:
            screen = self.screen()
            if all(t in screen for t in texts):
                return time.monotonic() - start
            time.sleep(0.1)
        size = self._tmux("display", "-p", "-t", self.name, "#{window_width}x#{window_height}")
        raise AssertionError(f"never saw {texts!r} on a {size.strip()} screen:\n{screen}")

    def close(self) -> None:
        self._tmux("kill-server")


@pytest.fixture
def naive_trace(tmp_path: Path) -> Path:
    """The H200 naive sample when the repo has it, else a synthetic one like it."""
    if SAMPLE.exists():
        return SAMPLE
    return write_doc(tmp_path / "naive.json", naive_like_doc(3))


def _command(path: Path | str, colours: str = "-u NO_COLOR TERM=xterm-256color") -> str:
    # -u COLUMNS -u LINES: a test process can carry them (set by C code, not in os.environ),
    # and Textual would then ignore the real size of the tmux window
    env = f"env -u COLUMNS -u LINES {colours} ATTN_TUI_THEME=dark"
    run = f"{env} {sys.executable} -m tui.cli open {path}"
    return f"cd {REPO} && {run}; echo ATTN_TUI_EXIT=$?; sleep 60"


@pytest.mark.parametrize(("width", "height"), [(140, 45), (80, 24)])
def test_open_naive_trace_in_a_real_terminal(naive_trace, width, height):
    term = Terminal(f"open{width}", width, height)
    term.start(_command(naive_trace))
    try:
        # view 1: the first screen, with the host thread, a GPU stream lane and attn_fwd
        term.wait_for("1 Timeline", "stream", "attn_fwd", "ProfilerStep", timeout=30)
        screen = term.screen()
        assert "Traceback" not in screen
        # view 2: regions, attn_fwd chosen, its GPU events listed with the Memcpy
        term.send("2")
        term.wait_for("2 Regions", "attn_fwd", "Memcpy")
        # view 3: the op table with aten::masked_fill
        term.send("3")
        term.wait_for("Self CUDA", "aten::masked_fill")
        # view 5: the findings, naive's copy with what to try
        term.send("5")
        term.wait_for("5 Findings", "masked_fill copies", "Try:")
        # help, then back, then quit
        term.send("?")
        term.wait_for("Everywhere", "esc closes")
        term.send("Escape")
        term.send("1")
        term.wait_for("window")
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()


@pytest.mark.parametrize(("width", "height"), [(140, 45), (80, 24)])
def test_range_over_one_attn_fwd_in_a_real_terminal(naive_trace, width, height):
    """Issue 11, item 3: search attn_fwd (its first instance is selected), m marks
    its span with the GPU work it launched; the panel's row reads Memcpy DtoD, 1."""
    term = Terminal(f"range{width}", width, height)
    term.start(_command(naive_trace))
    try:
        term.wait_for("1 Timeline", "stream", "attn_fwd", timeout=30)
        term.send("/")
        term.wait_for("Search")
        term.send("attn_fwd", "Enter")
        term.wait_for("match 'attn_fwd'")
        term.send("m")
        term.wait_for("range ", "GPU busy", "Memcpy 1")
        row = re.compile(r"GPU\s+Memcpy DtoD[^0-9]*\s1\s")  # lane, name (no digit), count
        start = time.monotonic()
        while not any(row.search(line) for line in term.screen().splitlines()):
            assert time.monotonic() - start < 20, term.screen()  # a toast may cover it first
            time.sleep(0.2)
        term.send("M")
        term.wait_for("window ")
        assert "GPU busy" not in term.screen()
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()


@pytest.mark.parametrize(
    "colours", ["NO_COLOR=1 TERM=xterm-256color", "-u NO_COLOR -u COLORTERM TERM=linux"]
)
def test_copies_and_neighbours_show_without_colour(naive_trace, colours):
    """Issue 11, item 6: under NO_COLOR=1 and on a 16-colour terminal the GPU stream
    shows the Memcpy and the Memset by letter, and touching kernels apart (│)."""
    term = Terminal("nocolour", 140, 45)
    term.start(_command(naive_trace, colours))
    try:
        term.wait_for("1 Timeline", "stream", "attn_fwd", timeout=30)
        label = 30  # label column at 140 cells (tui.widgets.timeline.label_width)

        def stream_row() -> str:  # the GPU stream's track, once it is drawn
            tracks = [line[label:] for line in term.screen().splitlines()]
            return next((t for t in tracks if "Mc" in t and re.search(r"\bS\b", t)), "")

        start = time.monotonic()
        while not stream_row() and time.monotonic() - start < 20:
            time.sleep(0.2)
        row = stream_row()
        assert row, term.screen()
        assert "│" in row, row  # touching kernels end in a separator
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()


def test_ctrl_c_quits(naive_trace):
    term = Terminal("ctrlc", 100, 30)
    term.start(_command(naive_trace))
    try:
        term.wait_for("1 Timeline", "stream", timeout=30)
        term.send("C-c")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()


def test_bad_path_is_one_line_and_exit_2(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "open", str(tmp_path / "nope.json")],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "nope.json" in out.stderr


def _footer(screen: str) -> str:
    return [line for line in screen.splitlines() if line.strip()][-1].rstrip()


@pytest.mark.parametrize(("width", "height"), [(140, 45), (80, 24)])
def test_first_hour_in_a_real_terminal(naive_trace, tmp_path, width, height):
    """Issue 12 in a terminal: the file's name in the header, a footer that ends
    cleanly, 4 from Regions, Tab then keys, ctrl+s into --screenshot-dir, and
    the op table's sorted column and # of Calls on screen."""
    other = naive_trace.with_name("inplace.json.gz")
    if not other.exists():
        other = write_doc(tmp_path / "other.json", naive_like_doc(2))
    shots = tmp_path / "shots"
    term = Terminal(f"hour{width}", width, height)
    term.start(_command(f"{naive_trace} {other} --screenshot-dir {shots}"))
    try:
        term.wait_for("1 Timeline", f"{naive_trace.name} ·", "window", "palette", timeout=30)
        assert _footer(term.screen()).endswith("^p palette")  # no key cut under it
        # Tab, then the timeline's keys still work (w zooms: the window shrinks)
        ruler = next(x for x in term.screen().splitlines() if x.startswith("window"))
        term.send("Tab", "w")
        start = time.monotonic()
        while next(x for x in term.screen().splitlines() if x.startswith("window")) == ruler:
            assert time.monotonic() - start < 20, term.screen()
            time.sleep(0.1)
        # 4 from Regions
        term.send("2")
        term.wait_for("2 Regions", "GPU events of attn_fwd")
        term.send("4")
        term.wait_for("files compared", "vs first")
        # ctrl+s says where it went, in the folder given
        term.send("C-s")
        term.wait_for("Screenshot saved to")
        assert len(list(shots.glob("*.svg"))) == 1
        # the op table: name, device, the sorted column and the calls on screen
        term.send("3")
        term.wait_for("Device", "Self CUDA ▼", "# of Calls")
        assert _footer(term.screen()).endswith("^p palette")
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()
