"""The running workers (SPEC §12): one line each (task, stage, elapsed, where), and one worker's live log.

The facts come from memento_core (overview.running_workers, from the claim
files), read in a thread worker once a second; the log is the lazy viewer
following the selected worker's own log file. Hidden while nothing runs.
Every piece of file text is rendered literally.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from memento_core.durations import format_duration
from memento_core.overview import running_workers

from ..app_state import AppState
from ..literal import literal
from .log_view import LazyLog

POLL_SECONDS = 1.0


def workers_text(workers: list[dict], selected: int) -> Text:
    """One line per worker; the one whose log is shown is marked."""
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    out.append(f"Workers ({len(workers)} running)", style="bold")
    if len(workers) > 1:
        out.append("  w: next worker's log", style="dim")
    for n, w in enumerate(workers):
        out.append("\n")
        out.append("▶ " if n == selected else "  ", style="bold")
        out.append_text(literal(str(w.get("task", "?")), "bold", one_line=True))
        out.append("  ")
        out.append_text(literal(str(w.get("stage", "")), "cyan", one_line=True))
        out.append(f"  {format_duration(float(w.get('elapsed_s') or 0))}")
        where = w.get("worktree") or "main work tree"
        out.append("  ")
        out.append_text(literal(f"{where} · {w.get('host', '')}", "dim", one_line=True))
    return out


class WorkersPane(Vertical):
    DEFAULT_CSS = """
    WorkersPane { height: 14; border: round $accent; }
    WorkersPane.-empty { display: none; }
    WorkersPane #workers-list { height: auto; max-height: 5; }
    WorkersPane LazyLog { height: 1fr; }
    """
    BINDINGS = [Binding("w", "next_worker", "Next worker", show=False)]

    app: AppState

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.running: list[dict] = []
        self.selected = 0
        self.log_path: str = ""

    def compose(self) -> ComposeResult:
        yield Static(id="workers-list")

    def on_mount(self) -> None:
        self.set_interval(POLL_SECONDS, self.poll)
        self.poll()

    def poll(self) -> None:
        snap = self.app.snapshot
        if snap is not None and snap.plan is not None:
            self._read(snap.plan)

    @work(thread=True, exclusive=True, group="workers-pane")
    def _read(self, plan) -> None:
        try:
            found = running_workers(self.app.ws, plan)
        except Exception:  # noqa: BLE001 - a torn claim file: show nothing this time, read again next
            found = []
        self.app.call_from_thread(self.show, found)

    def show(self, workers: list[dict]) -> None:
        self.running = workers
        self.set_class(not workers, "-empty")
        if workers:
            self.selected = min(self.selected, len(workers) - 1)
        self.query_one("#workers-list", Static).update(workers_text(workers, self.selected))
        self._follow(workers[self.selected].get("log", "") if workers else "")

    def _follow(self, log: str) -> None:
        """The selected worker's log in the lazy viewer, followed live (replaced when the worker changes)."""
        if log == self.log_path:
            return
        self.log_path = log
        for old in self.query(LazyLog):
            old.remove()
        path = (self.app.ws.root / log).resolve() if log else None
        logs = self.app.ws.logs_dir.resolve()
        if path is not None and path.is_relative_to(logs):  # a claim is a file: never follow it elsewhere
            self.mount(LazyLog(path, follow=True, classes="worker-log"))

    def action_next_worker(self) -> None:
        if self.running:
            self.selected = (self.selected + 1) % len(self.running)
            self.show(self.running)
