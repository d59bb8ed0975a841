"""The Textual app: one tab per file, four views per tab, a Compare tab, app-wide keys.

Wiring only: views live in ``tui.widgets``, screens in ``tui.screens``, state and
logic in plain modules (``tui.timeline_model``, ``tui.search``...).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from tui.guard import ReportingApp
from tui.screen_size import too_small
from tui.screens.help import HelpScreen
from tui.screens.search import SearchScreen
from tui.screens.too_small import TooSmallScreen
from tui.session import load_session
from tui.themes import DARK, LIGHT, THEMES, default_theme
from tui.widgets.compare_view import CompareView
from tui.widgets.timeline import Timeline
from tui.widgets.trace_pane import VIEWS, Loader, TracePane


class AttnTuiApp(ReportingApp, App[int]):  # ReportingApp: a bug is reported, not fatal
    CSS_PATH = "app.tcss"
    TITLE = "attn-tui"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("1", "view('timeline')", "Timeline"),
        Binding("2", "view('regions')", "Regions"),
        Binding("3", "view('ops')", "Ops"),
        Binding("4", "compare", "Compare", show=False),
        Binding("5", "view('findings')", "Findings", show=False),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("n", "match(1)", "Next match", show=False),
        Binding("N", "match(-1)", "Prev match", show=False),
        Binding("left_square_bracket", "tab(-1)", "Prev file", show=False),
        Binding("right_square_bracket", "tab(1)", "Next file", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
        Binding("ctrl+s", "screenshot_here", "Screenshot", show=False),
    ]

    def __init__(
        self,
        paths: list[str],
        *,
        no_cache: bool = False,
        loader: Loader = load_session,
        theme: str | None = None,
    ) -> None:
        super().__init__()
        self.paths = [os.fspath(p) for p in paths]
        self.no_cache = no_cache
        self.loader = loader
        self.last_search = ""
        self._file_tab: str | None = "file-0"  # the file tab keys 1-3 and 5 go back to
        for t in THEMES:
            self.register_theme(t)
        self.theme = theme or default_theme()

    def compose(self) -> ComposeResult:
        with TabbedContent(id="files"):
            for i, path in enumerate(self.paths):
                title = Content(os.path.basename(path) or path)
                with TabPane(title, id=f"file-{i}"):
                    yield TracePane(
                        path, loader=self.loader, no_cache=self.no_cache, id=f"pane-{i}"
                    )
            if len(self.paths) > 1:
                with TabPane(Content("4 Compare"), id="compare"):
                    yield CompareView(id="compare-view")
        yield Footer(compact=True)

    def on_resize(self, event: events.Resize) -> None:
        # after Textual has applied the new size (a screen pushed before that is not drawn)
        self.call_after_refresh(self._fit_screen, *event.size)

    def _fit_screen(self, width: int, height: int) -> None:
        """Below the minimum size, one message instead of a garbled screen."""
        top = self.screen if self.screen_stack else None
        if too_small(width, height):
            if isinstance(top, TooSmallScreen):
                top.show_size(width, height)
            else:
                self.push_screen(TooSmallScreen(width, height))
        elif isinstance(top, TooSmallScreen):
            self.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if isinstance(self.screen, TooSmallScreen):  # a screen opened on it would hide it
            return action == "quit"
        return True

    # ---- the active file ----

    @property
    def panes(self) -> list[TracePane]:
        return list(self.query(TracePane))

    @property
    def pane(self) -> TracePane | None:
        tabs = self.query_one("#files", TabbedContent)
        active = tabs.active_pane
        found = active.query(TracePane) if active is not None else None
        return found.first() if found else None  # None on the Compare tab

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = self.pane
        if pane is not None:
            self._file_tab = pane.parent.id if pane.parent else None
            self.call_after_refresh(pane.show_view, pane.view)
        elif event.pane.id == "compare":
            compare = self.query_one(CompareView)
            compare.update_from(self.panes)
            self.call_after_refresh(compare.focus_view)

    def on_trace_pane_settled(self, message: TracePane.Settled) -> None:
        compare = self.query(CompareView)
        if compare and compare.first().state != "idle":  # shown once: keep it current
            compare.first().update_from(self.panes)

    # ---- actions ----

    def action_view(self, view: str) -> None:
        pane = self.pane
        if pane is None and self._file_tab:  # on the Compare tab: back to the last file
            self.query_one("#files", TabbedContent).active = self._file_tab
            pane = self.query_one(f"#{self._file_tab}").query_one(TracePane)
        if pane is not None and view in VIEWS:
            pane.show_view(view)

    def action_compare(self) -> None:
        if len(self.paths) < 2:
            self.notify(
                "Compare needs two or more traces: attn-tui open A.json B.json ...",
                severity="warning",
                timeout=5,
            )
            return
        self.query_one("#files", TabbedContent).active = "compare"

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_search(self) -> None:
        def done(text: str | None) -> None:
            pane = self.pane
            if text is None or pane is None:
                return
            self.last_search = text
            self.notify(pane.search(text), timeout=3)

        self.push_screen(SearchScreen(self.last_search), done)

    def action_match(self, direction: int) -> None:
        pane = self.pane
        if pane is not None and not pane.step_match(direction):
            self.notify("No search matches: / searches", severity="warning", timeout=3)

    def action_tab(self, step: int) -> None:
        tabs = self.query_one("#files", TabbedContent)
        ids = [f"file-{i}" for i in range(len(self.paths))]
        current = tabs.active if tabs.active in ids else self._file_tab  # from Compare
        if current in ids:
            tabs.active = ids[(ids.index(current) + step) % len(ids)]

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT.name if self.theme == DARK.name else DARK.name

    def action_screenshot_here(self) -> None:
        path = self.save_screenshot(path=os.getcwd())
        self.notify(f"Saved {path}", timeout=4)

    def action_timeline(self, action: str) -> None:
        """Run a timeline action from the command palette."""
        pane = self.pane
        if pane is None or pane.state != "ready":
            return
        pane.show_view("timeline")
        timeline = pane.query_one(Timeline)
        self.call_after_refresh(timeline.run_action, action)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "View: timeline (1)", "Lanes over time", partial(self.action_view, "timeline")
        )
        yield SystemCommand(
            "View: regions (2)",
            "record_function regions and their kernels",
            partial(self.action_view, "regions"),
        )
        yield SystemCommand(
            "View: ops (3)", "The key_averages op table", partial(self.action_view, "ops")
        )
        yield SystemCommand(
            "View: compare (4)",
            "The open files side by side (two or more)",
            self.action_compare,
        )
        yield SystemCommand(
            "View: findings (5)",
            "What an expert would point out, with evidence",
            partial(self.action_view, "findings"),
        )
        yield SystemCommand(
            "Search event names (/)", "Substring, or re:<regex>", self.action_search
        )
        yield SystemCommand("Next match (n)", "Next search match", partial(self.action_match, 1))
        yield SystemCommand(
            "Previous match (N)", "Previous search match", partial(self.action_match, -1)
        )
        yield SystemCommand("Help: keys (?)", "Every key", self.action_help)
        yield SystemCommand(
            "Toggle light/dark theme (ctrl+t)", "attn-light / attn-dark", self.action_toggle_theme
        )
        for title, action in (
            ("Timeline: zoom in (w)", "zoom_in"),
            ("Timeline: zoom out (s)", "zoom_out"),
            ("Timeline: fit all (0)", "fit_all"),
            ("Timeline: zoom to selection (f)", "zoom_selection"),
            ("Timeline: jump CPU/GPU (g)", "follow_link"),
            ("Timeline: back (b)", "back"),
            ("Timeline: unfold all lanes (E)", "unfold_all"),
            ("Timeline: fold all lanes (C)", "fold_all"),
        ):
            yield SystemCommand(
                title, "On the timeline view", partial(self.action_timeline, action)
            )
