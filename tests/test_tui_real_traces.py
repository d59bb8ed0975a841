"""Every real trace in ../shared/real_traces opens in the app and shows its lanes."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from tui.app import AttnTuiApp
from tui.widgets.ops_view import OpsView
from tui.widgets.regions_view import RegionsView
from tui.widgets.timeline import Timeline

from .conftest import needs_real_traces, real_trace_files
from .test_tui_pilot import wait_loaded

pytestmark = [pytest.mark.real_traces, needs_real_traces]

# traces whose regions and ops views are opened too (CPU-only, AMD, 2021 Kineto, H100)
ALL_VIEWS = ("dtu_mlops", "mi250", "gpu_metrics_input", "Qwen")


async def test_every_real_trace_shows_its_lanes():
    paths = real_trace_files()
    assert paths, "no traces found under ../shared/real_traces"
    app = AttnTuiApp([str(p) for p in paths], theme="attn-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot, timeout=120)
        panes = app.panes
        failures = {p.path: p.error for p in panes if p.state != "ready"}
        assert not failures
        tabs = app.query_one("#files", TabbedContent)
        for i, pane in enumerate(panes):
            # as ] and the palette switch files: setting tabs.active alone lets Textual move
            # the focus to a widget of the old tab as it hides, which switches straight back
            app.show_file(i)
            await pilot.pause()
            assert tabs.active == f"file-{i}" and app.pane is pane
            assert pane.model.trace.lanes and pane.model.rows, pane.path
            timeline = pane.query_one(Timeline)
            assert timeline.size.height > 0
            text = "\n".join(timeline.render_line(y).text for y in range(timeline.size.height))
            for spec in [s for s in pane.model.rows if s.kind == "lane"][:3]:
                assert spec.label[:8] in text, (pane.path, spec.label)
            if any(k in pane.path for k in ALL_VIEWS):
                await pilot.press("2", "3", "1")
                assert pane.query_one(RegionsView).regions is not None
                assert not pane.query_one(OpsView).error, pane.path
            assert pane.state == "ready"
