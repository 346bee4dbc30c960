"""A tick's full log in the lazy viewer; follow a running tick's log live; open a failed tick's rollback patch."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..app_state import AppState
from ..literal import literal
from ..widgets.log_view import LazyLog

RUNNING = " (running)"


class LogScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("F", "toggle_follow", "Follow"),
        Binding("p", "patch", "Patch"),
    ]
    HELP_TITLE = "Log screen — keys"
    HELP = (
        ("escape, q", "back to the dashboard"),
        ("F", "follow the log as it grows (on while the tick runs), or stop following"),
        ("p", "open the rollback patch of this failed tick (logs/rollback/…/changes.patch)"),
        ("↑ ↓ pgup pgdn home end", "scroll"),
        ("?", "this help"),
    )

    app: AppState

    def __init__(self, path: Path, label: str, *, follow: bool = False, patch: Path | None = None) -> None:
        super().__init__()
        self.path = path
        self.label = label
        self.follow = follow
        self.patch = patch

    def compose(self) -> ComposeResult:
        yield Static(id="log-title", classes="screen-title")
        yield LazyLog(self.path, follow=self.follow, id="log-view")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(LazyLog).focus()
        if self.follow:
            self.watch(self.app, "ticking", self._ticking_changed, init=False)
        self._title()

    def _ticking_changed(self, ticking: bool) -> None:
        """The tick ended: the log is complete, stop following and say so."""
        if ticking:
            return
        log = self.query_one(LazyLog)
        log.follow = False
        log.rescan()
        self.label = self.label.removesuffix(RUNNING)
        self._title()

    def _title(self) -> None:
        log = self.query_one(LazyLog)
        out = Text("Log ", style="bold")
        out.append_text(literal(self.label, "cyan", one_line=True))
        out.append(f"  {log.line_count:,} lines" + ("" if log.indexed else " (indexing…)"), style="dim")
        if not self.path.exists():
            out.append("  (the file does not exist)", style="red")
        if log.follow:
            out.append("  following (F to stop)", style="bold yellow")
        if self.patch is not None:
            out.append("  p: rollback patch", style="bold")
        self.query_one("#log-title", Static).update(out)

    def on_lazy_log_indexed(self, message: LazyLog.Indexed) -> None:
        self.call_after_refresh(self._title)

    def action_toggle_follow(self) -> None:
        log = self.query_one(LazyLog)
        log.follow = not log.follow
        self._title()

    def action_patch(self) -> None:
        if self.patch is None:
            self.notify("no rollback patch for this tick (it passed, or there was nothing to roll back)",
                        severity="warning")
            return
        root = self.app.ws.root
        label = str(self.patch.relative_to(root)) if self.patch.is_relative_to(root) else str(self.patch)
        self.app.push_screen(LogScreen(self.patch, label))
