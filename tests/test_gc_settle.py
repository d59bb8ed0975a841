"""An open trace keeps the cyclic collector's full passes off its objects
(``tui.gc_settle``): what is alive once the pane has loaded is frozen, and thawed
when the pane goes, so a process running many apps (these tests) frees them."""

from __future__ import annotations

import asyncio
import gc
import weakref

from tests.conftest import SAMPLE_TRACES
from tui.app import AttnTuiApp

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"


def test_a_loaded_trace_is_frozen_and_thawed_when_the_app_quits():
    gc.unfreeze()
    assert gc.get_freeze_count() == 0

    async def run() -> tuple[int, int, weakref.ref]:
        app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_loaded(pilot)
            # the widgets, the modules and the trace's analysis: out of the full passes
            frozen = gc.get_freeze_count()
            model = weakref.ref(app.pane.model)
        return frozen, gc.get_freeze_count(), model

    frozen, after, model = asyncio.run(run())  # its own loop: nothing of it outlives it
    assert frozen > 10_000
    assert after == 0
    gc.collect()
    assert model() is None  # nothing of the pane was left frozen in a cycle
