"""The task list: filter All / Pending / Done / Blocked, rows updated in place, a detail panel."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from memento_core.durations import format_duration
from memento_core.plan.model import Task
from memento_core.status_log import TickEntry

from ..literal import literal
from ..snapshot import Snapshot
from .table_sync import LiveTable, Row, fit_columns, selected_key, sync_rows

FILTERS = ("All", "Pending", "Done", "Blocked")
DUP = "@line"  # row key of a task whose id appeared before: "T-1@line42"
_FILTER_STATUSES = {
    "All": None,
    "Pending": frozenset(" ~"),
    "Done": frozenset("x-"),
    "Blocked": frozenset("!?"),  # and the tasks waiting for an answer: both need a person
}
# Fixed column widths (the title takes the rest): the same layout whatever the data.
WIDTHS = {"icon": 1, "id": 6, "info": 11}
ICONS = {
    " ": ("○", "dim"),
    "x": ("✔", "green"),
    "!": ("✖", "bold red"),
    "~": ("◐", "bold yellow"),
    "-": ("–", "dim"),
    "?": ("?", "bold magenta"),  # one cell: the column is one wide
}


def status_icon(task: Task) -> Text:
    icon, style = ICONS.get(task.status, ("?", "magenta"))
    return Text(icon, style=style)


def info_cell(task: Task, last: TickEntry | None, max_retries: int, opened: set[str],
              waits: list[str] | None = None) -> Text:
    if task.status == "x":
        duration = last.duration_seconds if last is not None and last.status == "SUCCESS" else None
        return Text(format_duration(duration) if duration else "done", style="green")
    if task.status == "!":
        return Text(f"BLOCKED {task.retries}/{max_retries}", style="bold red")
    if task.status == "~":
        return Text("running", style="bold yellow")
    if task.status == "-":
        return Text("skipped", style="dim")
    if task.status == "?":
        return Text("ASKS (w)", style="bold magenta")
    if not task.valid:
        return Text("invalid", style="magenta")
    if task.retries:
        return Text(f"retry {task.retries}/{max_retries}", style="yellow")
    if task.phase not in opened:
        return literal(task.phase or "", "dim", one_line=True)
    if waits:
        return Text("waits", style="yellow")
    return Text("waiting", style="dim")


def title_cell(task: Task, last: TickEntry | None = None, waits: list[str] | None = None,
               width: int = 0) -> Text:
    """The title, then the module dimmed when both fit in ``width`` (the title comes first: a
    module is never the reason a title is cut); a blocked task's reason, or what a task waits
    on (its unfinished ``depends:``), on a second line."""
    out = literal(task.title, one_line=True)
    if task.module and (not width or out.cell_len + 2 + len(task.module) <= width):
        out.append("  ")
        out.append_text(literal(task.module, "dim cyan", one_line=True))
    if task.status == "!":
        from .timeline import failure_words

        out.append("\n")
        why = failure_words(last) if last is not None and last.status != "SUCCESS" else "no reason recorded"
        out.append_text(literal(why, "red", one_line=True))
    elif task.status == "?":
        out.append("\n")
        out.append_text(literal("asks: " + (task.question or "(no question recorded)"), "magenta", one_line=True))
    elif waits and task.status == " ":
        out.append("\n")
        out.append_text(literal("waits on " + ", ".join(waits), "yellow", one_line=True))
    return out


class TaskTable(LiveTable):
    """The tasks, one row per task id (the row key)."""

    def __init__(self, **kwargs):
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self._shown: dict[str, Row] = {}

    def on_mount(self) -> None:
        self.add_column("", key="icon", width=1)
        self.add_column("ID", key="id", width=WIDTHS["id"])
        self.add_column("State", key="info", width=WIDTHS["info"])
        self.add_column("Title", key="title", width=20)

    def fit(self, total: int) -> None:
        fit_columns(self, WIDTHS, "title", minimum=10, total=total)

    def show_rows(self, rows: list[tuple[str, Row]]) -> None:
        self._shown = sync_rows(self, rows, self._shown)


class TaskDetail(Static):
    """Everything about one task: fields, last result, error tail, retries."""


class TaskPane(Vertical):
    filter = reactive("All")
    expanded = reactive(False)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.snapshot: Snapshot | None = None
        self.border_title = "Tasks"
        self._blocked_seen: set[str] = set()  # the blocked tasks of the last snapshot shown

    def compose(self) -> ComposeResult:
        yield TaskTable(id="task-table")
        yield Static("", id="task-empty")
        with VerticalScroll(id="task-detail-scroll"):
            yield TaskDetail(id="task-detail")

    @property
    def table(self) -> TaskTable:
        return self.query_one(TaskTable)

    def watch_filter(self, value: str) -> None:
        self.border_subtitle = f"filter: {value} (f)"
        if self.snapshot is not None:
            self.show(self.snapshot)

    def watch_expanded(self, value: bool) -> None:
        self.set_class(value, "-expanded")
        self._show_detail()
        # The detail takes half the pane: keep the selected row in view once it is laid out.
        self.call_after_refresh(self._keep_cursor_in_view)

    def _keep_cursor_in_view(self) -> None:
        table = self.table
        if table.row_count:
            table.move_cursor(row=table.cursor_row, animate=False, scroll=True)

    def cycle_filter(self) -> str:
        self.filter = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        return self.filter

    def selected_id(self) -> str | None:
        key = selected_key(self.table)
        return key.split(DUP)[0] if key is not None else None

    def selected_task(self) -> Task | None:
        key = selected_key(self.table)
        if key is None or self.snapshot is None or self.snapshot.plan is None:
            return None
        if DUP in key:
            task_id, line = key.split(DUP)
            return next((t for t in self.snapshot.plan.tasks if t.id == task_id and str(t.line) == line), None)
        return self.snapshot.plan.task(key)

    def on_resize(self) -> None:
        before = self._title_width()
        self.table.fit(self.size.width)  # the pane's content width: its border is not in it
        if self.snapshot is not None and self._title_width() != before:
            self.show(self.snapshot)  # the titles' modules are shown by the room there is

    def _title_width(self) -> int:
        columns = self.table.columns
        key = ColumnKey("title")
        return columns[key].width if key in columns else 0

    def show(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.table.fit(self.size.width)
        plan = snap.plan
        if plan is None:
            self.table.show_rows([])
            self.query_one(TaskDetail).update(literal(snap.plan_error or "no plan", "red"))
            return
        wanted = _FILTER_STATUSES[self.filter]
        title_width = self._title_width()
        opened = {p["id"] for p in snap.summary.get("phases", []) if p.get("open")}
        max_retries = plan.meta.max_retries
        waiting = snap.summary.get("waits_on") or {}
        rows: list[tuple[str, Row]] = []
        seen: set[str] = set()
        for task in plan.tasks:
            if wanted is not None and task.status not in wanted:
                continue
            # A duplicate id is a plan error, shown as its own row (Progress counts it too).
            key = task.id if task.id not in seen else f"{task.id}{DUP}{task.line}"
            seen.add(task.id)
            rows.append((key, (
                status_icon(task),
                Text(task.id, style="bold" if task.status in "!~" else ""),
                info_cell(task, snap.last_by_task.get(task.id), max_retries, opened, waiting.get(task.id)),
                title_cell(task, snap.last_by_task.get(task.id), waiting.get(task.id), title_width),
            )))
        self.table.show_rows(rows)
        self.border_title = f"Tasks ({len(rows)})"
        self._say_empty(len(rows), len(plan.tasks))
        self._select_newly_blocked(plan)
        self._show_detail()

    def _say_empty(self, shown: int, total: int) -> None:
        """An empty table says why (the filter, or a plan without tasks) rather than stay blank."""
        empty = self.query_one("#task-empty", Static)
        empty.display = shown == 0
        self.table.display = shown > 0
        if shown:
            return
        if total == 0:
            empty.update(Text("The plan has no tasks yet: write one in docs/MASTER_PLAN.md (or D drafts "
                              "them from a brief).", style="dim"))
        else:
            empty.update(Text(f"No {self.filter.lower()} tasks ({total} in the plan; f: the next filter).",
                              style="dim"))

    def _select_newly_blocked(self, plan) -> None:
        """A task that has just become blocked (or is blocked when the dashboard opens) takes the
        selection, scrolled into view: "Needs you" says reset (r) or skip (s), and at 80x24 the
        table shows four rows. A person's own selection stays until the next task blocks."""
        blocked = [t.id for t in plan.tasks if t.status == "!"]
        new = [t for t in blocked if t not in self._blocked_seen]
        self._blocked_seen = set(blocked)
        table = self.table
        for task_id in new:
            try:
                row = table.get_row_index(task_id)
            except Exception:  # noqa: BLE001 - not shown under this filter
                continue
            self.call_after_refresh(lambda row=row: table.move_cursor(row=row, animate=False, scroll=True))
            break

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.expanded:
            self._show_detail()

    def _show_detail(self) -> None:
        if not self.is_mounted:
            return
        detail = self.query_one(TaskDetail)
        if not self.expanded:
            return
        task = self.selected_task()
        if task is None or self.snapshot is None:
            detail.update(Text("no task selected", style="dim"))
            return
        detail.update(task_detail(task, self.snapshot))


