"""logs/cron.log and the outcome of a tick: the lightest part of the tick path."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .workspace import Workspace


def utc_stamp(when: datetime | None = None) -> str:
    """``when`` (default: now; naive means UTC) as the stamp every Memento file uses, e.g.
    2026-11-29T14:45:00Z. The one place that formats it."""
    when = when or datetime.now(UTC)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def cron_log(ws: Workspace, message: str) -> None:
    """One line in logs/cron.log (skips and refusals never go to TICK_STATUS.md)."""
    from .locks import open_append

    with open_append(ws.cron_log, split=True) as fh:  # a hard link there: made a file of its own first
        fh.write(f"{utc_stamp()} {message}\n")


@dataclass
class TaskResult:
    """How one attempt ended (the tick's outcome lists one per task it ran)."""

    task_id: str
    passed: bool
    reason: str = ""
    duration: float = 0.0
    commit: str | None = None
    blocked: bool = False
    asked: bool = False  # the worker asked a question: no failure for the breaker (SPEC §18)


def rollback_folder(ws: Workspace, label: str) -> Path:
    """A new folder under logs/rollback/, named so that name order is time order."""
    return ws.rollback_dir / f"{datetime.now(UTC).strftime('%Y-%m-%dT%H%M%S.%fZ')}-{label}"


@dataclass
class Outcome:
    """How a tick ended: exit code (0 ran, 1 needs attention, 2 could not run) and a summary."""

    exit_code: int
    message: str
    tick: int | None = None
    results: list = field(default_factory=list)
    log: str | None = None
    warning: str = ""  # what a person must fix that did not stop the tick (a task's plan error)
