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
        "sandbox": "⚠", "rate_limit": "◷", "budget": "$", "notes": "✉", "results": "✔", "verify": "⚠"}


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

    def refresh_needs(self) -> None:
        needs = self.current()
        self.set_class(not needs, "-empty")
        self.border_title = None
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        for n, need in enumerate(needs[:SHOWN]):
            if n:
                out.append("\n")
            out.append("Needs you " if n == 0 else "          ", style="bold red" if n == 0 else "")
            out.append(f"{ICON.get(need.kind, '•')} ", style="bold")
            out.append_text(literal(need.text, one_line=True))
            if need.action:
                out.append(f"  → {need.action}", style="dim")
        if len(needs) > SHOWN:
            out.append(f"  (+{len(needs) - SHOWN} more: memento status)", style="dim")
        self.update(out)
