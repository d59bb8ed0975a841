"""The Regions view's list (``tui.regions_data.region_list``) holds the regions the
rest of the tool names: the attention regions first, even where they are ops or
kernel sites rather than annotations (a trace made elsewhere has no ``attn_fwd``),
and it groups the annotations' instances in one pass (20,000 request names took
20 s when each name was selected on its own)."""

from __future__ import annotations

import json

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.regions import Regions
from profiling.analysis.stored_regions import StoredRegions
from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op
from tests.test_many_names import _requests
from tui.cli import main
from tui.regions_data import region_list


def _sdpa_calls(n: int) -> list[dict]:
    """``n`` SDPA calls, each launching a flash kernel and a copy, inside a step."""
    events = [op("ProfilerStep#1", 0, 1000 * n + 100)]
    for i in range(n):
        ts = 100 + 1000 * i
        events += [op("aten::scaled_dot_product_attention", ts, 300),
                   op("aten::_flash_attention_forward", ts + 10, 200),
                   call("cudaLaunchKernel", ts + 20, 5, corr=2 * i + 1),
                   call("cudaMemcpyAsync", ts + 40, 5, corr=2 * i + 2),
                   gpu("flash_fwd_kernel", ts + 500, 20 + i, corr=2 * i + 1),
                   gpu("Memcpy DtoD (Device -> Device)", ts + 530, 2, corr=2 * i + 2,
                       cat="gpu_memcpy")]
    return events


@pytest.mark.parametrize("cache", [False, True], ids=["computed", "stored"])
def test_attention_ops_are_regions_with_the_kernels_listing_s_figures(
        write_trace, capsys, cache: bool) -> None:
    path = write_trace(_sdpa_calls(5))
    if cache:  # an index (the op's instances stored with it), then a reopen
        load_trace(path, min_cache_bytes=0)
    a = AnalysedTrace(load_trace(path, min_cache_bytes=0) if cache
                      else load_trace(path, use_cache=False))
    regions = region_list(a)
    assert [r.name for r in regions] == ["aten::scaled_dot_product_attention", "ProfilerStep*"]
    sdpa = regions[0]
    assert not sdpa.annotation and regions[1].annotation
    assert sdpa.count == len(sdpa.instances) == 5
    assert sdpa.summary.kernels_per_instance == 1 and sdpa.summary.memcpy_per_instance == 1
    assert main(["kernels", str(path), "--json", "--no-cache"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [i["device_time_us"] for i in listing] == [
        i.device_ns / 1000 for i in sdpa.instances]
    assert sdpa.summary.device_time_avg_us == pytest.approx(
        sum(i["device_time_us"] for i in listing) / 5)


def test_an_attention_annotation_stays_first_and_the_op_inside_it_is_not_added(
        write_trace) -> None:
    events = _sdpa_calls(3)
    events += [op("attn_fwd", 100 + 1000 * i - 5, 320, cat="user_annotation") for i in range(3)]
    events.append(op("tokenize", 3500, 10, cat="user_annotation"))
    a = AnalysedTrace(load_trace(write_trace(events)))
    names = [r.name for r in region_list(a)]
    assert names[0] == "attn_fwd" and names[-1] == "ProfilerStep*"
    assert "aten::scaled_dot_product_attention" not in names  # attention is the annotation
    assert "tokenize" in names


def test_the_list_of_many_names_selects_none_of_them_one_by_one(
        write_trace, monkeypatch) -> None:
    path = write_trace(_requests(300))
    for cls in (Regions, StoredRegions):
        monkeypatch.setattr(cls, "select", lambda *_: pytest.fail("a select per name"))
    for _ in range(2):  # first open (an index written), then the reopen that maps it
        a = AnalysedTrace(load_trace(path, min_cache_bytes=0))
        regions = region_list(a)
        assert len(regions) == 300
        assert [r.name for r in regions[:2]] == ["request_0000", "request_0001"]
        assert all(r.count == 1 and r.instances[0].name == r.name for r in regions)


async def test_the_regions_view_lists_the_attention_op_and_its_kernels(write_trace) -> None:
    from tui.app import AttnTuiApp
    from tui.widgets.regions_view import RegionsView

    from .test_tui_pilot import wait_loaded

    app = AttnTuiApp([str(write_trace(_sdpa_calls(4)))], theme="attn-dark")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        await pilot.pause()
        view = app.query_one(RegionsView)
        names = view.names_table
        assert "attention ops" in str(names.border_title)
        assert view.current_region is not None
        assert view.current_region.name == "aten::scaled_dot_product_attention"
        assert view.instances_table.row_count == 4
        assert [k.name for k in view.kernels] == ["flash_fwd_kernel",
                                                  "Memcpy DtoD (Device -> Device)"]
