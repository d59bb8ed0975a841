"""Traces that name thousands of regions (a server annotating each request): the
default ``kernels`` listing finds their instances in one pass over the regions,
not one per name (20,000 names took 25 s), and the one-line error and the
``stats`` tables stay short, pointing at ``--json`` for the rest."""

from __future__ import annotations

import json

from profiling.analysis.regions import Regions
from profiling.analysis.stored_regions import StoredRegions
from tests.test_analysis_links import call, gpu, op
from tui.cli import main

N = 300


def _requests(n: int = N) -> list[dict]:
    events = []
    for i in range(n):
        ts = 1000 * i
        events += [op(f"request_{i:04d}", ts, 50, ext=i + 1, cat="user_annotation"),
                   call("cudaLaunchKernel", ts + 10, 5, corr=i + 1),
                   gpu("gemm_kernel", ts + 100, 10 + i, corr=i + 1)]
    return events


def _no_per_name_lookups(monkeypatch) -> list[str]:
    calls: list[str] = []
    for cls, name in ((Regions, "select"), (StoredRegions, "select"),
                      (StoredRegions, "positions")):
        original = getattr(cls, name)

        def counted(self, *args, _original=original, _name=name):
            calls.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(cls, name, counted)
    return calls


def test_default_listing_of_many_names_looks_each_up_once(write_trace, capsys, monkeypatch):
    path = write_trace(_requests())
    calls = _no_per_name_lookups(monkeypatch)
    listings = []
    for extra in (["--no-cache"], [], []):  # computed, then first open, then reopened
        assert main(["kernels", str(path), "--json", *extra]) == 0
        out, err = capsys.readouterr()
        listings.append(json.loads(out))
        assert "top-level annotations: request_0000, request_0001" in err
    assert calls == []  # one pass over the regions, never one per name
    first = listings[0]
    assert all(listing == first for listing in listings)
    assert [i["region"] for i in first] == [f"request_{i:04d}" for i in range(N)]
    assert [i["kernels"][0]["dur_us"] for i in first] == [10.0 + i for i in range(N)]


def test_no_region_error_names_a_few_and_counts_the_rest(write_trace, capsys):
    path = write_trace(_requests())
    assert main(["kernels", str(path), "--region", "nope", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400
    assert "request_0000, request_0001" in err and f"and {N - 12} more" in err


def test_stats_text_lists_the_regions_with_the_most_cpu_time(write_trace, capsys, monkeypatch):
    from tui.commands import stats as stats_command

    events = _requests(5)  # 50 us each
    events.append(op("request_0003", 9000, 400, cat="user_annotation"))  # 450 us in all
    path = write_trace(events)
    monkeypatch.setattr(stats_command, "REGION_ROWS", 2)
    assert main(["stats", str(path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "request_0003" in out and "request_0000" in out and "request_0001 " not in out
    assert "3 more regions (the 2 with the most CPU time shown; --json lists every region)" \
        in out
    assert main(["stats", str(path), "--json", "--no-cache"]) == 0
    assert len(json.loads(capsys.readouterr().out)["regions"]) == 5


def test_a_copies_cell_names_a_few_regions_and_counts_the_rest(monkeypatch):
    from tui.commands import stats as stats_command

    monkeypatch.setattr(stats_command, "NAMES_IN_CELL", 2)
    assert stats_command._some(["a", "b"]) == "a, b"
    assert stats_command._some(["a", "b", "c", "d"]) == "a, b (+2 more)"


async def test_the_regions_table_holds_a_window_of_the_names(write_trace, monkeypatch):
    from tui import regions_data
    from tui.app import AttnTuiApp
    from tui.widgets.regions_view import RegionsView

    from .test_tui_pilot import wait_loaded

    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 4)
    path = write_trace(_requests(12))
    app = AttnTuiApp([str(path)], theme="attn-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        view = app.query_one(RegionsView)
        names = view.names_table
        assert len(view.regions) == 12 and names.row_count == 4
        names.focus()
        for _ in range(7):
            await pilot.press("down")
        await pilot.pause()
        assert names.coordinate_to_cell_key((names.cursor_row, 0)).row_key.value == "7"
        assert view.current_region is view.regions[7]
        assert view.current_region.name == "request_0007"
        await pilot.press("ctrl+end")  # the last region, past the window
        await pilot.pause()
        assert view.current_region is view.regions[-1] and names.row_count == 4
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert view.current_region is view.regions[0]
