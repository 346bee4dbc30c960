"""The tick timeline: newest first, one row per tick (a multi-task tick is one row), what happened in words.

Column widths are fixed from the pane's width, never from the data, so the
layout is the same from run to run; "What happened" takes the rest and wraps
onto up to three lines (a failed tick's reason, each task of a grouped tick).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from memento_core.durations import format_duration
from memento_core.status_log import TickEntry

from ..app_state import AppState
from ..literal import clean_line
from ..snapshot import Snapshot
from .table_sync import LiveTable, Row, fit_columns, selected_key, sync_rows

STATUS_STYLE = {
    "SUCCESS": ("✔ SUCCESS", "green"),
    "FAILED": ("✖ FAILED", "yellow"),
    "BLOCKED": ("✖ BLOCKED", "bold red"),
}
EVENT_LABEL = {
    "PIPELINE BLOCKED": ("⚠ BLOCKED", "bold red"),
    "ALL TASKS COMPLETE": ("✔ COMPLETE", "bold green"),
    "PLAN INVALID": ("✖ INVALID", "bold magenta"),
    "CIRCUIT BREAKER": ("⚠ BREAKER", "bold red"),
    "DIRTY TREE": ("⚠ DIRTY", "bold red"),
    "STALE": ("⚠ STALE", "yellow"),
    "INTERRUPTED": ("■ STOPPED", "yellow"),
}
RUNNING_KEY = "running"
MAX_ROWS = 1000  # newest ticks shown; older ones stay in the files (and `memento status`)
MAX_LINES = 3  # lines of "What happened" per row
# Fixed widths (cells, without padding); "what" takes the rest.
WIDTHS = {"tick": 9, "task": 7, "status": 12}
_SAVED_IN = re.compile(r"saved in (logs/rollback/[^\s;)]+)")


@dataclass(frozen=True)
class TickRow:
    """One row: the entries of one tick (or one event), newest first, and the one a key opens."""

    entries: tuple[TickEntry, ...]

    @property
    def main(self) -> TickEntry:
        """A failed entry when there is one (its log, its patch), else the newest."""
        return next((e for e in self.entries if e.status != "SUCCESS"), self.entries[0])


def group_ticks(entries: tuple[TickEntry, ...] | list[TickEntry]) -> list[TickRow]:
    """Adjacent task entries of the same tick number become one row; every event is a row of its own."""
    rows: list[list[TickEntry]] = []
    for entry in entries:
        last = rows[-1][-1] if rows else None
        same = (last is not None and not entry.is_event and not last.is_event and entry.tick is not None
                and entry.tick == last.tick)
        if same:
            rows[-1].append(entry)
        else:
            rows.append([entry])
    return [TickRow(tuple(r)) for r in rows]


def entry_key(entry: TickEntry, seen: dict[str, int]) -> str:
    base = f"{entry.timestamp}|{entry.tick}|{int(entry.continued)}|{entry.task_id or ''}|{entry.status}"
    n = seen.get(base, 0)
    seen[base] = n + 1
    return f"{base}|{n}" if n else base


def status_cell(row: TickRow) -> Text:
    main = row.main
    if main.is_event:
        label, style = EVENT_LABEL.get(main.status, ("• event", "magenta"))
        return Text(label, style=style)
    label, style = STATUS_STYLE.get(main.status, None) or (main.status, "magenta")
    if main.status == "FAILED" and main.retry:
        label += f" {main.retry[0]}/{main.retry[1]}"
    elif len(row.entries) > 1 and main.status == "SUCCESS":
        label = f"✔ {len(row.entries)} passed"
    return Text(label, style=style)


def short_time(stamp: str) -> str:
    # "2026-11-29T14:45:00Z" → "14:45"
    if len(stamp) >= 16 and stamp[10] == "T":
        return stamp[11:16]
    return stamp


def commit_sha(entry: TickEntry) -> str:
    sha = entry.commit_sha
    return sha[:7] if sha else ""


def what_happened(entry: TickEntry) -> str:
    """One entry in words: a commit without its subject, or the reason and the error."""
    if entry.is_event:
        event = entry.field("Event") or entry.field("Status") or ""
        detail = entry.field("Tasks") or entry.field("Paths") or entry.field("Errors") or ""
        return f"{event}: {detail}" if detail else event
    if entry.status == "SUCCESS":
        parts = [commit_sha(entry) or "passed"]
        if entry.duration_seconds is not None:
            parts.append(format_duration(entry.duration_seconds))
        files = entry.field("Files Modified")
        if files:
            n = len([f for f in files.split(",") if f.strip()])
            parts.append(f"{n} file{'s' if n != 1 else ''}")
        return " · ".join(parts)
    reason = (entry.field("Reason") or "").strip()
    error = _error(entry)
    if reason and error and error not in reason:
        return f"{reason}: {error}"
    return reason or error or entry.status.lower()


def _error(entry: TickEntry) -> str:
    error = (entry.error or "").strip().strip("`")
    return re.sub(r"`?\s*\(exit code \d+\)\s*$", "", error).strip("` ")


def failure_words(entry: TickEntry) -> str:
    """The shortest useful words for a failure: the error itself, else the reason."""
    return _error(entry) or (entry.field("Reason") or "").strip() or entry.status.lower()


def what_cell(row: TickRow, width: int) -> Text:
    """The row's "What happened", wrapped to ``width`` on at most MAX_LINES lines."""
    if len(row.entries) == 1:
        texts = [what_happened(row.entries[0])]
    else:
        texts = [f"{e.task_id or '?'} {'✔' if e.status == 'SUCCESS' else '✖'} {what_happened(e)}"
                 for e in reversed(row.entries)]  # the tick's order: first task first
    lines: list[str] = []
    for text in texts:
        lines += textwrap.wrap(clean_line(text), max(width, 8)) or [""]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES]
        lines[-1] = lines[-1][: max(width - 1, 1)] + "…"
    style = "dim" if row.main.status == "SUCCESS" else ""
    # Text, never markup: the words come from files; a line wider than the column ends in "…"
    return Text("\n".join(lines), style=style, no_wrap=True, overflow="ellipsis")


