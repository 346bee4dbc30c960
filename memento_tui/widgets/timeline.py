"""The tick timeline: newest first, one row per status entry; open a tick's log or diff."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from memento_core.status_log import TickEntry

from ..app_state import AppState
from ..literal import literal
from ..snapshot import Snapshot
from .table_sync import LiveTable, Row, selected_key, sync_rows

STATUS_STYLE = {
    "SUCCESS": ("✔ SUCCESS", "green"),
    "FAILED": ("✖ FAILED", "yellow"),
    "BLOCKED": ("✖ BLOCKED", "bold red"),
}
RUNNING_KEY = "running"
MAX_ROWS = 1000  # newest ticks shown; older ones stay in the files (and `memento status`)


def entry_key(entry: TickEntry, seen: dict[str, int]) -> str:
    base = f"{entry.timestamp}|{entry.tick}|{int(entry.continued)}|{entry.task_id or ''}|{entry.status}"
    n = seen.get(base, 0)
    seen[base] = n + 1
    return f"{base}|{n}" if n else base


def status_cell(entry: TickEntry) -> Text:
    label, style = STATUS_STYLE.get(entry.status, None) or (entry.status, "magenta")
    if entry.status == "FAILED" and entry.retry:
        label += f" {entry.retry[0]}/{entry.retry[1]}"
    return Text(label, style=style)


def short_time(stamp: str) -> str:
    # "2026-11-29T14:45:00Z" → "11-29 14:45"
    if len(stamp) >= 16 and stamp[10] == "T":
        return f"{stamp[5:10]} {stamp[11:16]}"
    return stamp


def summary_cell(entry: TickEntry) -> Text:
    if entry.is_event:
        text = entry.field("Event") or entry.field("Status") or ""
    elif entry.status == "SUCCESS":
        text = entry.field("Git Commit") or "passed"
    else:
        text = entry.error or entry.field("Reason") or ""
    return literal(text, "dim" if entry.status == "SUCCESS" else "", one_line=True)


class TimelineTable(LiveTable):
    def __init__(self, **kwargs):
        super().__init__(cursor_type="row", **kwargs)
        self._shown: dict[str, Row] = {}
        self.entries: dict[str, TickEntry] = {}

    def on_mount(self) -> None:
        self.add_column("When (UTC)", key="when")
        self.add_column("Tick", key="tick")
        self.add_column("Task", key="task")
        self.add_column("Status", key="status")
        self.add_column("What happened", key="what", width=60)

    def show_rows(self, rows: list[tuple[str, Row]]) -> None:
        self._shown = sync_rows(self, rows, self._shown)


class TimelinePane(Vertical):
    """Ticks newest first; a running tick is the first row while it runs (it watches ``app.ticking``)."""

    app: AppState

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.snapshot: Snapshot | None = None
        self.tick_running = False

    def compose(self) -> ComposeResult:
        yield TimelineTable(id="timeline-table")

    def on_mount(self) -> None:
        self.tick_running = self.app.ticking
        self.watch(self.app, "ticking", self._ticking_changed, init=False)

    def _ticking_changed(self, ticking: bool) -> None:
        self.tick_running = ticking
        if self.snapshot is not None:
            self.show(self.snapshot)

    @property
    def table(self) -> TimelineTable:
        return self.query_one(TimelineTable)

    def show(self, snap: Snapshot) -> None:
        self.snapshot = snap
        rows: list[tuple[str, Row]] = []
        entries: dict[str, TickEntry] = {}
        if self.tick_running or snap.claims:
            what = ", ".join(snap.claims) or "starting"
            rows.append((RUNNING_KEY, (
                Text("now"), Text("…"), literal(what, one_line=True),
                Text("◐ RUNNING", style="bold yellow"), Text("l: follow the log live", style="dim"),
            )))
        seen: dict[str, int] = {}
        for entry in snap.entries[:MAX_ROWS]:
            key = entry_key(entry, seen)
            entries[key] = entry
            tick = "" if entry.tick is None else f"#{entry.tick}" + ("+" if entry.continued else "")
            rows.append((key, (
                literal(short_time(entry.timestamp), one_line=True),
                Text(tick),
                literal(entry.task_id or "", one_line=True),
                status_cell(entry),
                summary_cell(entry),
            )))
        table = self.table
        following = table.row_count == 0 or table.cursor_row == 0
        table.entries = entries
        table.show_rows(rows)
        if following and table.row_count:
            # A person looking at the newest tick keeps seeing the newest one as ticks arrive.
            table.move_cursor(row=0, animate=False)
            table.scroll_home(animate=False)
        shown = min(len(snap.entries), MAX_ROWS)
        self.border_subtitle = (f"newest {shown:,} of {len(snap.entries):,}" if len(snap.entries) > shown
                                else f"{shown:,} ticks")

    def selected(self) -> tuple[str | None, TickEntry | None]:
        """(key, entry) of the row under the cursor; the running row has no entry."""
        key = selected_key(self.table)
        if key is None:
            return None, None
        return key, self.table.entries.get(key)
