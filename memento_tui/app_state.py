"""What screens and widgets see of the App: its shared reactives and the two requests they make.

The App (app.py) holds the state several widgets show; widgets watch it
(``self.watch(self.app, "ticking", ...)`` in ``on_mount``, posting's pattern)
and read it through this Protocol, so nothing under screens/ or widgets/
imports app.py and the App never reaches into a screen to update it.
"""

from __future__ import annotations

from typing import Protocol

from memento_core.workspace import Workspace

from .snapshot import Snapshot


class AppState(Protocol):
    """The public face of ``MementoApp`` for the dashboard's screens and widgets."""

    ws: Workspace
    snapshot: Snapshot | None  # reactive: the files as last read; None until the first read
    ticking: bool  # reactive: a tick worker is running
    auto_tick: bool  # reactive: the dashboard ticks by itself on its interval
    next_tick_at: float | None  # reactive: clock() time of the next auto-tick; None: none planned
    now: float  # reactive: clock() at the last once-a-second beat (uptime, countdown)
    started_at: float  # clock() when the dashboard started
    show_clock: bool  # False in tests and screenshots: no times that change between runs

    def start_tick(self) -> bool:
        """Run one tick in a worker; False when one is already running."""
        ...

    def interval_text(self) -> str:
        """The auto-tick interval as the countdown uses it ("3s" in --demo, else memento.toml's)."""
        ...

    def tick_interval(self) -> float | None:
        """Seconds between the ticks that will really run (cron or auto-tick), None when none will."""
        ...

    def interval_changed(self) -> None:
        """Called after a person set the interval: the countdown restarts on it."""
        ...

    def toggle_auto_tick(self) -> None:
        """Switch auto-tick on or off (refused while a cron entry runs the ticks)."""
        ...