def task_detail(task: Task, snap: Snapshot) -> Text:
    """The expanded view of a task, every piece of file text literal."""
    max_retries = snap.plan.meta.max_retries if snap.plan else 3
    out = Text()
    out.append(f"{task.id} ", style="bold")
    out.append_text(literal(task.title, "bold", one_line=True))
    out.append(f"\n{task.state} · retries {task.retries}/{max_retries} · {task.phase or 'no phase'} · "
               f"line {task.line}\n", style="dim")
    last = snap.last_by_task.get(task.id)
    if last is None:
        out.append("no tick has run this task yet\n", style="dim")
    else:
        out.append_text(last_result(last))
    out.append("\n")
    waits = (snap.summary.get("waits_on") or {}).get(task.id)
    if waits and task.status not in "x-":
        out.append("waits on: ", style="yellow")
        out.append_text(literal(", ".join(waits), one_line=True))
        out.append("\n")
    out.append_text(review_verdicts(task, snap))
    for problem in task.problems:
        out.append("problem: ", style="magenta")
        out.append_text(literal(problem, one_line=True))
        out.append("\n")
    for key, value in task.fields.items():
        out.append(f"{key}: ", style="cyan")
        out.append_text(literal(value, one_line=True))
        out.append("\n")
    for value in task.accept:
        out.append("accept: ", style="cyan")
        out.append_text(literal(value, one_line=True))
        out.append("\n")
    out.append("keys: l log · d diff · r reset · s skip · n note", style="dim")
    return out


