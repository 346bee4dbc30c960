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
    "IDLE": "bold yellow",
    "PAUSED": "bold yellow",
    "STOPPED": "bold red",
    "BLOCKED": "bold red",
    "REFUSED": "bold red",
    "INVALID": "bold magenta",
}


def state_word(app: AppState) -> tuple[str, str]:
    """The header's word and why (state_word.pipeline_word, as `memento status` says it): RUNNING
    only when something will tick, or a tick runs now (started here, or a claim of another's)."""
    from memento_core.state_word import pipeline_word

    snap = app.snapshot
    if snap is None or not snap.summary:
        return ("INVALID" if snap is not None and snap.plan_error else "…"), ""
    return pipeline_word(snap.summary, snap.state, cron_installed=snap.cron_installed,
                         cron_daemon=snap.cron_daemon, auto_tick=app.auto_tick,
                         ticking=app.ticking or bool(snap.claims))


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
    if snap is not None and snap.cron_installed and snap.cron_daemon:
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

    def on_resize(self) -> None:
        self.refresh_header()

    def refresh_header(self) -> None:
        app = self.app
        uptime = app.now - app.started_at if app.show_clock else None
        self.show(app.snapshot, ticking=app.ticking, uptime=uptime, next_tick=next_tick_text(app))

    def show(self, snap: Snapshot | None, *, ticking: bool, uptime: float | None,
             next_tick: str) -> None:
        # One line always (CSS height 1, no wrap, ellipsis): a wrapping header would shift
        # the whole screen at every tick. The most important facts come first; when the
        # line is too long the state's reason is said short (Needs you says it in full).
        if snap is None:
            out = Text("Memento ", style="bold", no_wrap=True, overflow="ellipsis", end="")
            out.append("loading…", style="dim")
            self.update(out)
            return
        out = self.line(snap, ticking, uptime, next_tick, short=False)
        if out.cell_len > max(self.content_size.width, 1):
            out = self.line(snap, ticking, uptime, next_tick, short=True)
        self.update(out)

    def line(self, snap: Snapshot, ticking: bool, uptime: float | None, next_tick: str, *,
             short: bool) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        out.append_text(literal(_short(snap.project, 16 if short else 28), "bold cyan", one_line=True))
        if snap.config.workers_remote:  # one host of a fleet (SPEC §12): which one this is
            out.append_text(literal(f" @{_short(snap.config.host, 12 if short else 24)}", "cyan", one_line=True))
        word, why = state_word(self.app)
        out.append(f"  ● {word}", style=STATE_STYLE.get(word, "bold"))
        if why and word != "RUNNING":
            out.append(" ")
            shown = why.split(" (")[0] if short else why
            out.append_text(literal(_short(shown, 40) if short else shown, STATE_STYLE.get(word, ""),
                                    one_line=True))
        if ticking or snap.claims:
            what = ", ".join(snap.claims)
            out.append("  ⟳ TICK RUNNING" + (f" {what}" if what else ""), style="bold yellow")
        if word == "RUNNING" or ticking:
            out.append(f"  next tick: {next_tick}")
        breaker = snap.state.breaker_reason
        if breaker:
            out.append("  ⚠ breaker: ", style="bold red")
            out.append_text(literal(breaker, "red", one_line=True))
        if snap.alert:
            out.append("  ⚠ alert", style="bold red")
        out.append_text(agent_facts(snap.summary, config_valid=not snap.config_error))
        if snap.config_error:
            out.append("  memento.toml: ", style="bold magenta")
            out.append_text(literal(snap.config_error, "magenta", one_line=True))
        if uptime is not None:
            out.append(f"  up {human(uptime)}", style="dim")
        return out


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def agent_facts(summary: dict, *, config_valid: bool = True) -> Text:
    """Unconfined, today's cost, rate limited (issues 12/13's keys, when the summary has them).

    An invalid memento.toml says nothing about the sandbox (no agent runs at all; the
    header names the error), so it is never called unconfined."""
    out = Text()
    sandbox = summary.get("sandbox") or {}
    if sandbox.get("confined") is False and config_valid:
        out.append("  ⚠ unconfined", style="bold red")
    until = (summary.get("rate_limit") or {}).get("until")
    if until:
        out.append("  rate limited until ", style="bold yellow")
        out.append_text(literal(str(until), "bold yellow", one_line=True))
    today = (summary.get("usage") or {}).get("today") or {}
    cost = today.get("cost_usd")
    if isinstance(cost, int | float) and (cost or today.get("tokens_in")):
        out.append(f"  ${cost:.2f} today", style="dim" if not (summary.get("budget") or {}).get("reached")
                   else "bold red")
    return out
