"""The "Needs you" strip under the header: what a person must do now, hidden when nothing is needed.

The facts come from memento_core (overview.needs_you, through Snapshot.needs);
this widget only renders them, one line each, every piece of file text literal.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..app_state import AppState
from ..literal import literal
from .header import state_word

WATCHED = ("snapshot", "auto_tick")
SHOWN = 4  # lines of needs; the rest is counted on the last line
ICON = {"blocked": "✖", "breaker": "⚠", "dirty": "⚠", "invalid": "✖", "config": "✖", "schedule": "○",
        "sandbox": "⚠", "rate_limit": "◷", "budget": "$", "notes": "✉", "results": "✔", "verify": "⚠",
        "question": "?", "check": "✖", "forge": "⚠"}


class NeedsYou(Static):
    app: AppState

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self.refresh_needs, init=False)
        self.refresh_needs()

    def current(self) -> list:
        snap = self.app.snapshot
        if snap is None:
            return []
        word, why = state_word(self.app)
        return snap.needs(idle_why=why if word == "IDLE" else "")

    def on_resize(self) -> None:
        self.refresh_needs()

    def refresh_needs(self) -> None:
        needs = self.current()
        self.set_class(not needs, "-empty")
        self.border_title = None
        width = max(self.content_size.width, 40)
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        for n, need in enumerate(needs[:SHOWN]):
            if n:
                out.append("\n")
            more = f"  (+{len(needs) - SHOWN} more: memento status)" if n == SHOWN - 1 and len(needs) > SHOWN else ""
            out.append_text(need_line(need, width, first=n == 0, more=more))
        self.update(out)


def need_line(need, width: int, *, first: bool, more: str = "") -> Text:
    """One need on one line of ``width`` cells: the advice (what to do) is never cut; the
    reason before it gives way (said in full by `memento status` and the task's detail)."""
    head = Text("Needs you " if first else "          ", style="bold red" if first else "")
    head.append(f"{ICON.get(need.kind, '•')} ", style="bold")
    tail = Text(f"  → {need.action}", style="dim") if need.action else Text()
    tail.append(more, style="dim")
    room = width - head.cell_len - tail.cell_len
    text = literal(need.text, one_line=True)
    if text.cell_len > room:
        text.truncate(max(room, 12), overflow="ellipsis")
    return Text.assemble(head, text, tail, no_wrap=True, overflow="ellipsis", end="")
