"""How a GPU event's ``launched_by`` op was found (issue 10, item 1's last sentence):
``external_id`` where torch's table credits that op too, ``nesting`` where only launch
nesting names it (the table shows no device time for it), ``none`` where no op does."""

from __future__ import annotations

import json

from profiling.analysis.analysed import AnalysedTrace
from profiling.analysis.launch_chain import ATTRIBUTIONS, attribution
from profiling.trace import load_trace
from tests.test_analysis_links import call, gpu, op, row
from tui.cli import main

EVENTS = [
    op("region", 0, 1000, ext=1, cat="user_annotation"),
    op("aten::mm", 10, 100, ext=2),
    call("cudaLaunchKernel", 20, 5, corr=50, ext=2),  # its op's id: torch credits aten::mm
    gpu("gemm_kernel", 2000, 10, corr=50),
    op("aten::copy_", 200, 100, ext=3),
    call("cudaMemcpyAsync", 210, 5, corr=51),  # no External id: nesting only
    gpu("Memcpy HtoD (Pageable -> Device)", 2100, 5, corr=51, cat="gpu_memcpy"),
    op("aten::fill_", 400, 100, ext=4),
    call("cudaMemsetAsync", 410, 5, corr=52, ext=99),  # an id that names no op around it
    gpu("Memset (Device)", 2200, 1, corr=52, cat="gpu_memset"),
    call("cudaLaunchKernel", 1500, 5, corr=53),  # outside every op
    gpu("lonely_kernel", 2300, 5, corr=53),
    gpu("orphan_kernel", 2400, 5, corr=54),
]


def test_each_label(write_trace):
    a = AnalysedTrace(load_trace(write_trace(EVENTS)))
    t = a.trace
    names = ["gemm_kernel", "Memcpy HtoD (Pageable -> Device)", "Memset (Device)",
             "lonely_kernel", "orphan_kernel"]
    got = attribution(t, a.links, [row(t, n) for n in names]).tolist()
    assert [ATTRIBUTIONS[i] for i in got] == ["external_id", "nesting", "nesting", "none",
                                             "none"]


def test_table_credits_only_the_external_id_op(write_trace, capsys):
    path = write_trace(EVENTS)
    assert main(["table", str(path), "--json", "--no-cache"]) == 0
    device = {r["key"]: r["self_device_time_total"] for r in json.loads(capsys.readouterr().out)
              if r["device_type"] == "CPU"}
    assert device["aten::mm"] > 0
    assert device["aten::copy_"] == 0 and device["aten::fill_"] == 0


def test_kernels_json_and_stats_copies_say_it(write_trace, capsys):
    path = write_trace(EVENTS)
    assert main(["kernels", str(path), "--region", "region", "--json", "--no-cache"]) == 0
    (inst,) = json.loads(capsys.readouterr().out)
    got = {k["name"]: (k["launched_by"], k["attribution"]) for k in inst["kernels"]}
    assert got == {"gemm_kernel": ("aten::mm", "external_id"),
                   "Memcpy HtoD (Pageable -> Device)": ("aten::copy_", "nesting"),
                   "Memset (Device)": ("aten::fill_", "nesting")}
    assert main(["kernels", str(path), "--region", "region", "--no-cache"]) == 0
    assert capsys.readouterr().out.count("(by nesting)") == 2
    assert main(["stats", str(path), "--json", "--no-cache"]) == 0
    copies = json.loads(capsys.readouterr().out)["copies"]
    assert copies["Memcpy HtoD (Pageable -> Device)"]["attribution"] == {"nesting": 1}
    assert copies["Memset (Device)"]["launched_by"] == ["aten::fill_"]
