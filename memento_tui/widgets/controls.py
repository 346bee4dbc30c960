"""Controls: resume, pause, stop, tick now, interval, auto-tick. Each button runs the same action as its key.

The buttons follow the App's shared state: the interval and cron entry from
the snapshot, ``auto_tick``, and ``ticking`` (tick now is disabled while one runs).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button

from ..app_state import AppState

WATCHED = ("snapshot", "auto_tick", "ticking")


class Controls(Vertical):
    app: AppState

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.border_title = "Controls"

    def compose(self) -> ComposeResult:
        yield Button("▶ Resume", id="btn-resume", action="screen.resume", compact=True)
        yield Button("‖ Pause", id="btn-pause", action="screen.pause", compact=True)
        yield Button("■ Stop", id="btn-stop", action="screen.stop", compact=True)
        yield Button("⟳ Tick now", id="btn-tick", action="screen.tick", compact=True)
        yield Button("Interval: …", id="btn-interval", action="screen.interval", compact=True)
        yield Button("Auto-tick: off", id="btn-auto", action="screen.auto_tick", compact=True)

    def on_mount(self) -> None:
        for name in WATCHED:
            self.watch(self.app, name, self.refresh_controls, init=False)
        self.refresh_controls()

    def refresh_controls(self) -> None:
        app = self.app
        tick = self.query_one("#btn-tick", Button)
        tick.label = "⟳ Ticking…" if app.ticking else "⟳ Tick now"
        tick.disabled = app.ticking
        if app.snapshot is not None:
            snap = app.snapshot
            self.show(app.interval_text(), app.auto_tick, snap.cron_installed and snap.cron_daemon)

    def show(self, every: str, auto_tick: bool, cron: bool) -> None:
        self.query_one("#btn-interval", Button).label = Text(f"Every {every}")
        label = "cron on" if cron else ("Auto-tick: on" if auto_tick else "Auto-tick: off")
        auto = self.query_one("#btn-auto", Button)
        auto.label = label
        auto.disabled = cron
