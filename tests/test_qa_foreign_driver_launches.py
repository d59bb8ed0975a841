"""Driver-level launch calls of non-CUDA builds (found by QA on handmade XPU traces).

Kineto writes an XPU build's Level Zero calls (``zeCommandListAppendLaunchKernel``,
the ``PTI_VIEW_DRIVER_API`` view) under the category ``xpu_driver``, and a
PrivateUse1 backend's driver calls under ``privateuse1_driver``, beside
``xpu_runtime`` / ``privateuse1_runtime``; like ``cuda_driver``'s ``cuLaunchKernel``
they carry the ``correlation`` of the kernels and copies they launch.  Both were
read as "other" host events, so a trace whose launches were driver calls had every
kernel and copy an orphan (``not_a_runtime_call``), no region counted them, and no
op got their device time.
"""

from __future__ import annotations

import pytest

from profiling.analysis.links import link_gpu_events
from profiling.trace import Kind, load_trace
from profiling.trace.model import DEVICE_TYPE_NAMES
from tests.conftest import cli_json
from tests.test_trace_devices import accelerator_trace, rows_by_name


@pytest.mark.parametrize(
    ("driver", "device"), [("xpu_driver", "XPU"), ("privateuse1_driver", "PrivateUse1")]
)
def test_driver_calls_launch_kernels_and_copies(write_trace, driver, device):
    path = write_trace(accelerator_trace(driver, "kernel", "gpu_memcpy"))
    trace = load_trace(path)
    rows = rows_by_name(trace)
    assert Kind(int(trace.kind[rows["launch"]])) is Kind.RUNTIME
    links = link_gpu_events(trace)
    for name, call in (("mm_kernel", "launch"), ("Memcpy HtoD (Host -> Device)", "copy")):
        assert DEVICE_TYPE_NAMES[int(trace.device_type[rows[name]])] == device
        assert int(links.launch[rows[name]]) == rows[call]
        assert trace.name(int(links.op[rows[name]])) == "aten::mm"
    stats = cli_json("stats", str(path))
    assert stats["orphans"] == 0
    region = stats["regions"]["attn_fwd"]
    assert (region["kernels_per_instance"], region["memcpy_per_instance"]) == (1.0, 1.0)
    assert region["device_time_avg_us"] == 34.0
    table = {(r["key"], r["device_type"]): r for r in cli_json("table", str(path))}
    assert table[("aten::mm", "CPU")]["self_device_time_total"] == 34.0
    listing = cli_json("kernels", str(path))
    assert [k["launched_by"] for k in listing[0]["kernels"]] == ["aten::mm", "aten::mm"]
