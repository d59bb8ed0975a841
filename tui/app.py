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
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, TabbedContent, Tabs

from tui.guard import ReportingApp
from tui.keymap import bindings
from tui.names import visible
from tui.palette import REPLACED_SYSTEM_COMMANDS, palette_commands
from tui.screen_size import too_small
from tui.screens.help import HelpScreen
from tui.screens.occurrences import OccurrencesScreen
from tui.screens.search import SearchScreen
from tui.screens.too_small import TooSmallScreen
from tui.screenshot import save_svg
from tui.session import load_session
from tui.themes import DARK, LIGHT, THEMES, default_theme
from tui.widgets.compare_view import CompareView
from tui.widgets.diff_view import DiffView
from tui.widgets.findings_view import FindingsView
from tui.widgets.fit_footer import FitFooter
from tui.widgets.kept_tab import KeptTab
from tui.widgets.ops_view import OpsView
from tui.widgets.query_view import QueryView, show_query_tab
from tui.widgets.range_panel import RangePanel
from tui.widgets.ranks_view import RanksView
from tui.widgets.regions_view import RegionsView
from tui.widgets.timeline import Timeline
from tui.widgets.timeline_view import TimelineView
from tui.widgets.trace_pane import VIEWS, Loader, TracePane

VIEW_WIDGETS: dict[str, type] = {
    "ranks": RanksView,
    "timeline": Timeline, "details": TimelineView, "regions": RegionsView, "ops": OpsView,
    "findings": FindingsView, "range": RangePanel, "diff": DiffView, "query": QueryView,
    "occurrences": OccurrencesScreen,
}  # fmt: skip
"""The widget that runs each key map view's actions (``tui.keymap``)."""
VIEW_OF = {"details": "timeline", "range": "timeline"}
"""Key map views that live inside a file view."""


class MainScreen(Screen):
    """The files' screen.  No auto focus: each view focuses itself once shown;
    Textual's "first focusable widget" would be a table in a hidden tab (the
    Compare one), whose focus then switches the tab bar to it."""

    AUTO_FOCUS = ""


