"""``attn-tui diff`` (issue 17, items 1 and 3): kernel sequences aligned by LCS on
normalised names, rows ``=``/``-``/``+`` with times and launching ops, totals."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from profiling.analysis import lcs
from profiling.analysis.kernel_diff import align, kernel_key, split_template
from profiling.analysis.lcs import lcs_pairs
from tests.conftest import REAL_TRACES, SAMPLE_TRACES, needs_real_traces
from tests.fixtures.cli_run import cli_in_process
from tests.test_analysis_links import call, gpu, op

NAIVE = str(SAMPLE_TRACES / "naive.json.gz")
INPLACE = str(SAMPLE_TRACES / "inplace.json.gz")
FLASH = str(SAMPLE_TRACES / "sdpa_flash.json.gz")


def _json(*argv: str) -> list[dict]:
    result = cli_in_process(*argv, "--json", "--no-cache")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---- the samples ----

def test_naive_vs_inplace_is_naive_minus_one_memcpy():
    [d] = _json("diff", NAIVE, INPLACE)
    # the instances, chosen independently: the median by GPU time of kernels --json
    for side, path in (("a", NAIVE), ("b", INPLACE)):
        listing = _json("kernels", path, "--region", "attn_fwd")
        median = statistics.median_low(i["device_time_us"] for i in listing)
        assert d[side]["instance"] in [i["instance"] for i in listing
                                       if i["device_time_us"] == median]
    a = _json("kernels", NAIVE, "--region", "attn_fwd", "--instance", str(d["a"]["instance"]))
    b = _json("kernels", INPLACE, "--region", "attn_fwd", "--instance", str(d["b"]["instance"]))
    a_k, b_k = a[0]["kernels"], b[0]["kernels"]
    rows = d["rows"]
    assert [r["a_name"] for r in rows if r["op"] != "+"] == [k["name"] for k in a_k]
    assert [r["b_name"] for r in rows if r["op"] != "-"] == [k["name"] for k in b_k]
    [gone] = [r for r in rows if r["op"] != "="]
    assert gone["op"] == "-" and gone["a_name"].startswith("Memcpy DtoD")
    assert "aten::masked_fill" in gone["a_launch_chain"]
    memcpy = [k for k in a_k if k["kind"] == "memcpy"]
    assert len(memcpy) == 1 and gone["a_us"] == memcpy[0]["dur_us"]
    assert [k["name"] for k in a_k if k["kind"] != "memcpy"] == [k["name"] for k in b_k]
    t = d["totals"]
    assert t["only_a_us"] == pytest.approx(memcpy[0]["dur_us"])
    assert t["only_b_us"] == 0 and t["only_b"] == 0 and t["only_a"] == 1
    assert t["matched_a_us"] == pytest.approx(sum(k["dur_us"] for k in a_k) - memcpy[0]["dur_us"])
    assert t["matched_b_us"] == pytest.approx(sum(k["dur_us"] for k in b_k))


def test_three_traces_base_against_each():
    diffs = _json("diff", NAIVE, INPLACE, FLASH)
    assert [(d["a"]["path"], d["b"]["path"]) for d in diffs] == [(NAIVE, INPLACE), (NAIVE, FLASH)]
    flash = diffs[1]["rows"]
    assert [r["op"] for r in flash if r["op"] == "+"] == ["+"]
    assert "flash_fwd_kernel" in next(r["b_name"] for r in flash if r["op"] == "+")
    assert all(r["op"] == "-" for r in flash if "flash" not in (r["b_name"] or ""))
    md = cli_in_process("diff", NAIVE, INPLACE, FLASH, "--markdown", "--no-cache")
    assert md.returncode == 0
    lines = md.stdout.decode().splitlines()
    header = next(line for line in lines if line.startswith("| kernel"))
    assert header.count("| op |") == 2 and "inplace" in header and "sdpa\\_flash" in header
    table = [line for line in lines if line.startswith("| ") and line != header]
    # 7 naive kernels and flash's one added kernel, with cells for each other trace
    assert len(table) == 8
    assert all(line.count(" | ") == header.count(" | ") for line in table)


def test_json_fields():
    [d] = _json("diff", NAIVE, INPLACE, "--instance", "2")
    assert d["a"]["instance"] == 2 and d["b"]["instance"] == 2
    for r in d["rows"]:
        assert {"op", "a_name", "b_name", "a_us", "b_us", "launched_by"} <= set(r)
    assert {"matched_a_us", "matched_b_us", "only_a_us", "only_b_us"} <= set(d["totals"])


def test_rich_table_prints(capsys):
    result = cli_in_process("diff", NAIVE, INPLACE, "--no-cache")
    out = result.stdout.decode()
    assert result.returncode == 0 and "Memcpy DtoD" in out
    assert "only in naive 1 (128 µs)" in out


def test_the_table_shows_a_page_of_rows_and_the_totals_count_all(capsys, monkeypatch):
    from tui.cli import main
    from tui.commands import diff as diff_command

    assert main(["diff", NAIVE, INPLACE, "--no-cache"]) == 0
    whole = capsys.readouterr().out
    monkeypatch.setattr(diff_command, "TABLE_ROWS", 2)
    assert main(["diff", NAIVE, INPLACE, "--no-cache"]) == 0
    page = capsys.readouterr().out
    shown = [line for line in page.splitlines()
             if line.startswith("  ") and line.strip() and not line.strip().startswith("kernel")]
    assert len(shown) == 2 and "rows shown: --markdown or --json prints every row" in page
    assert "only in naive 1 (128 µs)" in page and "only in naive 1 (128 µs)" in whole
    assert "rows shown" not in whole


# ---- names ----

def test_template_arguments_kept_apart_from_the_stem():
    a = "void at::native::elementwise_kernel<128, 4, at::native::F<float> >(int, F)"
    b = "void at::native::elementwise_kernel<256, 2, at::native::F<c10::Half>>(int, F)"
    assert split_template(a) == ("at::native::elementwise_kernel", "128,4,at::native::F<float>")
    assert kernel_key(a, "kernel").stem == kernel_key(b, "kernel").stem
    assert kernel_key(a, "kernel").args != kernel_key(b, "kernel").args
    assert split_template("triton_poi_fused_add_0") == ("triton_poi_fused_add_0", "")
    assert split_template("void (anonymous namespace)::softmax<float, 10>(float*)")[0] == \
        "(anonymous namespace)::softmax"


def test_copies_match_by_kind_and_direction():
    pageable = kernel_key("Memcpy HtoD (Pageable -> Device)", "memcpy")
    pinned = kernel_key("Memcpy HtoD (Pinned -> Device)", "memcpy")
    assert pageable.stem == pinned.stem == "Memcpy HtoD" and pageable.args != pinned.args
    assert kernel_key("Memcpy DtoD (Device -> Device)", "memcpy").stem == "Memcpy DtoD"
    assert kernel_key("Memset (Device)", "memset").stem == "Memset"
    assert kernel_key("Memset (Device)", "memset") != kernel_key("Memset (Device)", "kernel")


# ---- the alignment ----

def _lcs_length(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (table[i][j] + 1 if x == y
                                   else max(table[i][j + 1], table[i + 1][j]))
    return table[-1][-1]


def _random_pairs_are_longest(seed: int, symbols: int, longest: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        a = [rng.randrange(symbols) for _ in range(rng.randrange(longest))]
        b = [rng.randrange(symbols) for _ in range(rng.randrange(longest))]
        pairs = lcs_pairs(a, b)
        assert len(pairs) == _lcs_length(a, b)
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(pairs, pairs[1:], strict=False))


def test_lcs_is_longest_and_valid_on_random_sequences():
    _random_pairs_are_longest(7, 4, 25)


def test_lcs_split_in_halves_is_still_longest(monkeypatch):
    """Above ``MAX_LCS_BITS`` cells the problem is split (Hirschberg): the same lengths."""
    monkeypatch.setattr(lcs, "MAX_LCS_BITS", 40)
    _random_pairs_are_longest(11, 3, 40)


def test_long_repetitive_sequences_align_in_linear_memory(monkeypatch):
    """Two runs of a few kernels repeated thousands of times (an annotation around a
    whole run): split, never more than ``MAX_LCS_BITS`` cells kept at once."""
    kept = []
    core = lcs._lcs_core
    monkeypatch.setattr(lcs, "MAX_LCS_BITS", 1_000_000)
    monkeypatch.setattr(lcs, "_lcs_core", lambda a, b: kept.append(len(a) * len(b)) or core(a, b))
    a = [i % 7 for i in range(6000)]
    b = [i % 5 for i in range(6500)]
    pairs = lcs_pairs(a, b)
    assert kept and max(kept) <= 1_000_000
    assert all(a[i] == b[j] for i, j in pairs)
    monkeypatch.setattr(lcs, "MAX_LCS_BITS", 10**9)  # the whole table at once
    assert len(pairs) == len(lcs_pairs(a, b))


def test_periodic_sequences_align_fully():
    a = [i % 12 for i in range(3000)]  # one layer's kernels, repeated
    b = list(a)
    del b[1500]
    b.insert(700, 99)
    assert len(lcs_pairs(a, b)) == len(a) - 1


def _rows(a, b):
    ka = [kernel_key(n, "kernel") for n in a]
    kb = [kernel_key(n, "kernel") for n in b]
    return [(("=" if i is not None and j is not None else "-" if i is not None else "+"),
             a[i] if i is not None else b[j], level)  # type: ignore[index]
            for i, j, level in align([ka, [k.stem for k in ka]], [kb, [k.stem for k in kb]])]


def test_insertions_deletions_repeats_and_renamed_arguments():
    a = ["gemm", "k<1>", "softmax", "copy", "gemm"]
    b = ["gemm", "k<2>", "relu", "softmax", "gemm", "gemm"]
    assert _rows(a, b) == [("=", "gemm", 0), ("=", "k<1>", 1), ("+", "relu", -1),
                           ("=", "softmax", 0), ("-", "copy", -1), ("+", "gemm", -1),
                           ("=", "gemm", 0)]  # the common end matches first


def test_exact_arguments_win_over_a_stem_match():
    assert _rows(["k<1>", "k<2>"], ["k<2>"]) == [("-", "k<1>", -1), ("=", "k<2>", 0)]


# ---- synthetic traces end to end ----

def _region_trace(write_trace, name, kernels, region="attn_fwd"):
    """One ``region`` instance launching ``kernels`` ((kernel name, op name, µs)) in order."""
    events = [op(region, 0, 100 * len(kernels) + 50, ext=1, cat="user_annotation")]
    gpu_t = 10_000
    for n, (kernel, opname, dur) in enumerate(kernels):
        corr = 10 + n
        events += [op(opname, 10 + 100 * n, 50, ext=corr),
                   call("cudaLaunchKernel", 20 + 100 * n, 5, corr=corr, ext=corr),
                   gpu(kernel, gpu_t, dur, corr=corr)]
        gpu_t += dur + 5
    return str(write_trace(events, name=name))


def test_synthetic_added_removed_and_reordered(write_trace):
    a = _region_trace(write_trace, "a.json", [
        ("gemm", "aten::mm", 30), ("copy_k", "aten::copy_", 7),
        ("soft", "aten::softmax", 20), ("x", "aten::x", 3)])
    b = _region_trace(write_trace, "b.json", [
        ("gemm", "aten::mm", 25), ("relu", "aten::relu", 4),
        ("x", "aten::x", 3), ("soft", "aten::softmax", 21)])
    [d] = _json("diff", a, b)
    got = [(r["op"], r["a_name"] or r["b_name"], r["launched_by"]) for r in d["rows"]]
    assert [g[0] for g in got].count("=") == 2  # gemm, and one of the swapped pair
    assert got[0] == ("=", "gemm", "aten::mm")
    assert ("-", "copy_k", "aten::copy_") in got and ("+", "relu", "aten::relu") in got
    assert d["rows"][0]["diff_us"] == -5
    t = d["totals"]
    only_a = sum(r["a_us"] for r in d["rows"] if r["op"] == "-")
    only_b = sum(r["b_us"] for r in d["rows"] if r["op"] == "+")
    assert t["only_a_us"] == only_a and t["only_b_us"] == only_b
    assert t["matched_a_us"] + t["only_a_us"] == 60 and t["matched_b_us"] + t["only_b_us"] == 53


def test_names_are_data(write_trace):
    odd = "[bold red]k[/bold red]"
    a = _region_trace(write_trace, "a.json", [(odd, "aten::mm", 5)])
    b = _region_trace(write_trace, "b.json", [("other", "aten::mm", 5)])
    result = cli_in_process("diff", a, b, "--no-cache")
    assert result.returncode == 0 and odd in result.stdout.decode()


# ---- bad inputs: one line, exit 2 ----

def _fails(*argv: str) -> str:
    result = cli_in_process(*argv, "--no-cache")
    err = result.stderr.decode()
    assert result.returncode == 2 and result.stdout == b"", err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def _nothing(*argv: str) -> str:
    """Nothing to compare is not an error: one line on stderr, ``[]``, exit 0."""
    result = cli_in_process(*argv, "--json", "--no-cache")
    err = result.stderr.decode()
    assert result.returncode == 0 and json.loads(result.stdout) == [], err
    assert err.count("\n") == 1 and "nothing to diff" in err and "Traceback" not in err
    return err


def test_region_missing_in_the_only_other_trace_is_nothing_to_diff(write_trace):
    a = _region_trace(write_trace, "has.json", [("k", "aten::mm", 5)], region="enc")
    b = _region_trace(write_trace, "lacks.json", [("k", "aten::mm", 5)], region="dec")
    err = _nothing("diff", a, b, "--region", "enc")
    assert "lacks.json" in err and "'enc'" in err


def test_a_trace_without_the_region_is_left_out_with_a_note(write_trace):
    a = _region_trace(write_trace, "has.json", [("k", "aten::mm", 5)], region="enc")
    b = _region_trace(write_trace, "lacks.json", [("k", "aten::mm", 5)], region="dec")
    c = _region_trace(write_trace, "also.json", [("k", "aten::mm", 6)], region="enc")
    result = cli_in_process("diff", a, b, c, "--region", "enc", "--json", "--no-cache")
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert [d["b"]["path"] for d in json.loads(result.stdout)] == [c]
    assert err.count("\n") == 1 and "lacks.json" in err and "left out" in err
    # the same when no --region is given and the other trace has no region at all
    bare = str(write_trace([op("aten::mm", 0, 10, ext=1),
                            call("cudaLaunchKernel", 2, 2, corr=5, ext=1),
                            gpu("gemm", 20, 5, corr=5, ext=1)], name="bare.json"))
    result = cli_in_process("diff", a, bare, c, "--no-cache")
    assert result.returncode == 0 and "bare.json" in result.stderr.decode()
    assert "also" in result.stdout.decode() and "bare" not in result.stdout.decode()
    assert "bare.json" in _nothing("diff", a, bare)


def test_a_region_no_trace_has_is_bad_input(write_trace):
    a = _region_trace(write_trace, "has.json", [("k", "aten::mm", 5)], region="enc")
    b = _region_trace(write_trace, "lacks.json", [("k", "aten::mm", 5)], region="dec")
    assert "'typo'" in _fails("diff", a, b, "--region", "typo")
    # the base without it while another has it: nothing to compare with, not an error
    assert "the base, " in _nothing("diff", b, a, "--region", "enc")


def test_bad_instance_one_path_and_missing_file(tmp_path):
    assert "no instance 9" in _fails("diff", NAIVE, INPLACE, "--instance", "9")
    assert "two traces" in _fails("diff", NAIVE)
    assert "nope.json" in _fails("diff", NAIVE, str(tmp_path / "nope.json"))


# ---- real traces ----

@pytest.mark.real_traces
@needs_real_traces
def test_real_traces_by_profiler_step():
    a = str(REAL_TRACES / "single_gpu" / "kineto_resnet50_num_workers_0__worker0"
            ".1623143089861.pt.trace.json.gz")
    b = str(REAL_TRACES / "non_nvidia" / "tracelens_mi300__resnet_act_checkpoint.json.gz")
    [d] = _json("diff", a, b, "--region", "ProfilerStep*")
    for side, path, names in (("a", a, "a_name"), ("b", b, "b_name")):
        listing = _json("kernels", path, "--region", "ProfilerStep*")
        median = statistics.median_low(i["device_time_us"] for i in listing)
        [inst] = [i for i in listing if i["instance"] == d[side]["instance"]]
        assert inst["device_time_us"] == median
        assert [r[names] for r in d["rows"] if r[names] is not None] == \
            [k["name"] for k in inst["kernels"]]
        total = d["totals"][f"matched_{side}_us"] + d["totals"][f"only_{side}_us"]
        assert total == pytest.approx(sum(k["dur_us"] for k in inst["kernels"]), abs=1e-3)
    assert d["totals"]["matched"] > 0 and d["totals"]["only_a"] > 0 and d["totals"]["only_b"] > 0


def test_launch_text_keeps_the_innermost_ops():
    from tui.commands.diff import launch_text

    chain = ("aten::scaled_dot_product_attention", "aten::to", "aten::_to_copy", "aten::copy_",
             "cudaLaunchKernel")
    assert launch_text(chain, 200) == ("aten::scaled_dot_product_attention › aten::to › "
                                       "aten::_to_copy › aten::copy_")
    short = launch_text(chain, 30)
    assert short.startswith("… › ") and short.endswith("aten::copy_") and len(short) <= 30
    assert launch_text(("cudaLaunchKernel",), 30) == launch_text((), 30) == "-"


def test_default_region_falls_back_to_each_traces_own_choice(write_trace):
    a = _region_trace(write_trace, "annotated.json", [("softmax_k", "aten::softmax", 9)])
    b = str(write_trace([
        op("aten::scaled_dot_product_attention", 300, 60, ext=2),
        call("cudaLaunchKernel", 310, 5, corr=2, ext=2),
        gpu("flash_fwd_kernel", 400, 10, corr=2),
    ], name="server.json"))
    [d] = _json("diff", a, b)
    assert (d["a"]["region"], d["b"]["region"]) == ("attn_fwd",
                                                     "aten::scaled_dot_product_attention")
    assert [(r["op"], r["a_name"] or r["b_name"]) for r in d["rows"]] == [
        ("-", "softmax_k"), ("+", "flash_fwd_kernel")]
    assert "'attn_fwd'" in _nothing("diff", a, b, "--region", "attn_fwd")


def test_traces_without_any_region_give_an_empty_diff_and_exit_0(write_trace):
    # as kernels: no --region and no record_function region at all is nothing to list
    events = [op("aten::mm", 0, 10, ext=1), call("cudaLaunchKernel", 2, 2, corr=5, ext=1),
              gpu("gemm", 20, 5, corr=5, ext=1)]
    a = write_trace(events, name="a.json")
    b = write_trace(events, name="b.json")
    result = cli_in_process("diff", str(a), str(b), "--json", "--no-cache")
    assert result.returncode == 0 and json.loads(result.stdout) == []
    assert "nothing to diff" in result.stderr.decode()
