"""The TUI under faults (issue 7, item 6): the file changes or vanishes while
open, the terminal is resized during a load or is too small, a widget raises,
the input is never written, a damaged cache is reported and rebuilt."""

from __future__ import annotations

import hashlib
import os
import threading
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from profiling.trace import load_trace
from profiling.trace.cache import cache_dirs
from profiling.trace.model import Kind
from tests.fixtures.synthetic import naive_like_doc, write_doc
from tui.app import AttnTuiApp
from tui.error_log import ErrorLog
from tui.file_watch import FileState, change, change_message
from tui.guard import BROKEN_NOTE, STRICT_ENV
from tui.screen_size import too_small, too_small_message
from tui.screens.too_small import TooSmallScreen
from tui.session import load_session
from tui.timeline_model import TimelineModel
from tui.widgets.details import Details
from tui.widgets.timeline import Timeline

from .test_tmux_open import TMUX, Terminal, _command
from .test_tui_pilot import wait_loaded


def _app(*paths, **kwargs) -> AttnTuiApp:
    return AttnTuiApp([str(p) for p in paths], theme="attn-dark", **kwargs)


def _notes(app: AttnTuiApp) -> list[str]:
    return [n.message for n in app._notifications]


def _details(app: AttnTuiApp) -> str:
    return str(app.query_one(Details).render())


def _status(app: AttnTuiApp) -> str:
    return str(app.pane.query_one("#status").render())


@pytest.fixture
def naive_path(tmp_path: Path) -> Path:
    return write_doc(tmp_path / "naive.json", naive_like_doc(3))


@pytest.fixture
def padded_path(tmp_path: Path) -> Path:
    """A trace over the cache threshold (4 MiB): most of its bytes in one event's args,
    as in real traces, so it loads in milliseconds but gets a sidecar index."""
    doc = naive_like_doc(3)
    doc["traceEvents"][0].setdefault("args", {})["pad"] = "x" * (4_300_000)
    return write_doc(tmp_path / "padded.json", doc)


# ---- the pure parts ----


def test_file_state_and_change(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("[]")
    loaded = FileState.of(str(path))
    assert loaded is not None and change(loaded, FileState.of(str(path))) == ""
    os.utime(path, ns=(1, 1))
    assert change(loaded, FileState.of(str(path))) == "changed"
    path.unlink()
    assert change(loaded, FileState.of(str(path))) == "vanished"
    path.mkdir()  # something that is not a file
    assert change(loaded, FileState.of(str(path))) == "vanished"
    assert change(None, None) == ""  # nothing known about what was loaded
    assert "deleted or moved" in change_message("t.json", "vanished")


def test_error_log_one_file_per_distinct_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_TUI_LOG_DIR", str(tmp_path / "logs"))
    log = ErrorLog(lambda: {"terminal": "80x24"})

    def fail(n: int) -> Exception:
        try:
            [][n]
        except IndexError as exc:
            return exc
        raise AssertionError

    path, new = log.record(fail(1), "Timeline handling Key")
    assert new and path is not None and path.parent == tmp_path / "logs"
    again, new_again = log.record(fail(1), "Timeline handling Key")
    assert again == path and not new_again
    text = path.read_text()
    assert "IndexError" in text and "terminal: 80x24" in text and "repeated (1)" in text
    other, new_other = log.record(fail(1), "OpsView handling Click")
    assert new_other and other != path
    monkeypatch.setenv("ATTN_TUI_LOG_DIR", str(path))  # a file: no folder can be made there
    assert ErrorLog().record(fail(2), "x") == (None, True)


def test_too_small_message_fits_what_it_is_for():
    assert too_small(20, 6) and too_small(39, 40) and too_small(120, 9)
    assert not too_small(40, 10)
    assert all(len(line) <= 20 for line in too_small_message(20, 6).splitlines())


# ---- the file changes or disappears while open ----


def _rewrite(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"aten::", b"ATEN::"))  # same size, new bytes


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 3)


