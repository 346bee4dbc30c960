"""The one screen of SPEC §6: header, controls, progress, tasks, and timeline/notes/continuity/memory tabs.

Every action here edits files only through memento_core (in a thread worker);
the App then reads the changed files again and the panes refresh from them.
The screen watches ``app.snapshot`` and redraws the panes whose files were
read; the header and the controls watch the App's state themselves.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from memento_core.config.write import set_schedule_every
from memento_core.control import acknowledge_verify, reset_task, set_mode, skip_task
from memento_core.errors import MementoError
from memento_core.notes import add_note
from memento_core.status_log import TickEntry

from ..app_state import AppState
from ..keymap import DASHBOARD_KEYS, bindings
from ..messages import ActionDone, FilesChanged
from ..snapshot import ALL_PARTS, CHECKPOINT, CONFIG, NOTES, PLAN, STATE, STATUS, Snapshot
from ..widgets.continuity import ContinuityPane
from ..widgets.controls import Controls
from ..widgets.header import StatusHeader
from ..widgets.memory import MemoryPane
from ..widgets.needs import NeedsYou
from ..widgets.notes import NotesPane
from ..widgets.progress import ProgressPane
from ..widgets.tasks import TaskPane
from ..widgets.timeline import RUNNING_KEY, TimelinePane, rollback_patch
from ..widgets.workers import WorkersPane
from .dialogs import AnswerComposer, AskScreen, ConfirmScreen, NoteComposer
from .diff import DiffScreen
from .log import LogScreen
from .memory_entry import MemoryEntryScreen


class DashboardScreen(Screen[None]):
    BINDINGS = bindings(DASHBOARD_KEYS)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    app: AppState

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header")
        yield NeedsYou(id="needs", classes="-empty")
        yield WorkersPane(id="workers", classes="-empty")
        with Horizontal(id="top"):
            yield Controls(id="controls")
            yield ProgressPane(id="progress")
        with Horizontal(id="body"):
            yield TaskPane(id="tasks")
            with TabbedContent(id="tabs"):
                with TabPane("Timeline", id="tab-timeline"):
                    yield TimelinePane(id="timeline")
                with TabPane("Notes", id="tab-notes"):
                    yield NotesPane(id="notes")
                with TabPane("State", id="tab-continuity"):
                    yield ContinuityPane(id="continuity")
                with TabPane("Memory", id="tab-memory"):
                    yield MemoryPane(self.app.ws, id="memory")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#task-table").focus()
        self.watch(self.app, "snapshot", self._snapshot_changed, init=False)
        self.watch(self.app, "auto_tick", self._auto_tick_changed, init=False)
        self.watch(self.app, "next_tick_at", self._auto_tick_changed, init=False)  # the time left counts it
        if self.app.snapshot is not None:  # read before this screen was mounted: show all of it
            self.apply(self.app.snapshot, ALL_PARTS)

    # ------------------------------------------------------------------ rendering

    def _auto_tick_changed(self, _value: bool) -> None:
        if self.app.snapshot is not None:
            self.query_one(ProgressPane).show(self.app.snapshot, self.app.tick_interval(), self.app.until_next_tick())

    def _snapshot_changed(self, snap: Snapshot | None) -> None:
        if snap is not None:
            self.apply(snap, snap.parts_read)

    def apply(self, snap: Snapshot, parts: frozenset[str]) -> None:
        """Show a fresh snapshot; only the panes whose files were read again are redrawn."""
        if parts & {PLAN, STATUS, CONFIG, STATE}:
            self.query_one(ProgressPane).show(snap, self.app.tick_interval(), self.app.until_next_tick())
            self.query_one(TaskPane).show(snap)
        if parts & {STATUS, STATE}:
            self.query_one(TimelinePane).show(snap)
        if NOTES in parts:
            self.query_one(NotesPane).show(snap)
        if parts & {CHECKPOINT, PLAN, STATE}:
            self.query_one(ContinuityPane).show(snap)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-memory":
            self.query_one(MemoryPane).reload()

    def on_memory_pane_open_entry(self, message: MemoryPane.OpenEntry) -> None:
        self.app.push_screen(MemoryEntryScreen(self.app.ws, message.path))

    def on_data_table_row_selected(self, event) -> None:
        # enter on a row: expand a task, open a tick's log
        event.stop()
        if event.data_table.id == "timeline-table":
            self.action_log()
        else:
            self.action_expand()

    # ------------------------------------------------------------------ helpers

    def _timeline_focused(self) -> bool:
        focused = self.focused
        timeline = self.query_one(TimelinePane)
        return focused is not None and (focused is timeline or timeline in focused.ancestors)

    def _selected_task_id(self) -> str | None:
        return self.query_one(TaskPane).selected_id()

    def _selected_entry(self) -> tuple[str | None, TickEntry | None]:
        """The tick the person means: the timeline's row when it has focus, else the task's last tick."""
        if self._timeline_focused():
            return self.query_one(TimelinePane).selected()
        snap = self.app.snapshot
        task = self.query_one(TaskPane).selected_task()
        if task is None or snap is None:
            return None, None
        if task.status == "~":
            return RUNNING_KEY, None
        return task.id, snap.last_by_task.get(task.id)

    def _edit(self, description: str, fn: Callable[[], str], parts: frozenset[str]) -> None:
        self._run_edit(description, fn, parts)

    @work(thread=True, group="edit", exit_on_error=False, description="edit through memento_core")
    def _run_edit(self, description: str, fn: Callable[[], str], parts: frozenset[str]) -> None:
        try:
            text = fn()
        except MementoError as exc:
            self.app.post_message(ActionDone(f"{description}: {exc}", error=True))
        except Exception as exc:  # a bug must not take the dashboard down
            self.app.post_message(ActionDone(f"{description}: {type(exc).__name__}: {exc}", error=True))
        else:
            self.app.post_message(ActionDone(text))
        self.app.post_message(FilesChanged(set(parts)))  # read them now, whether or not the watcher runs

    # ------------------------------------------------------------------ actions

    def action_reset(self) -> None:
        task_id = self._selected_task_id()
        if task_id is None:
            self.notify("select a task first", severity="warning")
            return
        ws = self.app.ws

        def run() -> str:
            plan = reset_task(ws, task_id)  # the failure streak starts afresh too
            return f"{task_id}: [ ] again with retries 0" + _still(ws, plan)

        self._edit(f"reset {task_id}", run, frozenset({PLAN, STATE}))

    def action_skip(self) -> None:
        task_id = self._selected_task_id()
        if task_id is None:
            self.notify("select a task first", severity="warning")
            return
        ws = self.app.ws

        def answered(reason: str | None) -> None:
            if not reason:
                return

            def run() -> str:
                plan = skip_task(ws, task_id, reason)
                return f"{task_id} skipped [-]" + _still(ws, plan)

            self._edit(f"skip {task_id}", run, frozenset({PLAN, STATE}))

        self.app.push_screen(AskScreen(f"Skip {task_id}: why is it not needed?",
                                       placeholder="the reason, written into the plan"), answered)

    def action_note(self) -> None:
        from memento_core.overview import note_warning

        task = self.query_one(TaskPane).selected_task()
        notes_path = self.app.ws.notes_path
        snap = self.app.snapshot
        plan = snap.plan if snap is not None else None

        def answered(result: tuple[str, str] | None) -> None:
            if not result:
                return
            target, text = result
            warning = note_warning(plan, target)

            def run() -> str:
                note = add_note(notes_path, text, target=target)
                return f"note for {note.target} added" + (f"; {warning}" if warning else "")

            self._edit("note", run, frozenset({NOTES}))

        warning = note_warning(plan, task.id) if task else ""
        self.app.push_screen(NoteComposer(task.id if task else None, task.title if task else "", warning),
                             answered)

    def action_answer(self) -> None:
        """The question of the selected task when it waits [?], else the first one waiting (SPEC §18)."""
        from memento_core.control import answer_task
        from memento_core.questions import question_of

        snap = self.app.snapshot
        selected = self.query_one(TaskPane).selected_task()
        waiting = [t for t in (snap.plan.tasks if snap is not None and snap.plan is not None else ()) if t.status == "?"]
        task = selected if selected is not None and selected.status == "?" else (waiting[0] if waiting else None)
        if task is None:
            self.notify("no question waits for an answer", severity="warning")
            return
        ws = self.app.ws
        question = question_of(ws, task)

        def answered(result: tuple[int | None, str] | None) -> None:
            if not result:
                return
            choice, text = result

            def run() -> str:
                source = "browser" if self.app.served else "dashboard"
                answer, plan = answer_task(ws, task.id, text or None, choice=choice, source=source)
                return f"{task.id} answered: {' '.join(answer.split())[:60]}; it runs again" + _still(ws, plan)

            self._edit(f"answer {task.id}", run, frozenset({PLAN, NOTES, STATE}))

        self.app.push_screen(AnswerComposer(question), answered)

    def _set_mode(self, mode: str) -> None:
        ws = self.app.ws

        def run() -> str:
            set_mode(ws, mode)  # resuming also resets a tripped circuit breaker
            return f"tick_mode: {mode}"

        self._edit(f"tick_mode {mode}", run, frozenset({PLAN, STATE}))

    def action_pause(self) -> None:
        self._set_mode("paused")

    def action_resume(self) -> None:
        self._set_mode("auto")

    def action_stop(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._set_mode("stopped")

        self.app.push_screen(ConfirmScreen("Stop the pipeline? Ticks will exit at once until you resume.",
                                           yes="Stop"), answered)

    def action_tick(self) -> None:
        self.app.start_tick()

    def action_auto_tick(self) -> None:
        self.app.toggle_auto_tick()

    def action_interval(self) -> None:
        snap = self.app.snapshot
        current = self.app.interval_text() if snap else "5min"
        ws = self.app.ws
        app = self.app

        def answered(value: str | None) -> None:
            if not value:
                return

            def run() -> str:
                text = set_interval(ws, value)
                app.call_from_thread(app.interval_changed)
                return text

            self._edit("interval", run, frozenset({CONFIG}))

        self.app.push_screen(AskScreen("Tick interval", value=current, placeholder="90s, 5min, 1h",
                                       hint="writes memento.toml and the cron entry"), answered)

    def action_filter(self) -> None:
        value = self.query_one(TaskPane).cycle_filter()
        self.notify(f"filter: {value}", timeout=1.5)

    def action_expand(self) -> None:
        if self._timeline_focused():
            self.action_log()
            return
        pane = self.query_one(TaskPane)
        pane.expanded = not pane.expanded

    def action_log(self) -> None:
        key, entry = self._selected_entry()
        snap = self.app.snapshot
        if snap is None:
            return
        if key == RUNNING_KEY:
            log = snap.newest_log
            if log is None:
                self.notify("the running tick has no log yet", severity="warning")
                return
            self.app.push_screen(LogScreen(self.app.ws.root / log, f"{log} (running)", follow=True))
            return
        if entry is None or not entry.log_path:
            self.notify("this tick has no log", severity="warning")
            return
        path = self.app.ws.root / entry.log_path
        follow = bool(snap.claims) and entry.log_path == snap.newest_log
        patch = rollback_patch(self.app.ws.root, entry)
        self.app.push_screen(LogScreen(path, entry.log_path, follow=follow, patch=patch))

    def action_diff(self) -> None:
        _key, entry = self._selected_entry()
        if entry is None or not entry.commit_sha:
            self.notify("no commit for this tick (nothing passed, or it was rolled back)", severity="warning")
            return
        label = Text(entry.task_id or "").plain + " " + (entry.task_title or "")
        self.app.push_screen(DiffScreen(self.app.ws.root, entry.commit_sha, label))

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_architect(self) -> None:
        from .architect import ArchitectScreen  # SPEC §16: a dry run, its diff, apply on confirm

        self.app.push_screen(ArchitectScreen(self.app.ws))

    def action_draft(self) -> None:
        from .draft import BriefComposer, DraftScreen  # SPEC §17: a brief, its dry run, keep on y

        def drafted(brief: str | None) -> None:
            if brief is not None:
                self.app.push_screen(DraftScreen(self.app.ws, brief))

        self.app.push_screen(BriefComposer(), drafted)

    def action_acknowledge(self) -> None:
        ws = self.app.ws

        def run() -> str:
            from memento_core.checkpoint import acknowledge

            n = acknowledge(ws)
            return f"acknowledged {n} result(s)"

        self._edit("acknowledge", run, frozenset({STATE, CHECKPOINT}))

    def action_acknowledge_verify(self) -> None:
        ws = self.app.ws

        def run() -> str:
            gone = acknowledge_verify(ws, [])
            if not gone:
                return "no verify command changed by the architect waits for you"
            return "acknowledged: " + "; ".join(c.describe() for c in gone)

        self._edit("acknowledge verify changes", run, frozenset({PLAN}))


def set_interval(ws, value: str) -> str:
    """memento.toml's interval and the cron entry's, saying what cron will really do (as the CLI warns)."""
    from memento_core.cron import interval_text, schedule_for, update_interval_if_installed

    config = set_schedule_every(ws.config_path, value)
    if not update_interval_if_installed(ws.root, config.schedule_every_text):
        return f"every {config.schedule_every_text} (no cron entry installed)"
    schedule = schedule_for(config.schedule_every_text)
    if schedule.exact:
        return f"every {config.schedule_every_text} (cron entry updated: {schedule.fields})"
    config = set_schedule_every(ws.config_path, interval_text(schedule.seconds))
    return f"{schedule.warning}; memento.toml now says every {config.schedule_every_text} (cron entry updated)"


def _still(ws, plan) -> str:
    """"; the pipeline is still paused (…): resume (space) to run it", or '' (control.still_not_running)."""
    from memento_core.control import still_not_running
    from memento_core.state import TickState

    still = still_not_running(plan, TickState.load(ws), resume="resume (space)")
    return f"; {still}" if still else ""
