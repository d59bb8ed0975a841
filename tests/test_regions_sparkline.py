"""The Regions view's GPU sparklines read each region's GPU times once, as a column,
and draw what the per-instance times drew."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis.analysed import AnalysedTrace
from profiling.trace.loader import load_trace
from tests.conftest import SAMPLE_TRACES, real_trace_files
from tui.blocks import sparkline
from tui.regions_data import gpu_sparkline, region_list

TRACES = sorted(SAMPLE_TRACES.glob("*.json.gz")) + real_trace_files()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_sparkline_is_the_per_instance_one(path: Path) -> None:
    regions = region_list(AnalysedTrace(load_trace(path, use_cache=False)))
    for region in regions:
        times = [float(inst.device_ns) for inst in region.instances]
        assert region.device_ns.tolist() == [inst.device_ns for inst in region.instances]
        for width in (16, 32):
            assert gpu_sparkline(region, width) == (sparkline(times, width) if any(times)
                                                    else "")
