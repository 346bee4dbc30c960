"""The header line: project, pipeline state, tick running, uptime, next tick, breaker."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..literal import literal
from ..snapshot import Snapshot

STATE_STYLE = {
    "RUNNING": "bold green",
    "COMPLETE": "bold green",
    "PAUSED": "bold yellow",
    "STOPPED": "bold red",
    "BLOCKED": "bold red",
    "INVALID": "bold magenta",
}


def human(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


class StatusHeader(Static):
    """Rendered from a snapshot plus the app's clock-driven values."""

    def show(self, snap: Snapshot | None, *, ticking: bool, uptime: float | None,
             next_tick: str) -> None:
        # One line always: a wrapping header would shift the whole screen at every tick.
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append("Memento ", style="bold")
        if snap is None:
            out.append("loading…", style="dim")
            self.update(out)
            return
        out.append_text(literal(snap.project, "bold cyan", one_line=True))
        out.append("  ")
        state = snap.state_name
        out.append(f"● {state}", style=STATE_STYLE.get(state, "bold"))
        if ticking or snap.claims:
            what = ", ".join(snap.claims)
            out.append("  ⟳ TICK RUNNING" + (f" {what}" if what else ""), style="bold yellow")
        out.append(f"  up {human(uptime)}", style="dim")
        out.append(f"  next tick: {next_tick}")
        breaker = snap.state.breaker_reason
        if breaker:
            out.append("  breaker: TRIPPED ", style="bold red")
            out.append_text(literal(breaker, "red", one_line=True))
        else:
            out.append("  breaker ok", style="dim")
        if snap.alert:
            out.append("  ⚠ alert", style="bold red")
        if snap.config_error:
            out.append("  memento.toml: ", style="bold magenta")
            out.append_text(literal(snap.config_error, "magenta", one_line=True))
        self.update(out)
