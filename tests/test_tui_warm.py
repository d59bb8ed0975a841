"""The app's first open of a trace stores what a headless first open stores
(``Session.warm``, after the analysis, on its thread): the Findings view, the
Regions view's GPU event lists and the next commands read it.  A reopen warms
nothing.  The samples are indexed here as a big trace would be."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from profiling.analysis import analysed as analysed_module
from profiling.analysis import analysis_store
from profiling.analysis.analysed import AnalysedTrace
from profiling.trace import loader
from profiling.trace.cache import is_new_index
from tests.conftest import SAMPLE_TRACES
from tests.test_tui_pilot import wait_loaded, wait_until
from tui import loading
from tui import session as session_module
from tui.app import AttnTuiApp

PATH = SAMPLE_TRACES / "naive.json.gz"


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, bool]]:
    """Every load indexed, in this test's cache folder; each ``should_warm`` answer
    (with whether the trace's index was new) recorded once its warm-up, if any, ended."""
    monkeypatch.setenv("ATTN_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_TUI_NO_ANALYSIS_STORE", raising=False)
    monkeypatch.setattr(session_module, "load_trace",
                        functools.partial(loader.load_trace, min_cache_bytes=0))
    monkeypatch.setattr(analysed_module, "STORED_BATCH", 1)  # the sample's 3 instances too
    asked: list[tuple[bool, bool]] = []
    should, warm = loading.should_warm, loading.warm_quietly
    pending: list[bool] = []

    def recorded_should(trace: object) -> bool:
        answer = should(trace)  # type: ignore[arg-type]
        if not answer:
            asked.append((is_new_index(trace), False))  # type: ignore[arg-type]
        pending.append(is_new_index(trace))  # type: ignore[arg-type]
        return answer

    def recorded_warm(analysed: AnalysedTrace) -> None:
        warm(analysed)
        asked.append((pending[-1], True))

    monkeypatch.setattr(loading, "should_warm", recorded_should)
    monkeypatch.setattr(loading, "warm_quietly", recorded_warm)
    return asked


async def _open_until_warmed(asked: list[tuple[bool, bool]]) -> None:
    app = AttnTuiApp([str(PATH)], theme="attn-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot, 60)
        await wait_until(pilot, lambda: asked, "the warm-up's decision", 60)


async def test_a_first_open_in_the_app_stores_what_the_next_open_reads(indexed):
    await _open_until_warmed(indexed)
    assert indexed == [(True, True)]  # a new index: warmed
    again = loader.load_trace(PATH, min_cache_bytes=0)
    assert not is_new_index(again)
    for part in ("findings", "key_averages"):
        assert analysis_store.load(again, part) is not None, part

    indexed.clear()
    await _open_until_warmed(indexed)  # the app's reopen
    assert indexed == [(False, False)]
