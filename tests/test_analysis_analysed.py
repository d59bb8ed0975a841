"""``AnalysedTrace``: every part is computed once per trace, whoever asks and from
whichever thread, and every command and view reads the same parts."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiling.analysis import analysed as analysed_module
from profiling.analysis import links as links_module
from profiling.analysis import regions as regions_module
from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.compare import compare_traces, implementations_by_region
from profiling.analysis.findings import trace_findings
from profiling.analysis.instance_kernels import instance_kernels
from profiling.analysis.key_averages import key_averages
from profiling.analysis.links import OpTree
from profiling.analysis.stats import trace_stats
from profiling.trace import load_trace
from tui.compare_data import Source, compare_sources
from tui.findings_data import find
from tui.regions_data import kernel_rows, region_list

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
NAIVE = SAMPLES / "naive.json.gz"


def _counting(calls: Counter[str], name: str, fn: Callable[..., Any],
              delay: float = 0.0) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        if delay:
            time.sleep(delay)  # widens the window two racing threads would share
        return fn(*args, **kwargs)
    return wrapper


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts every call of the expensive builders, through whatever module imported them."""
    counter: Counter[str] = Counter()
    originals = {
        "link_gpu_events": links_module.link_gpu_events,
        "find_regions": regions_module.find_regions,
        "key_averages": key_averages,
    }
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if not name.startswith(("profiling.", "tui.")):
            continue
        for attr, fn in originals.items():
            if getattr(module, attr, None) is fn:
                monkeypatch.setattr(module, attr, _counting(counter, attr, fn, 0.01))
    of = OpTree.of.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(OpTree, "of", classmethod(_counting(counter, "OpTree.of", of)))
    yield counter


def _every_consumer(a: AnalysedTrace) -> None:
    """What the headless commands and the TUI views read of one trace."""
    trace_stats(a)
    compare_traces([a])
    trace_findings(a)
    implementations_by_region(a)
    for inst in a.regions.instances:
        instance_kernels(a, inst)
    for region in region_list(a):
        for inst in region.instances:
            kernel_rows(a, inst)
    find(a)
    compare_sources([Source(a.trace.path, a)])


@pytest.fixture(params=["beside", "inline"])
def spare_cores(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The op nesting built on a thread of its own beside the links' join (as with 4
    cores or more), or by the links' asker (fewer)."""
    monkeypatch.setattr(analysed_module, "BESIDE_MIN_CORES",
                        1 if request.param == "beside" else 10**9)


@pytest.mark.skipif(not NAIVE.exists(), reason="no sample traces")
def test_each_part_is_computed_once_for_every_command_and_view(
    calls: Counter[str], spare_cores: None
) -> None:
    a = AnalysedTrace(load_trace(NAIVE, use_cache=False))
    assert not calls
    _every_consumer(a)
    _every_consumer(a)  # asking again computes nothing
    assert calls == {"link_gpu_events": 1, "find_regions": 1, "key_averages": 1, "OpTree.of": 1}
    assert all(a.ready(p) for p in ("ops", "links", "regions", "key_averages", "copies"))


