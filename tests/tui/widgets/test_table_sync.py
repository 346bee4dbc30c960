"""widgets/table_sync.py: a DataTable updated in place by row key; the cursor stays on its row, a row that
grows is redrawn at its new height, and the columns' widths come from the table's width (Pilot)."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from memento_tui.widgets.table_sync import (
    SCROLLBAR,
    LiveTable,
    fit_columns,
    selected_key,
    sync_rows,
)
from tests.tui.pilot import screen_text


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        table = LiveTable(cursor_type="row")
        table.add_column("key", key="key")
        table.add_column("what", key="what")
        yield table


def rows(*items: str) -> list[tuple[str, tuple[Text, ...]]]:
    """Rows keyed by their first word: "b second" is row b, showing "b" and "second"."""
    return [(item.split()[0], (Text(item.split()[0]), Text(item.split(" ", 1)[1]))) for item in items]


def order(table) -> list[str]:
    return [row.key.value for row in table.ordered_rows]


async def test_changed_cells_are_updated_and_the_cursor_stays_on_its_row():
    app = OneTable()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        assert selected_key(table) is None  # an empty table has no row under the cursor
        shown = sync_rows(table, rows("a first", "b second", "c third"), {})
        table.move_cursor(row=2, animate=False)
        shown = sync_rows(table, rows("a first again", "b second", "c third"), shown)
        await pilot.pause()
        assert order(table) == ["a", "b", "c"] and selected_key(table) == "c"
        assert "first again" in screen_text(app)

        # Newer rows on top (the timeline, newest first): the cursor follows its row, not its index.
        shown = sync_rows(table, rows("d fourth", "a first again", "b second", "c third"), shown)
        await pilot.pause()
        assert order(table) == ["d", "a", "b", "c"] and selected_key(table) == "c"

        # A row gone from the middle and one added at the end: the others stay (not rebuilt), the cursor too.
        kept = table.rows["b"]
        shown = sync_rows(table, rows("d fourth", "b second", "c third", "e fifth"), shown)
        await pilot.pause()
        assert order(table) == ["d", "b", "c", "e"] and selected_key(table) == "c"
        assert table.rows["b"] is kept
        assert shown == dict(rows("d fourth", "b second", "c third", "e fifth"))
        text = screen_text(app)
        assert "first again" not in text and "fifth" in text


async def test_a_row_whose_cell_grows_a_line_is_shown_whole():
    app = OneTable()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        shown = sync_rows(table, rows("a one line", "b below"), {})
        await pilot.pause()
        grown = [("a", (Text("a"), Text("first line\nsecond line"))), rows("b below")[0]]
        sync_rows(table, grown, shown)
        await pilot.pause()
        lines = screen_text(app).splitlines()
        first = next(i for i, line in enumerate(lines) if "first line" in line)
        assert "second line" in lines[first + 1] and "below" in lines[first + 2]


async def test_column_widths_come_from_the_tables_width_not_from_the_data():
    app = OneTable()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LiveTable)
        sync_rows(table, rows("a " + "long " * 30), {})
        rest = fit_columns(table, {"key": 10}, flex="what", total=60)
        await pilot.pause()
        pad = 2 * table.cell_padding
        assert rest == 60 - (10 + 2 * pad) - SCROLLBAR
        widths = {key.value: (column.width, column.auto_width) for key, column in table.columns.items()}
        assert widths == {"key": (10, False), "what": (rest, False)}
        assert fit_columns(table, {"key": 50}, flex="what", minimum=12, total=60) == 12  # never narrower
