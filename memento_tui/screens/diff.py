"""A commit's diff (`git show --stat --patch`), read in a worker, shown with diff syntax colour."""

from __future__ import annotations

from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from memento_core.git.history import diff as git_diff

from ..literal import clean, literal

MAX_DIFF_LINES = 20_000


class DiffScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]
    HELP_TITLE = "Diff screen — keys"
    HELP = (
        ("escape, q", "back to the dashboard"),
        ("↑ ↓ pgup pgdn home end", "scroll the commit's diff"),
        ("?", "this help"),
    )

    class Loaded(Message):
        def __init__(self, text: str, error: str) -> None:
            super().__init__()
            self.text = text
            self.error = error

    def __init__(self, root: Path, sha: str, label: str) -> None:
        super().__init__()
        self.root = root
        self.sha = sha
        self.label = label

    def compose(self) -> ComposeResult:
        title = Text("Diff ", style="bold")
        title.append_text(literal(f"{self.sha[:10]} {self.label}", "cyan", one_line=True))
        yield Static(title, classes="screen-title")
        with VerticalScroll(id="diff-scroll"):
            yield Static(Text("loading…", style="dim"), id="diff-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#diff-scroll").focus()
        self._load()

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False, description="git show")
    def _load(self) -> None:
        try:
            text = git_diff(self.root, self.sha)
        except Exception as exc:
            self.post_message(self.Loaded("", f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Loaded(text, ""))

    def on_diff_screen_loaded(self, message: Loaded) -> None:
        body = self.query_one("#diff-body", Static)
        if message.error:
            body.update(literal(message.error, "red"))
            return
        body.update(diff_syntax(message.text, MAX_DIFF_LINES))


def diff_syntax(diff: str, max_lines: int) -> Syntax:
    """A diff shown literally (escapes removed) with diff syntax colour, cut after ``max_lines``."""
    lines = clean(diff).splitlines()
    cut = len(lines) > max_lines
    text = "\n".join(lines[:max_lines]) + (f"\n… {len(lines) - max_lines} more lines" if cut else "")
    return Syntax(text, "diff", theme="ansi_dark", word_wrap=False, background_color="default")