def rollback_patch(root: Path, entry: TickEntry | None) -> Path | None:
    """The rollback's saved patch of a failed tick (logs/rollback/<stamp>/changes.patch), when there is one."""
    if entry is None:
        return None
    for name in ("Files Modified", "Rollback"):
        m = _SAVED_IN.search(entry.field(name) or "")
        if m:
            folder = root / m.group(1)
            if not folder.is_dir():
                return None
            # The patch of the tracked files; when it is empty (only new files, copied under
            # files/), the folder's README says what was saved.
            found = [p for p in sorted(folder.glob("*.patch")) if p.stat().st_size]
            found += [p for p in (folder / "README.txt",) if p.exists()]
            return found[0] if found else None
    return None


class TimelineTable(LiveTable):
    def __init__(self, **kwargs):
        super().__init__(cursor_type="row", **kwargs)
        self._shown: dict[str, Row] = {}
        self.entries: dict[str, TickEntry] = {}

    def on_mount(self) -> None:
        self.add_column("Tick", key="tick", width=WIDTHS["tick"])
        self.add_column("Task", key="task", width=WIDTHS["task"])
        self.add_column("Status", key="status", width=WIDTHS["status"])
        self.add_column("What happened", key="what", width=40)

    def what_width(self, total: int) -> int:
        return fit_columns(self, WIDTHS, "what", total=total)

    def show_rows(self, rows: list[tuple[str, Row]]) -> None:
        self._shown = sync_rows(self, rows, self._shown)


class TimelinePane(Vertical):
    """Ticks newest first; a running tick is the first row while it runs (it watches ``app.ticking``)."""

    app: AppState

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.snapshot: Snapshot | None = None
        self.tick_running = False
        self._width = 0

    def compose(self) -> ComposeResult:
        yield TimelineTable(id="timeline-table")

    def on_mount(self) -> None:
        self.tick_running = self.app.ticking
        self.watch(self.app, "ticking", self._ticking_changed, init=False)

    def on_resize(self) -> None:
        if self.snapshot is not None and self.size.width != self._width:
            self.show(self.snapshot)

    def _ticking_changed(self, ticking: bool) -> None:
        self.tick_running = ticking
        if self.snapshot is not None:
            self.show(self.snapshot)

    @property
    def table(self) -> TimelineTable:
        return self.query_one(TimelineTable)

    def show(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self._width = self.size.width
        table = self.table
        width = table.what_width(self.size.width)
        rows: list[tuple[str, Row]] = []
        entries: dict[str, TickEntry] = {}
        if self.tick_running or snap.claims:
            what = ", ".join(snap.claims) or "starting"
            rows.append((RUNNING_KEY, (
                Text("now"), Text(clean_line(what)), Text("◐ RUNNING", style="bold yellow"),
                Text("l: follow the log live", style="dim"),
            )))
        seen: dict[str, int] = {}
        for row in group_ticks(snap.entries[:MAX_ROWS]):
            main = row.main
            key = entry_key(row.entries[0], seen)
            entries[key] = main
            tick = "" if main.tick is None else f"#{main.tick}"
            ids = ",".join(dict.fromkeys(e.task_id for e in reversed(row.entries) if e.task_id))
            rows.append((key, (
                Text(f"{tick} {short_time(main.timestamp)}".strip()),
                Text(clean_line(ids)),
                status_cell(row),
                what_cell(row, width),
            )))
        following = table.row_count == 0 or table.cursor_row == 0
        table.entries = entries
        table.show_rows(rows)
        if following and table.row_count:
            # A person looking at the newest tick keeps seeing the newest one as ticks arrive.
            table.move_cursor(row=0, animate=False)
            table.scroll_home(animate=False)
        shown = min(len(snap.entries), MAX_ROWS)
        self.border_subtitle = (f"newest {shown:,} of {len(snap.entries):,}" if len(snap.entries) > shown
                                else f"{shown:,} entries")

    def selected(self) -> tuple[str | None, TickEntry | None]:
        """(key, entry) of the row under the cursor; the running row has no entry."""
        key = selected_key(self.table)
        if key is None:
            return None, None
        return key, self.table.entries.get(key)
