"""The header line: project, pipeline state, tick running, uptime, next tick, breaker.

It watches the App's shared state (the snapshot, ``ticking``, ``auto_tick``,
``next_tick_at`` and the once-a-second ``now``) and renders itself from it.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.widgets import Static

from ..app_state import AppState
from ..literal import literal
from ..snapshot import Snapshot

WATCHED = ("snapshot", "ticking", "auto_tick", "next_tick_at", "now")

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


def countdown(left: float, suffix: str = "") -> str:
    left = max(0.0, left)
    return f"in {int(left // 60)}m {int(left % 60):02d}s{suffix}" if left >= 60 else f"in {int(left)}s{suffix}"


def next_tick_text(app: AppState) -> str:
    """When the next tick runs: now, on the cron entry's schedule, on the auto-tick countdown, or manual."""
    if app.ticking:
        return "now (running)"
    snap = app.snapshot
    if snap is not None and snap.cron_installed:
        from memento_core.cron import next_run_after

        when = next_run_after(snap.cron_schedule, datetime.now()) if snap.cron_schedule else None
        if when is None or not app.show_clock:
            return f"cron every {snap.config.schedule_every_text}"
        return countdown((when - datetime.now()).total_seconds(), " (cron)")
    if not app.auto_tick:
        return "manual"
    if app.next_tick_at is None:
        return "soon"
    if not app.show_clock:
        return "in —"
    return countdown(app.next_tick_at - app.now)


class StatusHeader(Static):
    """Rendered from a snapshot plus the app's clock-driven values."""

    app: AppState

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self.refresh_header, init=False)
        self.refresh_header()

    def refresh_header(self) -> None:
        app = self.app
        uptime = app.now - app.started_at if app.show_clock else None
        self.show(app.snapshot, ticking=app.ticking, uptime=uptime, next_tick=next_tick_text(app))

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
