"""The Ops view at many ops (issue 13): the widest cell of each column found from a
few rows equals the widest over all of them, and the table holds a window of the
shown rows that follows the cursor, with ⏎ and the name line reading the row
under it."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import SAMPLE_TRACES
from tui.app import AttnTuiApp
from tui.ops_table import COLUMNS, cell, widest_cell
from tui.widgets.ops_view import OpsView

from .test_tui_pilot import wait_loaded

NAIVE = SAMPLE_TRACES / "naive.json.gz"

EDGES = [0.0, -0.0, 999.9994, 999.9996, 1e3, -999.9996, 999_999.9996, 1e6, 1e9, 123.4567,
         math.inf, -math.inf, math.nan]
"""Values at the edges of torch's unit bands and of rounding into the next one."""
values = st.one_of(st.sampled_from(EDGES), st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(min_value=-2e6, max_value=2e6))


@given(st.lists(values, min_size=1, max_size=40))
@example([0.5, 999_999.0, 2e6])  # the widest is in the middle band: neither extreme
@example([-5.0, 7.0, 1500.0])  # a sign is a cell
@example([0.0, -0.0])  # so is the sign of a negative zero
@example([1e6, 1.8e305])  # a time too big to write in ns is "-"
def test_widest_cell_is_the_widest_of_every_row(xs):
    for column in COLUMNS:
        if column.kind == "str":
            continue
        rows = [{column.key: int(x) if column.kind == "int" and math.isfinite(x) else x}
                for x in xs]
        assert widest_cell(rows, column) == max(len(cell(r, column)) for r in rows), column.key


async def test_the_ops_table_holds_a_window_of_its_rows(monkeypatch):
    from tui import regions_data
    from tui.screens.occurrences import OccurrencesScreen

    monkeypatch.setattr(regions_data, "INSTANCE_WINDOW", 4)
    app = AttnTuiApp([str(NAIVE)], theme="attn-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        await pilot.pause()
        view = app.query_one(OpsView)
        table = view.table
        assert len(view.shown) > 6 and table.row_count == 4
        table.focus()
        for _ in range(5):
            await pilot.press("down")
        await pilot.pause()
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "5"
        name = str(app.query_one("#ops-name").render())
        assert view.shown[5]["key"] in name
        await pilot.press("enter")
        for _ in range(40):
            if isinstance(app.screen, OccurrencesScreen):
                break
            await pilot.pause(0.05)
        assert app.screen.found.name == view.shown[5]["key"]
        await pilot.press("escape")
        await pilot.pause()
        table.focus()
        await pilot.press("ctrl+end")  # the list's last row, not the window's
        await pilot.pause()
        last = str(len(view.shown) - 1)
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == last
        assert table.row_count == 4 and view.shown[-1]["key"] in str(
            app.query_one("#ops-name").render())
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "0"
        view.sort_by("count")  # a sort: the window starts again at the first row
        await pilot.pause()
        assert table.row_count == 4
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == "0"
