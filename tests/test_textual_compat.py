"""The Textual internals ``tui.guard`` relies on, so a Textual upgrade that moves them
fails here, by name, instead of silently turning every bug back into a crash.

Why private methods: Textual has no public hook that sees an exception raised while
a message is handled or that stops the app from exiting on one.  The public
``on_event`` sees events (keys, clicks) but not the other messages our widgets
handle (a table's row highlighted, the timeline's ``Changed``); ``App.panic`` and
``App.exit`` come after the decision to end the app.  So the guard overrides
``MessagePump._dispatch_message`` (every message a widget handles goes through it)
and ``App._handle_exception`` (where Textual sends what escapes a handler, a timer,
a worker or the compositor).  They were recorded on Textual 8.2.8, the version
tests/constraints.txt pins for the test run; moving that pin runs this file against
the new release, and it says whether the release keeps them.
"""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widget import Widget
from textual.widgets import Static

from tui.guard import (
    BROKEN_NOTE,
    HOOKS_MATCH,
    STRICT_ENV,
    ReportingApp,
    ReportsErrors,
    textual_hooks_match,
)

# (owner, method): (parameter names, coroutine function), as in Textual 8.2.8
RECORDED = {
    (MessagePump, "_dispatch_message"): (["self", "message"], True),
    (App, "_handle_exception"): (["self", "error"], False),
    (Widget, "render_lines"): (["self", "crop"], False),
}


@pytest.mark.parametrize("owner,name", list(RECORDED), ids=[n for _, n in RECORDED])
def test_overridden_methods_keep_their_signatures(owner: type, name: str) -> None:
    method = getattr(owner, name, None)
    assert method is not None, f"Textual no longer has {owner.__name__}.{name}"
    params, is_coroutine = RECORDED[(owner, name)]
    signature = inspect.signature(method)
    assert list(signature.parameters) == params, signature
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())
    assert inspect.iscoroutinefunction(method) is is_coroutine


def test_the_guard_overrides_exactly_those() -> None:
    """If the guard grows another override, it must be recorded above."""
    overridden = {name for cls in (ReportsErrors, ReportingApp) for name in vars(cls)
                  if name.startswith("_") and not name.startswith("__")
                  and callable(vars(cls)[name])}
    assert overridden <= {name for _, name in RECORDED}, overridden


def test_the_installed_textual_matches() -> None:
    assert HOOKS_MATCH and "_dispatch_message" in vars(ReportsErrors)


def test_a_changed_signature_is_noticed(monkeypatch: pytest.MonkeyPatch) -> None:
    async def changed(self: MessagePump, message: Message, context: object) -> None: ...

    monkeypatch.setattr(MessagePump, "_dispatch_message", changed)
    assert not textual_hooks_match()
    monkeypatch.delattr(MessagePump, "_dispatch_message")
    assert not textual_hooks_match()


_CHANGED_TEXTUAL = """
from textual.app import App
App._handle_exception = lambda self, error, where: None  # a Textual that changed it
import tui.guard as g
print(g.HOOKS_MATCH, sorted(n for c in (g.ReportsErrors, g.ReportingApp) for n in vars(c)
                            if n in ("_dispatch_message", "_handle_exception")))
"""


def test_under_a_changed_textual_the_overrides_are_left_out() -> None:
    """Plain Textual behaviour (a bug ends the app) rather than every message failing."""
    proc = subprocess.run([sys.executable, "-c", _CHANGED_TEXTUAL], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "[]"]


class Boom(Message):
    """A plain message (not an event): handled through ``_dispatch_message`` only."""


class Fragile(ReportsErrors, Static):
    def on_boom(self, message: Boom) -> None:
        raise ValueError("injected message bug")


class Tiny(ReportingApp, App[None]):
    def compose(self) -> ComposeResult:
        yield Fragile("fragile")


@pytest.fixture
def reporting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv(STRICT_ENV, raising=False)
    monkeypatch.setenv("ATTN_TUI_LOG_DIR", str(tmp_path / "logs"))
    return tmp_path / "logs"


async def test_a_message_handlers_error_reaches_the_guard(reporting: Path) -> None:
    app = Tiny()
    async with app.run_test(notifications=True) as pilot:
        await pilot.pause()
        app.query_one(Fragile).post_message(Boom())
        await pilot.pause()
        notes = [n.message for n in app._notifications]
        assert len(notes) == 1 and "injected message bug" in notes[0], notes
        assert app.is_running and app.return_code is None
        assert BROKEN_NOTE not in str(app.query_one(Fragile).render())


async def test_a_timers_error_reaches_the_guard(reporting: Path) -> None:
    """Timers report through ``App._handle_exception``, not through a message."""
    app = Tiny()
    async with app.run_test(notifications=True) as pilot:
        await pilot.pause()
        app.set_timer(0.01, lambda: [][0])
        for _ in range(50):
            await asyncio.sleep(0.01)
            if app._notifications:
                break
        notes = [n.message for n in app._notifications]
        assert len(notes) == 1 and "IndexError" in notes[0], notes
        assert app.is_running and app.return_code is None
        await pilot.press("x")  # still handling input
    assert len(list(reporting.glob("error-*.log"))) == 1
