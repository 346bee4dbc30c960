"""One memory entry: its text and its history in memory/'s own git repository."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from memento_core.workspace import Workspace

from ..literal import literal


class MemoryEntryScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    class Loaded(Message):
        def __init__(self, body: Text, history: Text) -> None:
            super().__init__()
            self.body = body
            self.history = history

    def __init__(self, ws: Workspace, path: str) -> None:
        super().__init__()
        self.ws = ws
        self.path = path

    def compose(self) -> ComposeResult:
        title = Text("Memory ", style="bold")
        title.append_text(literal(self.path, "cyan", one_line=True))
        yield Static(title, classes="screen-title")
        with VerticalScroll(id="memory-entry-scroll"):
            yield Static(Text("loading…", style="dim"), id="memory-entry-body")
            yield Static(id="memory-entry-history")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#memory-entry-scroll").focus()
        self._load()

    @work(thread=True, exclusive=True, group="memory-entry", exit_on_error=False, description="read memory entry")
    def _load(self) -> None:
        self.post_message(self.Loaded(self._body(), self._history()))

    def _body(self) -> Text:
        from memento_core.memory import read_entry

        try:
            return literal(read_entry(self.ws, self.path))
        except Exception as exc:
            return literal(f"{type(exc).__name__}: {exc}", "red")

    def _history(self) -> Text:
        from memento_core.memory import entry_history

        history = Text("\nHistory\n", style="bold underline")
        try:
            for sha, date, subject in entry_history(self.ws, self.path):
                history.append(f"{str(sha)[:7]} ", style="yellow")
                history.append_text(literal(f"{date} ", "dim", one_line=True))
                history.append_text(literal(str(subject), one_line=True))
                history.append("\n")
        except Exception as exc:
            history.append_text(literal(f"{type(exc).__name__}: {exc}", "red"))
        return history

    def on_memory_entry_screen_loaded(self, message: Loaded) -> None:
        self.query_one("#memory-entry-body", Static).update(message.body)
        self.query_one("#memory-entry-history", Static).update(message.history)