class AttnTuiApp(ReportingApp, App[int]):  # ReportingApp: a bug is reported, not fatal
    CSS_PATH = "app.tcss"
    TITLE = "attn-tui"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = bindings("app")  # every key: tui/keymap.py

    def __init__(
        self,
        paths: list[str],
        *,
        no_cache: bool = False,
        loader: Loader = load_session,
        theme: str | None = None,
        screenshot_dir: str | None = None,
    ) -> None:
        super().__init__()
        self.paths = [os.fspath(p) for p in paths]
        self.no_cache = no_cache
        self.loader = loader
        self.screenshot_dir = screenshot_dir
        self.last_search = ""
        self._file_tab: str | None = "file-0"  # the file tab keys 1-3 and 5 go back to
        for t in THEMES:
            self.register_theme(t)
        self.theme = theme or default_theme()

    def get_default_screen(self) -> Screen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        with TabbedContent(id="files"):
            for i, path in enumerate(self.paths):
                title = Content(visible(os.path.basename(path) or path))  # names are data
                with KeptTab(title, id=f"file-{i}"):
                    yield TracePane(
                        path, loader=self.loader, no_cache=self.no_cache, id=f"pane-{i}"
                    )
            if len(self.paths) > 1:
                with KeptTab(Content("4 Compare"), id="compare"):
                    yield CompareView(id="compare-view")
                with KeptTab(Content("7 Diff"), id="diff"):
                    yield DiffView(id="diff-view")
        yield FitFooter()

    def on_mount(self) -> None:
        # The tab bar takes no focus: Tab would park the focus there, where no view's
        # keys work and nothing shows it ([ and ] or a click switch files).
        for tabs in self.query(Tabs):
            tabs.can_focus = False

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

    def _tabs(self) -> TabbedContent | None:
        """The file tabs; None once they are gone (a tab switch still queued when the
        app quits finds none)."""
        return next(self.query("#files").results(TabbedContent), None)

    @property
    def pane(self) -> TracePane | None:
        """The active file's pane: None on the Compare tab, and once the tabs are gone."""
        tabs = self._tabs()
        if tabs is None:
            return None
        active = tabs.active_pane
        found = active.query(TracePane) if active is not None else None
        return found.first() if found else None  # None on the Compare tab

    def focus_shown_tab(self) -> None:
        """Give the focus to the shown tab's view (``KeptTab`` refused it elsewhere)."""
        pane = self.pane
        if pane is not None:
            pane.show_view(pane.view)
            return
        tabs = self._tabs()
        shown = tabs.active_pane if tabs is not None else None
        for widget in shown.query("*") if shown is not None else []:
            focus_view = getattr(widget, "focus_view", None)
            if focus_view is not None:
                focus_view()
                return

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if self._tabs() is None:
            return  # quitting: the tabs are gone
        pane = self.pane
        if pane is not None:
            self._file_tab = pane.parent.id if pane.parent else None
            self.call_after_refresh(pane.show_view, pane.view)
        elif event.pane.id == "compare":
            compare = self.query_one(CompareView)
            compare.update_from(self.panes)
            self.call_after_refresh(compare.focus_view)
        elif event.pane.id == "diff":
            diff = self.query_one(DiffView)
            diff.update_from(self.panes)
            self.call_after_refresh(diff.focus_view)

    def on_trace_pane_settled(self, message: TracePane.Settled) -> None:
        compare = self.query(CompareView)
        if compare and compare.first().state != "idle":  # shown once: keep it current
            compare.first().update_from(self.panes)
        diff = self.query(DiffView)
        if diff and diff.first().state != "idle":
            diff.first().update_from(self.panes)

    # ---- actions ----

    def action_view(self, view: str) -> None:
        pane = self.pane
        if pane is None and self._file_tab:  # on the Compare tab: back to the last file
            self._switch_tab(self._file_tab)
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
        self._switch_tab("compare")

    def action_diff(self) -> None:
        if len(self.paths) < 2:
            self.notify("Diff needs two or more traces: attn-tui open A.json B.json ...",
                        severity="warning", timeout=5)
            return
        self._switch_tab("diff")

    async def action_query(self) -> None:
        await show_query_tab(self)  # the Query tab (issue 16), added on first use

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_search(self) -> None:
        def done(text: str | None) -> None:
            pane = self.pane
            if text is None or pane is None:
                return
            self.last_search = text
            self.notify(pane.search(text), timeout=3, markup=False)  # it quotes the query

        self.push_screen(SearchScreen(self.last_search), done)

    def action_match(self, direction: int) -> None:
        pane = self.pane
        if pane is not None and not pane.step_match(direction):
            self.notify("No search matches: / searches", severity="warning", timeout=3)

    def show_file(self, index: int) -> None:
        """Show the ``index``-th file's tab (the palette's "File: NAME")."""
        self._switch_tab(f"file-{index}")

    def _switch_tab(self, tab: str) -> None:
        """Make ``tab`` the active tab.  Focus leaves the old tab first: Textual
        would otherwise move it, as the old tab hides, to another widget of that
        tab, whose focus switches the tab bar straight back (4 from Ops or
        Regions did nothing); the new tab's view takes the focus once shown."""
        tabs = self.query_one("#files", TabbedContent)
        if tabs.active != tab:
            self.screen.set_focus(None)
            tabs.active = tab

    def action_tab(self, step: int) -> None:
        tabs = self.query_one("#files", TabbedContent)
        ids = [f"file-{i}" for i in range(len(self.paths))]
        current = tabs.active if tabs.active in ids else self._file_tab  # from Compare
        if current in ids:
            self._switch_tab(ids[(ids.index(current) + step) % len(ids)])

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT.name if self.theme == DARK.name else DARK.name

    def action_screenshot_here(self) -> None:
        """Save an SVG of the screen and say where it went (the folder comes from
        ``screenshot_dir``, else ``$ATTN_TUI_SCREENSHOT_DIR``, else the current one)."""
        try:
            path = save_svg(self, self.screenshot_dir)
        except OSError as exc:
            self.notify(f"Screenshot not saved: {exc}", severity="error", timeout=8, markup=False)
            return
        self.notify(f"Screenshot saved to {path}", title="ctrl+s", timeout=8, markup=False)

    def run_in_view(self, view: str, action: str, tries: int = 40) -> None:
        """Run a view's action from the command palette: show the view (on the
        active file, or the last one when on the Compare tab), then run the action
        on its widget once it is mounted (views are built on first show)."""
        if view == "compare":
            self.action_compare()
            views: list[Widget] = list(self.query(CompareView))  # none with one file
            widget = views[0] if views else None
        else:
            shown = VIEW_OF.get(view, view)
            self.action_view(shown)
            pane = self.pane
            if pane is None or pane.state != "ready":
                if pane is None and tries > 0:  # leaving the Compare tab
                    self.set_timer(0.05, partial(self.run_in_view, view, action, tries - 1))
                return
            found: list[Widget] = list(pane.query(VIEW_WIDGETS[view]))
            widget = found[0] if found else None
            if widget is None or pane.query_one("#views", ContentSwitcher).current != shown:
                # mounting: look again; waiting for the analysis (any length on a big
                # trace or a busy machine) costs no tries, so the action is never lost
                analysing = pane.session is not None and not pane.session.analysed
                if tries > 0 and pane.view == shown:
                    left = tries if analysing else tries - 1
                    self.set_timer(0.05, partial(self.run_in_view, view, action, left))
                return
        if widget is not None:
            self.call_after_refresh(widget.run_action, action)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own entries less those we give ourselves (help, quit, screenshot),
        then every action of the key map, each file by name, each Ops sort column."""
        for cmd in super().get_system_commands(screen):
            if cmd.title not in REPLACED_SYSTEM_COMMANDS:
                yield cmd
        yield from palette_commands(self)