def _delete(path: Path) -> None:
    path.unlink()


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)  # a reader that opened it plainly would block for ever


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (_rewrite, "changed on disk"),
        (_truncate, "changed on disk"),
        (_delete, "deleted or moved"),
        (_fifo, "deleted or moved"),
    ],
)
async def test_file_changes_while_open(naive_path, fault, said):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await wait_loaded(pilot)
        pane = app.pane
        trace = pane.session.trace
        events = len(trace)
        kernel = int(np.flatnonzero(trace.kind == Kind.KERNEL)[0])
        os.utime(naive_path, ns=(1, 1))  # an mtime surely unlike the loaded one
        fault(naive_path)
        pane._watch_file()  # what the 2-second timer does
        await pilot.pause()
        assert any(said in n for n in _notes(app))
        assert said.split()[0] in _status(app) or "deleted" in _status(app)
        # the args of an event not read before: empty, with a note; no exception
        app.query_one(Timeline).select_row(kernel)
        await pilot.pause()
        assert "unavailable: the file changed on disk" in _details(app)
        assert trace.args(kernel) == {}
        # still what was loaded, and every view still works
        assert len(pane.session.trace) == events
        await pilot.press("w", "d", "2", "3", "1", "g", "b")
        assert pane.state == "ready" and app.is_running
        count = len(_notes(app))
        pane._watch_file()  # said once, not at every look
        assert len(_notes(app)) == count