def review_verdicts(task: Task, snap: Snapshot, limit: int = 5) -> Text:
    """The acceptance gate's verdicts on the task's attempts (status entries with a Review field), newest first."""
    out = Text()
    reviewed = [e for e in snap.entries if e.task_id == task.id and e.field("Review")][:limit]
    if not reviewed:
        return out
    out.append(f"reviews ({len(task.accept)} criteria):\n", style="bold")
    for entry in reviewed:
        verdict = entry.field("Review") or ""
        out.append(f"  #{entry.tick if entry.tick is not None else '?'} ")
        out.append_text(literal(verdict, "green" if verdict.startswith("PASS") else "red", one_line=True))
        reason = entry.field("Reason") or ""
        if reason.startswith("review:"):
            out.append(" — ")
            out.append_text(literal(reason.removeprefix("review:").strip(), one_line=True))
        out.append("\n")
    return out


def last_result(last: TickEntry) -> Text:
    """The task's newest status entry: status, when, reason, commit, log, error tail."""
    out = Text()
    style = {"SUCCESS": "green", "FAILED": "yellow", "BLOCKED": "bold red"}.get(last.status, "")
    out.append("last result: ", style="bold")
    out.append(last.status, style=style)
    out.append(f"  tick #{last.tick if last.tick is not None else '?'} at ")
    out.append_text(literal(last.timestamp, one_line=True))
    duration = last.duration_seconds
    if duration is not None:
        out.append(f" ({format_duration(duration)})")
    out.append("\n")
    for name in ("Reason", "Verify Output", "Review", "Git Commit", "Log", "Escalation"):
        value = last.field(name)
        if value:
            out.append(f"{name}: ", style="cyan")
            out.append_text(literal(value, one_line=True))
            out.append("\n")
    tail = last.error_tail
    if tail:
        out.append("error tail:\n", style="bold red")
        out.append_text(literal(tail.strip("`\n"), "red"))
        out.append("\n")
    return out
