"""The app's first open of a trace stores what a headless first open stores
(``Session.warm``, after the analysis, on its thread): the Findings view, the
Regions view's GPU event lists and the next commands read it.  A reopen warms
nothing.  The samples are indexed here as a big trace would be."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from profiling.analysis import analysed as analysed_module
from profiling.analysis import analysis_store
from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import loader
from profiling.trace.cache import is_new_index
from profiling.trace.model import Trace
from tests.conftest import SAMPLE_TRACES
from tests.test_tui_pilot import wait_loaded, wait_until
from tui import loading
from tui import session as session_module
from tui.app import AttnTuiApp

PATH = SAMPLE_TRACES / "naive.json.gz"


@dataclass
class Warming:
    """What the app decided (``should_warm``'s answers) and which warm-ups ended."""

    answers: list[bool] = field(default_factory=list)
    ended: int = 0

    def settled(self) -> bool:
        return bool(self.answers) and (not self.answers[-1] or self.ended > 0)


@pytest.fixture
def warming(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Warming:
    """Every load indexed, in this test's cache folder; the app's warm-up recorded."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    monkeypatch.setattr(session_module, "load_trace",
                        functools.partial(loader.load_trace, min_cache_bytes=0))
    monkeypatch.setattr(analysed_module, "STORED_BATCH", 1)  # the sample's 3 instances too
    seen = Warming()
    should, warm = loading.should_warm, loading.warm_quietly

    def recorded_should(trace: Trace) -> bool:
        seen.answers.append(should(trace))
        return seen.answers[-1]

    def recorded_warm(analysed: AnalysedTrace) -> None:
        warm(analysed)
        seen.ended += 1

    monkeypatch.setattr(loading, "should_warm", recorded_should)
    monkeypatch.setattr(loading, "warm_quietly", recorded_warm)
    return seen


async def _open_until_settled(seen: Warming) -> None:
    app = AttnTuiApp([str(PATH)], theme="attn-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot, 60)
        await wait_until(pilot, seen.settled, "the warm-up", 60)


async def test_a_first_open_in_the_app_stores_what_the_next_open_reads(warming):
    await _open_until_settled(warming)
    assert warming.answers == [True] and warming.ended == 1  # a new index: warmed
    again = loader.load_trace(PATH, min_cache_bytes=0)
    assert not is_new_index(again)
    for part in ("findings", "key_averages"):
        assert analysis_store.load(again, part) is not None, part

    warming.answers.clear()
    await _open_until_settled(warming)  # the app's reopen
    assert warming.answers == [False] and warming.ended == 1
