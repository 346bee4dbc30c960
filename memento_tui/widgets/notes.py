"""Notes: pending ones listed, read ones folded (never deleted; the core archives them)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Static

from memento_core.notes import Note

from ..literal import literal
from ..snapshot import Snapshot


def note_text(note: Note) -> Text:
    out = Text()
    out.append("✔ read " if note.read else "⏳ pending ", style="green" if note.read else "bold yellow")
    out.append_text(literal(note.timestamp, "dim", one_line=True))
    out.append(" → ")
    out.append_text(literal(note.target, "cyan", one_line=True))
    out.append("\n")
    out.append_text(literal(note.text))
    out.append("\n")
    return out


class NotesPane(VerticalScroll):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._last: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("n: new note (to the selected task, or global)", style="dim"), id="notes-hint")
        yield Static(id="notes-pending")
        with Collapsible(title="Read", collapsed=True, id="notes-read"):
            yield Static(id="notes-read-list")

    def show(self, snap: Snapshot) -> None:
        key = (snap.notes, snap.notes_error)
        if key == self._last:
            return
        self._last = key
        active = [n for n in snap.notes if not n.archived]
        pending = [n for n in active if not n.read]
        read = [n for n in active if n.read]
        body = Text()
        if snap.notes_error:
            body.append_text(literal(snap.notes_error, "red"))
            body.append("\n")
        if not pending:
            body.append("no pending notes\n", style="dim")
        for note in pending:
            body.append_text(note_text(note))
        self.query_one("#notes-pending", Static).update(body)
        folded = Text()
        for note in read:
            folded.append_text(note_text(note))
        self.query_one("#notes-read-list", Static).update(folded or Text("none", style="dim"))
        self.query_one(Collapsible).title = f"Read ({len(read)})"
