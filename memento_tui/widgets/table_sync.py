"""Update a DataTable in place by row key (dolphie's way): change cells, not the whole table."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.widgets import DataTable

Row = tuple[Text, ...]


class LiveTable(DataTable):
    """A DataTable whose column widths follow rows added or changed after its first paint.

    Textual 8.2.8 measures new rows on idle but keeps lines it rendered at the
    old widths in its caches, so a column stays as narrow as its label until
    something else clears them. Clear them when a measurement ran.
    """

    async def _on_idle(self, event: events.Idle) -> None:
        measured = bool(self._new_rows) or bool(self._updated_cells)
        await super()._on_idle(event)
        if measured:
            self._clear_caches()
            self.refresh()


SCROLLBAR = 2  # columns kept free for the vertical scrollbar, shown or not (no width jump)


def fit_columns(table: DataTable, widths: dict[str, int], flex: str, minimum: int = 12,
                total: int = 0) -> int:
    """Fix every column's width from the table's own width, never from the data; returns ``flex``'s.

    Widths measured from the rows (DataTable's auto width) change as data
    arrives and differ from run to run; fixed widths keep the layout stable.
    """
    total = total or table.size.width or 80
    pad = 2 * table.cell_padding
    used = sum(widths.values()) + pad * len(table.columns)
    rest = max(minimum, total - used - SCROLLBAR)
    changed = False
    for key, column in table.columns.items():
        want = widths.get(key.value, rest if key.value == flex else None)
        if want is None:
            continue
        if column.width != want or column.auto_width:
            column.width, column.auto_width = want, False
            changed = True
    if changed:
        table._require_update_dimensions = True  # noqa: SLF001 (Textual recomputes the virtual size)
        table._clear_caches()  # noqa: SLF001
        table.refresh()
    return rest


def row_height(cells: Row) -> int:
    return max((cell.plain.count("\n") + 1 for cell in cells), default=1)


def sync_rows(table: DataTable, rows: Sequence[tuple[str, Row]], previous: dict[str, Row]) -> dict[str, Row]:
    """Make ``table`` show ``rows`` (key, cells) in order; returns the rows now shown.

    Same keys in the same order: only changed cells are updated. Otherwise rows
    are removed/added, and the table is rebuilt only when the order changed
    (new rows at the top of a newest-first list, a task moved in the plan).
    The cursor stays on the same key when it still exists.
    """
    new_keys = [key for key, _ in rows]
    old_keys = list(previous)
    columns = list(table.columns)
    selected = _selected_key(table)  # before any row is removed: removing it moves the cursor
    # A row whose height changes is added again (update_cell keeps the old height).
    regrown = {key for key, cells in rows if key in previous and row_height(cells) != row_height(previous[key])}
    if regrown:
        previous = {k: v for k, v in previous.items() if k not in regrown}
        for key in regrown:
            table.remove_row(key)
        old_keys = list(previous)
    if new_keys == old_keys:
        for key, cells in rows:
            before = previous[key]
            if before == cells:
                continue
            for col, (old, new) in enumerate(zip(before, cells, strict=False)):
                if old != new:
                    table.update_cell(key, columns[col], new, update_width=True)
        return dict(rows)
    keep = set(new_keys)
    common_order = [k for k in old_keys if k in keep]
    appended_only = new_keys[: len(common_order)] == common_order
    if appended_only and len(common_order) > len(old_keys) // 2:
        for key in old_keys:
            if key not in keep:
                table.remove_row(key)
        for key, cells in rows:
            if key in previous:
                before = previous[key]
                for col, (old, new) in enumerate(zip(before, cells, strict=False)):
                    if old != new:
                        table.update_cell(key, columns[col], new, update_width=True)
        for key, cells in rows[len(common_order):]:
            table.add_row(*cells, key=key, height=row_height(cells))
    else:
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key, height=row_height(cells))
    if selected is not None and selected in keep:
        table.move_cursor(row=table.get_row_index(selected), animate=False)
    return dict(rows)


def _selected_key(table: DataTable) -> str | None:
    if not table.row_count:
        return None
    try:
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
    except Exception:
        return None
    return key.value if key is not None else None


def selected_key(table: DataTable) -> str | None:
    """The key of the row under the cursor, or None."""
    return _selected_key(table)
