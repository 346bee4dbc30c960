"""A tick's full log in the lazy viewer; follow a running tick's log live."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..literal import literal
from ..widgets.log_view import LazyLog


class LogScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("F", "toggle_follow", "Follow"),
    ]

    def __init__(self, path: Path, label: str, *, follow: bool = False) -> None:
        super().__init__()
        self.path = path
        self.label = label
        self.follow = follow

    def compose(self) -> ComposeResult:
        yield Static(id="log-title", classes="screen-title")
        yield LazyLog(self.path, follow=self.follow, id="log-view")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(LazyLog).focus()
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
        self.query_one("#log-title", Static).update(out)

    def on_lazy_log_indexed(self, message: LazyLog.Indexed) -> None:
        self.call_after_refresh(self._title)

    def action_toggle_follow(self) -> None:
        log = self.query_one(LazyLog)
        log.follow = not log.follow
        self._title()