@pytest.mark.skipif(not NAIVE.exists(), reason="no sample traces")
def test_threads_asking_at_once_share_one_computation(
    calls: Counter[str], spare_cores: None
) -> None:
    a = AnalysedTrace(load_trace(NAIVE, use_cache=False))
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(job: Callable[[AnalysedTrace], object]) -> None:
        try:
            start.wait()
            job(a)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    jobs = [trace_stats, trace_findings, compare_traces_of, region_list]
    threads = [threading.Thread(target=work, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert calls["link_gpu_events"] == 1 and calls["find_regions"] == 1
    assert calls["OpTree.of"] == 1


@pytest.mark.skipif(not NAIVE.exists(), reason="no sample traces")
def test_links_ask_for_the_op_nesting_built_beside_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysed_module, "BESIDE_MIN_CORES", 1)
    where: list[str] = []
    of = OpTree.of.__func__  # type: ignore[attr-defined]

    def recording(cls: type[OpTree], trace: Any) -> OpTree:
        where.append(threading.current_thread().name)
        return of(cls, trace)

    monkeypatch.setattr(OpTree, "of", classmethod(recording))
    trace = load_trace(NAIVE, use_cache=False)
    got = AnalysedTrace(trace).links
    assert where == ["attn-tui-ops"]
    want = links_module.link_gpu_events(trace)
    for field in ("launch", "op", "source", "gpu_rows", "orphans", "by_launch"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert (got.op >= 0).any()


@pytest.mark.skipif(not NAIVE.exists(), reason="no sample traces")
def test_a_failing_op_nesting_fails_the_links_asker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread beside says nothing; the asker's own call builds again and raises."""
    monkeypatch.setattr(analysed_module, "BESIDE_MIN_CORES", 1)
    unhandled: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", unhandled.append)

    def broken(cls: type[OpTree], trace: Any) -> OpTree:
        raise ValueError("broken nesting")

    monkeypatch.setattr(OpTree, "of", classmethod(broken))
    a = AnalysedTrace(load_trace(NAIVE, use_cache=False))
    with pytest.raises(ValueError, match="broken nesting"):
        _ = a.links
    assert not unhandled and not a.ready("ops")


def compare_traces_of(a: AnalysedTrace) -> object:
    return compare_traces([a])


def test_parts_can_be_given_ready_made(tmp_path: Path) -> None:
    """A stored analysis (the sidecar index, later) is handed back and not recomputed."""
    from tests.test_compare_fixtures import variant_doc, write_doc

    trace = load_trace(write_doc(tmp_path / "n.json", variant_doc("naive")))
    first = AnalysedTrace(trace)
    again = AnalysedTrace(trace, ops=first.ops, links=first.links, regions=first.regions)
    assert again.ready("links") and again.regions is first.regions
    assert trace_stats(again) == trace_stats(first)
    with pytest.raises(TypeError):
        AnalysedTrace(trace, linkz=first.links)


def test_launch_chains_inside_regions_and_out(write_trace) -> None:
    """One builder: the ops around the call, outermost first, then the call; an annotation
    region and a profiler step stay out of their own chains, an op region stays in."""
    from tests.test_analysis_links import call, gpu, op, row

    events = [
        op("ProfilerStep#1", 0, 1000),  # old-style step: a cpu_op
        op("attn_fwd", 100, 400, cat="user_annotation"),
        op("aten::masked_fill", 110, 100),
        op("## mask ##", 115, 90, cat="user_annotation"),
        op("aten::clone", 120, 60),
        op("aten::copy_", 130, 40),
        call("cudaMemcpyAsync", 140, 5, corr=1),
        call("cudaLaunchKernel", 250, 5, corr=2),  # directly in attn_fwd
        op("aten::scaled_dot_product_attention", 300, 100),
        op("aten::_flash_attention_forward", 310, 80),
        call("cudaLaunchKernel", 320, 5, corr=3),
        gpu("Memcpy DtoD (Device -> Device)", 600, 5, corr=1, cat="gpu_memcpy"),
        gpu("bare_kernel", 610, 5, corr=2),
        gpu("flash_fwd", 620, 5, corr=3),
        gpu("orphan", 630, 5, corr=99),
    ]
    a = AnalysedTrace(load_trace(write_trace(events)))
    t = a.trace

    def names(chain: tuple[int, ...]) -> list[str]:
        return [t.name(r) for r in chain]

    memcpy, bare, flash = row(t, "Memcpy DtoD (Device -> Device)"), row(t, "bare_kernel"), \
        row(t, "flash_fwd")
    attn, step, sdpa = row(t, "attn_fwd"), row(t, "ProfilerStep#1"), \
        row(t, "aten::scaled_dot_product_attention")
    assert names(a.launch_chain(memcpy, attn)) == [
        "aten::masked_fill", "## mask ##", "aten::clone", "aten::copy_", "cudaMemcpyAsync"]
    assert names(a.launch_chain(memcpy)) == [
        "ProfilerStep#1", "attn_fwd", "aten::masked_fill", "## mask ##", "aten::clone",
        "aten::copy_", "cudaMemcpyAsync"]
    assert names(a.launch_chain(bare, attn)) == ["cudaLaunchKernel"]
    assert names(a.launch_chain(bare, step)) == ["attn_fwd", "cudaLaunchKernel"]
    assert names(a.launch_chain(flash, sdpa)) == [
        "aten::scaled_dot_product_attention", "aten::_flash_attention_forward",
        "cudaLaunchKernel"]
    assert a.launch_chain(row(t, "orphan")) == ()
    # the innermost op of every chain is the links' own answer
    for g in (memcpy, bare, flash):
        chain = a.launch_chain(g)
        assert chain[-2] == a.links.op[g] and chain[-1] == a.links.launch[g]
    [inst] = a.instances("attn_fwd")
    assert [lc.gpu_row for lc in a.launches(inst)] == [memcpy, bare, flash]
    assert a.launches(inst)[0].op_row == row(t, "aten::copy_")