async def test_args_read_before_the_change_stay_shown(naive_path):
    app = _app(naive_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        trace = app.pane.session.trace
        kernel = int(np.flatnonzero(trace.kind == Kind.KERNEL)[0])
        app.query_one(Timeline).select_row(kernel)
        await pilot.pause()
        assert "grid" in _details(app)
        naive_path.unlink()
        app.query_one(Timeline).select_row(kernel + 1)
        app.query_one(Timeline).select_row(kernel)
        await pilot.pause()
        assert "grid" in _details(app)  # read while the file was there: still true


# ---- the terminal ----


async def test_resize_during_a_load(tmp_path):
    path = write_doc(tmp_path / "big.json", naive_like_doc(400))  # a few MB: a real load
    reached, release = threading.Event(), threading.Event()

    def slow(path, progress=None, no_cache=False):
        def hold(stage: str, fraction: float) -> None:
            if progress is not None:
                progress(stage, fraction)
            if stage == "decode" and not release.is_set():
                reached.set()
                release.wait(20)

        return load_session(path, hold, no_cache=no_cache)

    app = _app(path, loader=slow)
    async with app.run_test(size=(120, 40)) as pilot:
        while not reached.is_set():
            await pilot.pause(0.02)
        for size in ((60, 20), (200, 60), (20, 6), (1, 1), (90, 30)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
        assert app.pane.state == "loading"
        release.set()
        await wait_loaded(pilot)
        await pilot.pause()
        timeline = app.query_one(Timeline)
        model = app.pane.model
        assert not isinstance(app.screen, TooSmallScreen)
        assert model.viewport.width == timeline.size.width - timeline.label_cells
        assert timeline.size.width == 90 - (timeline.outer_size.width - timeline.size.width)


@pytest.mark.parametrize("size", [(20, 6), (1, 1)])
async def test_a_terminal_too_small_shows_a_message(naive_path, size):
    app = _app(naive_path)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        assert isinstance(app.screen, TooSmallScreen)
        assert "Terminal too small" in str(app.screen.query_one("#too-small").render())
        await pilot.press("w", "2", "j", "enter", "3", "1")  # nothing breaks
        await pilot.press("question_mark", "slash", "ctrl+p")  # nothing opens on top of it
        assert isinstance(app.screen, TooSmallScreen) and len(app.screen_stack) == 2
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert not isinstance(app.screen, TooSmallScreen)
        assert app.pane.state == "ready" and app.query_one(Timeline).model.rows
        await pilot.resize_terminal(30, 8)
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen) and len(app.screen_stack) == 2
        await pilot.press("q")
        assert not app.is_running


# ---- an unexpected error in a widget ----


async def test_a_widget_error_is_notified_logged_and_survived(naive_path, tmp_path, monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)
    logs = tmp_path / "logs"
    monkeypatch.setenv("ATTN_TUI_LOG_DIR", str(logs))
    app = _app(naive_path)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await wait_loaded(pilot)
        timeline = app.query_one(Timeline)
        model = app.pane.model

        # 1. drawing: the timeline's rows raise
        def broken(self, index):
            raise RuntimeError("injected draw bug")

        with monkeypatch.context() as m:
            m.setattr(Timeline, "_track", broken)
            timeline.refresh()
            await pilot.pause()
            assert BROKEN_NOTE in str(timeline.render_lines(timeline.region.reset_offset)[0])
        notes = _notes(app)
        assert len(notes) == 1 and "injected draw bug" in notes[0]
        log = next(logs.glob("error-*.log"))
        assert str(log) in notes[0]
        text = log.read_text()
        assert "RuntimeError: injected draw bug" in text and "Traceback" in text
        assert str(naive_path) in text and f"textual {version('textual')}" in text
        timeline.refresh()
        await pilot.pause()
        assert BROKEN_NOTE not in str(timeline.render_lines(timeline.region.reset_offset)[0])

        # 2. a view's update (the details panel, on a Changed message)
        with monkeypatch.context() as m:
            m.setattr(Details, "show", lambda self, model: 1 / 0)
            await pilot.press("j")
        assert any("ZeroDivisionError" in n for n in _notes(app)[1:])

        # 3. a key's action
        with monkeypatch.context() as m:
            m.setattr(TimelineModel, "zoom_in", lambda self, anchor=None: [][1])
            await pilot.press("w")
            await pilot.press("w")  # the same error again: logged, not notified twice
        assert sum("IndexError" in n for n in _notes(app)) == 1
        assert len(list(logs.glob("error-*.log"))) == 3

        # the app is still usable: keys, views, drawing
        span = model.viewport.span
        await pilot.press("w")
        assert model.viewport.span < span
        await pilot.press("3")
        assert app.pane.view == "ops" and app.pane.query_one("#views").current == "ops"
        await pilot.press("1", "j", "l")
        assert model.selected >= 0 and "what" in _details(app)
        assert app.is_running and app.return_code is None


# ---- the input is never written; a damaged cache is rebuilt ----


def _fingerprint(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns


async def test_input_files_are_never_written(padded_path):
    before = _fingerprint(padded_path)
    siblings = sorted(p.name for p in padded_path.parent.iterdir())
    for _ in range(2):  # the first open writes the index (in the user cache), the second maps it
        app = _app(padded_path)
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_loaded(pilot)
            app.pane.search("aten")  # the keys below read the trace again: args, links
            await pilot.press("j", "l", "g", "2", "3", "5", "1")
            assert app.pane.model.selected >= 0
    assert _fingerprint(padded_path) == before
    assert sorted(p.name for p in padded_path.parent.iterdir()) == siblings  # nothing beside
    assert (cache_dirs(padded_path)[0] / "meta.json").is_file()


async def test_a_damaged_cache_is_ignored_reported_and_rebuilt(padded_path):
    load_trace(padded_path)  # writes the index
    folder = next(d for d in cache_dirs(padded_path) if (d / "meta.json").is_file())
    (folder / "meta.json").write_bytes(b'{"key": "damaged')
    app = _app(padded_path)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await wait_loaded(pilot)
        assert any("ignored a damaged cache" in n for n in _notes(app))
        assert "1 warning" in _status(app) and "1 warnings" not in _status(app)
        assert "ignored a damaged cache" in _details(app)  # the panel lists the notes
    again = load_trace(padded_path)
    assert not again.warnings  # rebuilt: the next open maps it cleanly


# ---- the same in a real terminal ----


@pytest.mark.tmux
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_vanished_file_and_tiny_terminal_in_tmux(naive_path):
    term = Terminal("faults", 120, 30)
    term.start(_command(naive_path))
    try:
        term.wait_for("1 Timeline", "stream", timeout=30)
        naive_path.unlink()
        term.wait_for("was deleted or moved", timeout=10)  # the 2-second look, then a note
        term._tmux("resize-window", "-t", term.name, "-x", "20", "-y", "6")
        term.wait_for("Terminal too small")
        term._tmux("resize-window", "-t", term.name, "-x", "120", "-y", "30")
        term.wait_for("1 Timeline", "stream")
        assert "Traceback" not in term.screen()
        term.send("q")
        term.wait_for("ATTN_TUI_EXIT=0", timeout=15)
    finally:
        term.close()
