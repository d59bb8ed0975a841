"""The Diff view (7): pure layout on synthetic sequences, Pilot tests and one SVG
snapshot on the GPU sample traces (naive vs in-place is the blog's story: the
same kernels minus one ``Memcpy DtoD`` under ``aten::masked_fill``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from profiling.analysis.instance_kernels import KernelEntry
from profiling.analysis.kernel_diff import KernelDiff, Side, diff_kernels
from tui.app import AttnTuiApp
from tui.diff_data import layout, strip
from tui.widgets.diff_lanes import DiffLanes
from tui.widgets.diff_view import DiffView

from .test_tui_pilot import wait_loaded, wait_until

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
NAMES = ("naive", "inplace", "sdpa_flash")
needs_samples = pytest.mark.skipif(
    not all((SAMPLES / f"{n}.json.gz").exists() for n in NAMES), reason="sample traces absent"
)


def _k(row: int, name: str, start: float, dur: float) -> KernelEntry:
    kind = "memcpy" if name.startswith("Memcpy") else "kernel"
    return KernelEntry(row=row, name=name, kind=kind, start_offset_us=start, dur_us=dur,
                       stream=7, launched_by="aten::op")


def _layout(a: list[KernelEntry], b: list[KernelEntry]):
    side = Side("x", "x", "attn_fwd", 0, 1, 0.0)
    return layout(KernelDiff(side, side, tuple(diff_kernels(a, b))), a, b, 0, 1)


def test_matched_kernels_snap_under_their_partners():
    # A: k1, copy, k2; B: k1, k2 (B's k2 ran earlier: no copy before it)
    a = [_k(10, "k1", 0, 10), _k(11, "Memcpy DtoD (Device -> Device)", 10, 5), _k(12, "k2", 20, 10)]
    b = [_k(50, "k1", 0, 12), _k(51, "k2", 13, 10), _k(52, "extra", 25, 4)]
    d = _layout(a, b)
    assert [r.op for r in d.rows] == ["=", "-", "=", "+"]
    assert d.a_rows == (10, 11, 12, None) and d.b_rows == (50, None, 51, 52)
    b_k2 = [p for p in d.b_lane if p.index == 2][0]
    assert b_k2.start_us == 20  # snapped under A's k2, not at its own 13
    extra = [p for p in d.b_lane if p.glyph == "+"][0]
    assert extra.start_us == 20 + (25 - 13)  # keeps its distance from the last match
    assert [p.glyph for p in d.a_lane] == ["█", "-", "▓"]
    assert d.target(1) == (0, 11) and d.target(3) == (1, 52) and d.target(9) is None


def test_strip_keeps_a_short_added_kernel_visible():
    a = [_k(0, "long", 0, 1000), _k(1, "long2", 1000, 1000)]
    b = [_k(0, "long", 0, 1000), _k(1, "tiny", 1000, 0.01), _k(2, "long2", 1001, 1000)]
    d = _layout(a, b)
    cells = strip(d.b_lane, d.span_us, 20)
    glyphs = "".join(g for g, _ in cells)
    assert glyphs.count("+") == 1 and "-" not in glyphs
    assert len(cells) == 20 and strip(d.b_lane, 0.0, 5) == [("·", None)] * 5


def _reference_strip(lane, span_us, width):
    """Cell by cell: the marked, then the longer, then the earlier event wins."""
    cells = [("·", None)] * width
    best = [(-1, 0.0)] * width
    for p in lane:
        c0 = min(int(p.start_us / span_us * width), width - 1)
        c1 = min(max(int((p.start_us + p.dur_us) / span_us * width + 0.5), c0 + 1), width)
        rank = (1 if p.glyph in "+-" else 0, p.dur_us)
        for c in range(c0, c1):
            if rank > best[c]:
                best[c], cells[c] = rank, (p.glyph, p.index)
    return cells


def test_strip_matches_a_cell_by_cell_reference():
    import random

    from tui.diff_data import Placed

    rng = random.Random(3)
    for _ in range(50):
        lane = [Placed(i, rng.choice([0.0, rng.uniform(0, 100)]), rng.choice([1.0, 5.0, 0.0]),
                       rng.choice("█▓+-")) for i in range(rng.randrange(1, 40))]
        span = max(p.start_us + p.dur_us for p in lane) or 1.0
        for width in (1, 9, 80):
            assert strip(lane, span, width) == _reference_strip(lane, span, width)


def _lines(view: DiffView) -> list[str]:
    return str(view.query_one(DiffLanes).lanes_text(80)).splitlines()


async def open_diff(pilot, app: AttnTuiApp) -> DiffView:
    """Wait for the files, press 7 and wait for the diff to be shown."""
    await wait_loaded(pilot)
    await pilot.press("7")
    view = app.query_one(DiffView)
    await wait_until(pilot, lambda: view.state == "ready", "the diff")
    return view


@needs_samples
async def test_diff_naive_inplace_one_deleted_memcpy_and_jump():
    paths = [str(SAMPLES / f"{n}.json.gz") for n in ("naive", "inplace")]
    app = AttnTuiApp(paths, theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        view = await open_diff(pilot, app)
        assert app.pane is None and view.table.has_focus
        ops = [r.op for r in view.data.rows]
        assert ops.count("-") == 1 and ops.count("+") == 0 and set(ops) == {"=", "-"}
        gone = view.data.rows[ops.index("-")]
        assert gone.a_name.startswith("Memcpy DtoD")
        assert "aten::masked_fill" in gone.a_launch_chain
        cells = [str(c) for c in view.table.get_row_at(ops.index("-"))]
        assert cells[0] == "-" and "Memcpy DtoD" in cells[1] and cells[3] == ""
        a_line, b_line, axis = _lines(view)
        assert a_line.startswith("A naive") and "-" in a_line[13:]
        assert b_line.startswith("B inplace") and "+" not in b_line and "-" not in b_line[13:]
        assert axis.strip().startswith("0")
        # Enter on the '-' row: naive's tab, the Memcpy selected on its timeline
        for _ in range(ops.index("-")):
            await pilot.press("down")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.pane is app.panes[0], "naive's tab")
        await wait_until(pilot, lambda: app.pane.view == "timeline", "the timeline")
        pane = app.pane
        assert app.query_one("#files", TabbedContent).active == "file-0"
        name = pane.session.trace.name(pane.model.selected)
        assert name.startswith("Memcpy DtoD")
        assert pane.model.selected == view.data.a_rows[ops.index("-")]
        # with two files, [ / ] on the Diff tab switch files as everywhere
        await pilot.press("7")
        await wait_until(pilot, lambda: app.pane is None, "the Diff tab")
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: app.pane is not None, "a file tab")


@needs_samples
async def test_diff_runs_again_when_a_file_reloads():
    from tui.session import load_session

    paths = [str(SAMPLES / f"{n}.json.gz") for n in ("naive", "inplace", "sdpa_flash")]
    app = AttnTuiApp(paths[:2], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        view = await open_diff(pilot, app)
        assert view.data.diff.b.label == "inplace"
        app.panes[1].session = load_session(paths[2])  # as a reload with new content does
        view.update_from(app.panes)
        await wait_until(pilot, lambda: view.data is not None and view.state == "ready", "rerun")
        assert view.data.diff.b.label == "sdpa_flash"


@needs_samples
async def test_diff_r_steps_to_the_next_region():
    paths = [str(SAMPLES / f"{n}.json.gz") for n in ("naive", "inplace")]
    app = AttnTuiApp(paths, theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        view = await open_diff(pilot, app)
        assert view.data.diff.a.region == "attn_fwd"
        assert view.region_names == ["attn_fwd", "ProfilerStep*"]
        assert "r region: 1 of 2" in str(view.query_one("#diff-status").render())
        attn_rows = len(view.data.rows)
        await pilot.press("r")
        await wait_until(pilot, lambda: view.data is not None and view.state == "ready", "step")
        assert view.data.diff.a.region.startswith("ProfilerStep")
        assert view.data.diff.b.region.startswith("ProfilerStep")
        assert len(view.data.rows) >= attn_rows
        assert [r.op for r in view.data.rows].count("-") >= 1  # the copy is in the step too
        await pilot.press("r")  # back to attn_fwd, from the cache
        await pilot.pause()
        assert view.data.diff.a.region == "attn_fwd" and view.state == "ready"


@needs_samples
async def test_diff_three_files_brackets_choose_the_other_and_plus_jumps_to_b():
    paths = [str(SAMPLES / f"{n}.json.gz") for n in NAMES]
    app = AttnTuiApp(paths, theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        view = await open_diff(pilot, app)
        assert view.other == 1 and view.data.diff.b.label == "inplace"
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: view.data is not None and view.other == 2, "2nd diff")
        assert view.data.diff.b.label == "sdpa_flash"
        assert "2 of 2" in str(view.query_one("#diff-status").render())
        ops = [r.op for r in view.data.rows]
        assert ops.count("+") == 1 and "=" not in ops  # the fused kernel against 7 unfused
        plus = ops.index("+")
        for _ in range(plus):
            await pilot.press("down")
        await pilot.press("z")
        await wait_until(pilot, lambda: app.pane is app.panes[2], "sdpa_flash's tab")
        pane = app.pane
        assert "flash" in pane.session.trace.name(pane.model.selected)
        await pilot.press("7")  # back: the same diff, at once
        await wait_until(pilot, lambda: app.pane is None, "the Diff tab")
        assert view.other == 2 and view.state == "ready"


async def test_diff_needs_two_traces(tmp_path):
    from tests.fixtures.synthetic import naive_like_doc, write_doc

    path = write_doc(tmp_path / "naive.json", naive_like_doc(2))
    app = AttnTuiApp([str(path)], theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("7")
        await pilot.pause()
        assert not app.query(DiffView)
        assert any("two or more" in str(n.message) for n in app._notifications)


@needs_samples
def test_snapshot_diff_80x24(snap_compare, monkeypatch):
    monkeypatch.chdir(SAMPLES)  # relative paths: the tab titles do not depend on the checkout
    app = AttnTuiApp(["naive.json.gz", "inplace.json.gz"], theme="attn-dark")

    async def ready(pilot) -> None:
        await open_diff(pilot, app)
        await pilot.press("down", "down", "down")

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


async def test_other_template_arguments_show_both_names(tmp_path):
    from tests.fixtures.synthetic import naive_like_doc, write_doc

    a = write_doc(tmp_path / "a.json", naive_like_doc(2))
    doc = naive_like_doc(2)
    renamed = ""
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and "triu_tril_kernel<bool, int, true, 4" in e["name"]:
            e["name"] = renamed = e["name"].replace("<bool, int, true, 4", "<bool, int, true, 8")
    assert renamed
    b = write_doc(tmp_path / "b.json", doc)
    app = AttnTuiApp([str(a), str(b)], theme="attn-dark")
    async with app.run_test(size=(200, 36)) as pilot:
        view = await open_diff(pilot, app)
        ops = [str(view.table.get_row_at(i)[0]) for i in range(view.table.row_count)]
        assert ops.count("≈") == 1 and "+" not in ops and "-" not in ops
        for _ in range(ops.index("≈")):
            await pilot.press("down")
        await pilot.pause()
        line = str(view.query_one("#diff-row").render())
        assert " ≈ B " in line and "true, 8" in line


async def test_kernel_names_are_data_in_the_diff_view(tmp_path):
    """A kernel named like markup or holding an escape shows as written, in the
    table and in the row's line (names come from the trace: never markup)."""
    from tests.fixtures.synthetic import naive_like_doc, write_doc

    odd = "[bold red]k\x1b[2J"
    a = write_doc(tmp_path / "a.json", naive_like_doc(2))
    doc = naive_like_doc(2)
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"].startswith("ampere_bf16"):
            e["name"] = odd
    b = write_doc(tmp_path / "b.json", doc)
    app = AttnTuiApp([str(a), str(b)], theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        view = await open_diff(pilot, app)
        ops = [r.op for r in view.data.rows]
        plus = ops.index("+")
        assert view.data.rows[plus].b_name == odd
        cell = view.table.get_row_at(plus)[1]
        assert cell.plain == "[bold red]k\\x1b[2J" and not cell.spans
        for _ in range(plus):
            await pilot.press("down")
        await pilot.pause()
        line = view.query_one("#diff-row").render()
        assert "[bold red]k\\x1b[2J" in str(line)


@needs_samples
async def test_diff_b_steps_b_instance_and_back_to_the_median():
    paths = [str(SAMPLES / f"{n}.json.gz") for n in ("naive", "inplace")]
    app = AttnTuiApp(paths, theme="attn-dark")
    async with app.run_test(size=(120, 36)) as pilot:
        view = await open_diff(pilot, app)

        def status() -> str:
            return str(view.query_one("#diff-status").render())

        def cells() -> list[list[str]]:
            t = view.table
            return [[str(c) for c in t.get_row_at(i)] for i in range(t.row_count)]

        head, rows, median = status(), cells(), view.data.diff.b.instance
        assert view.data.b_median == median and view.data.diff.b.instances > 1
        a_instance = view.data.diff.a.instance
        await pilot.press("b")
        await wait_until(pilot, lambda: view.data is not None and view.state == "ready", "B+1")
        b = view.data.diff.b
        assert b.instance == (median + 1) % b.instances and view.picked == (None, b.instance)
        assert view.data.diff.a.instance == a_instance  # A stays where it was
        assert status() != head and f"#{b.instance} of {b.instances}  vs" not in status()
        assert f"B inplace: attn_fwd #{b.instance} of {b.instances}" in status()
        assert f"#{a_instance} of 3 (median)" in status()  # A sits at its median
        assert cells() != rows  # B's durations are another instance's
        await pilot.press("B")  # back to the median: the first diff, from the cache
        await pilot.pause()
        assert view.picked == (None, None) and view.data.diff.b.instance == median
        assert status() == head and cells() == rows


@needs_samples
async def test_diff_table_holds_a_window_that_follows_the_cursor(monkeypatch):
    from tui import regions_data

    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 4)
    paths = [str(SAMPLES / f"{n}.json.gz") for n in ("naive", "inplace")]
    app = AttnTuiApp(paths, theme="attn-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff(pilot, app)
        n = len(view.data.rows)
        assert n > 5 and view.table.row_count == 4
        for _ in range(5):
            await pilot.press("down")
        await pilot.pause()
        table = view.table
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "5"
        assert view.query_one(DiffLanes).current == 5
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.pane is not None, "a file's tab")
        file, row = view.data.target(5)
        assert app.pane is app.panes[file] and app.pane.model.selected == row
