"""The Report view (SPEC §15): what needs a person at the top, then what happened in the window.

The report is memento_core.report's (the same as `memento report`), read in a
thread worker and shown literally; a new snapshot (a file changed) reads it again.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..app_state import AppState
from ..literal import literal

WINDOWS = ("24h", "7d", "30d", "all")
SINCE = {"all": "36500d"}  # a window's `memento report --since`


class ReportScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("w", "next_window", "Window"),
    ]
    HELP_TITLE = "Report — keys"
    HELP = (
        ("escape, q", "back to the dashboard"),
        ("w", "the window: the last 24 h, 7 days, 30 days, all the history"),
        ("↑ ↓ pgup pgdn home end", "scroll"),
        ("?", "this help"),
    )

    app: AppState

    @dataclass
    class Loaded(Message):
        doc: dict | None
        error: str = ""

    def __init__(self) -> None:
        super().__init__()
        self.window = WINDOWS[0]
        self.doc: dict | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="report-title", classes="screen-title")
        with VerticalScroll(id="report-scroll"):
            yield Static(id="report-needs")
            yield Static(id="report-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#report-scroll").focus()
        self.watch(self.app, "snapshot", lambda _snap: self.load(), init=False)
        self.load()

    def action_next_window(self) -> None:
        self.window = WINDOWS[(WINDOWS.index(self.window) + 1) % len(WINDOWS)]
        self.load()

    @work(thread=True, exclusive=True, group="report", exit_on_error=False, description="read the report")
    def load(self) -> None:
        from memento_core.report import build_report

        try:
            self.post_message(self.Loaded(build_report(self.app.ws, since=SINCE.get(self.window, self.window))))
        except Exception as exc:  # noqa: BLE001 - an unreadable plan is shown, never a crash
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))

    def on_report_screen_loaded(self, message: Loaded) -> None:
        self.doc = message.doc
        title = Text(f"Report — {'all the history' if self.window == 'all' else 'the last ' + self.window}",
                     style="bold")
        if message.doc is None:
            self.query_one("#report-title", Static).update(title)
            self.query_one("#report-needs", Static).update(literal("could not read the report: " + message.error))
            self.query_one("#report-body", Static).update("")
            return
        title.append_text(literal(f"  {message.doc['project']}: {message.doc['since']} to {message.doc['until']}"))
        self.query_one("#report-title", Static).update(title)
        self.query_one("#report-needs", Static).update(needs_text(message.doc))
        self.query_one("#report-body", Static).update(body_text(message.doc))


def needs_text(doc: dict) -> Text:
    """What needs a person, first, in red; or that nothing does."""
    needs = doc["needs_you"]
    if not needs:
        return Text("Nothing needs you.", style="green")
    out = Text(f"Needs you ({len(needs)})\n", style="bold red")
    for need in needs:
        out.append("  • ")
        out.append_text(literal(need["text"], one_line=True))
        if need["action"]:
            out.append(f"  → {need['action']}", style="dim")
        out.append("\n")
    return out


def body_text(doc: dict) -> Text:
    """The rest of `memento report`'s lines (after its needs), every file's text literal."""
    from memento_core.report import report_lines

    lines = report_lines(doc)
    rest = lines[lines.index("") + 1:]
    start = next((i for i, line in enumerate(rest) if line == ""), 0)  # skip the needs block
    out = Text()
    for line in rest[start + 1:]:
        heading = bool(line) and not line.startswith(" ") and line.endswith(":")
        out.append_text(literal(line, "bold" if heading else "", one_line=True))
        out.append("\n")
    return out
