"""SVG snapshots of the three views, help, a load error and an empty trace.

Fixed terminal size, fixed theme, a synthetic trace written fresh each run
(deterministic) and relative paths, so nothing in the picture depends on time
or on where the test runs.  Update with ``pytest --snapshot-update`` after
checking the pictures by eye.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from tests.fixtures.synthetic import naive_like_doc, write_doc
from tui.app import AttnTuiApp

from .test_tui_pilot import wait_loaded

SIZE = (120, 36)


@pytest.fixture
def naive_app(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_doc(tmp_path / "naive.json", naive_like_doc(3))
    return AttnTuiApp(["naive.json"], theme="attn-dark")


def test_snapshot_timeline(naive_app, snap_compare):
    assert snap_compare(naive_app, terminal_size=SIZE, run_before=wait_loaded)


def test_snapshot_timeline_zoomed_selection(naive_app, snap_compare):
    # the first attn_fwd instance from the regions view, then a kernel selected
    press = ["2", "enter", "z", "j", "j", "j", "j", "j", "j", "j", "j", "l", "l", "l"]
    assert snap_compare(naive_app, press=press, terminal_size=SIZE, run_before=wait_loaded)


def test_snapshot_regions(naive_app, snap_compare):
    press = ["2", "enter", "enter", "down", "down", "down", "down", "down"]
    assert snap_compare(naive_app, press=press, terminal_size=SIZE, run_before=wait_loaded)


def test_snapshot_ops(naive_app, snap_compare):
    assert snap_compare(naive_app, press=["3"], terminal_size=SIZE, run_before=wait_loaded)


def test_snapshot_help(naive_app, snap_compare):
    assert snap_compare(naive_app, press=["?"], terminal_size=SIZE, run_before=wait_loaded)


def test_snapshot_load_error(tmp_path, monkeypatch, snap_compare):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.json").write_text('{"traceEvents": [ {"ph": "X", ')
    (tmp_path / "garbage.json").write_bytes(b"\x00\x01 not a trace")
    app = AttnTuiApp(["garbage.json", "broken.json"], theme="attn-dark")
    assert snap_compare(app, terminal_size=(80, 24), run_before=wait_loaded)


def test_snapshot_empty_trace(tmp_path, monkeypatch, snap_compare):
    monkeypatch.chdir(tmp_path)
    write_doc(tmp_path / "empty.json", {"traceEvents": []})
    app = AttnTuiApp(["empty.json"], theme="attn-dark")
    assert snap_compare(app, terminal_size=(80, 24), run_before=wait_loaded)


SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
STORY = ("naive", "inplace", "sdpa_math", "sdpa_flash", "sdpa_cudnn")
needs_samples = pytest.mark.skipif(
    not all((SAMPLES / f"{n}.json.gz").exists() for n in STORY), reason="sample traces absent"
)


async def _settle(pilot, done) -> None:
    for _ in range(400):
        if done():
            break
        await pilot.pause(0.05)
    await pilot.pause()


@needs_samples
def test_snapshot_compare(monkeypatch, snap_compare):
    # relative paths: the picture says "naive.json.gz", not where the repo lives
    monkeypatch.chdir(SAMPLES)
    app = AttnTuiApp([f"{n}.json.gz" for n in STORY], theme="attn-dark")

    async def compare(pilot) -> None:
        from tui.widgets.compare_view import CompareView

        await wait_loaded(pilot)
        await pilot.press("4")
        # said plainly here rather than as a picture of the wrong tab
        assert app.query_one("#files", TabbedContent).active == "compare"
        view = app.query_one(CompareView)
        await _settle(pilot, lambda: view.state == "ready")

    assert snap_compare(app, terminal_size=SIZE, run_before=compare)


@needs_samples
def test_snapshot_findings(monkeypatch, snap_compare):
    monkeypatch.chdir(SAMPLES)
    app = AttnTuiApp(["naive.json.gz"], theme="attn-dark")

    async def findings(pilot) -> None:
        from tui.widgets.findings_view import FindingsView

        await wait_loaded(pilot)
        await pilot.press("5")
        view = app.query_one(FindingsView)
        await _settle(pilot, lambda: view.result is not None)
        await pilot.press("enter", "down")

    assert snap_compare(app, terminal_size=SIZE, run_before=findings)


@needs_samples
def test_snapshot_range_panel(monkeypatch, snap_compare):
    """m on the second attn_fwd instance of naive: the ruler's range and the panel."""
    monkeypatch.chdir(SAMPLES)
    app = AttnTuiApp(["naive.json.gz"], theme="attn-dark")

    async def range_over_attn_fwd(pilot) -> None:
        from textual.widgets import DataTable

        from profiling.trace.model import Kind
        from tui.widgets.range_panel import RangePanel
        from tui.widgets.timeline import Timeline

        await wait_loaded(pilot)
        trace = app.pane.model.trace
        rows = [r for r in range(len(trace))
                if trace.name(r) == "attn_fwd" and trace.kind[r] == Kind.USER_ANNOTATION]
        app.query_one(Timeline).select_row(rows[1])
        await pilot.press("m")
        panel = app.query_one(RangePanel)
        table = panel.query_one(DataTable)

        def laid_out() -> bool:  # the rows in, and their widths measured (on idle: Textual
            # 8.2.8's DataTable; a loaded machine drew the headers alone, too narrow)
            return (panel.report is not None and table.row_count == len(panel.report.rows)
                    and not table._require_update_dimensions and not table._new_rows)

        await _settle(pilot, laid_out)

    assert snap_compare(app, terminal_size=(80, 24), run_before=range_over_attn_fwd)


def test_snapshot_legend(naive_app, snap_compare):
    """L on the timeline: each colour with a sample, the copies' letters, the shades."""
    assert snap_compare(naive_app, press=["L"], terminal_size=(80, 24), run_before=wait_loaded)
