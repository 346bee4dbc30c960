"""Every key and what it does, with the keys as remapped by memento.toml [keys]."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import ALL_KEYS

_DISPLAY = {"question_mark": "?", "space": "space", "enter": "enter"}


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, overrides: dict[str, str], rows: tuple[tuple[str, str], ...] | None = None,
                 title: str = "Log screen — keys") -> None:
        super().__init__(classes="dialog-screen")
        self.overrides = overrides
        self.rows = rows  # another screen's keys (the log or diff screen's); None: the dashboard's
        self.title_text = title

    def compose(self) -> ComposeResult:
        if self.rows is not None:
            yield from self._screen_keys(self.rows)
            return
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("action", no_wrap=True)
        table.add_column("what it does")
        for k in ALL_KEYS:
            key = self.overrides.get(k.id, k.key)
            table.add_row(Text(_DISPLAY.get(key, key)), Text(k.id), Text(k.help))
        table.add_row(Text("tab"), Text(""), Text("move between the task list and the tabs on the right"))
        table.add_row(Text("ctrl+p"), Text(""), Text("command palette: every action by name"))
        with VerticalScroll(classes="dialog", id="help-dialog"):
            yield Static(Text("Memento dashboard — keys", style="bold"))
            yield Static(table)
            yield Static(Text("Remap any key in memento.toml, e.g. [keys] tick = \"f5\".  escape closes.",
                              style="dim"))

    def _screen_keys(self, rows: tuple[tuple[str, str], ...]) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("what it does")
        for key, what in rows:
            table.add_row(Text(key), Text(what))
        with VerticalScroll(classes="dialog", id="help-dialog"):
            yield Static(Text(self.title_text, style="bold"))
            yield Static(table)
            yield Static(Text("escape closes.", style="dim"))
