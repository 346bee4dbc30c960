"""logs/cron.log and the outcome of a tick: the lightest part of the tick path."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .workspace import Workspace

_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", re.ASCII)


def utc_stamp(when: datetime | None = None) -> str:
    """``when`` (default: now; naive means UTC) as the stamp every Memento file uses, e.g.
    2026-11-29T14:45:00Z. The one place that formats it."""
    when = when or datetime.now(UTC)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc_stamp(stamp: str) -> datetime | None:
    """A stamp as :func:`utc_stamp` writes it, read back (an aware UTC datetime); None when it is
    not one. ``datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")`` reads it the same, and reads
    any other shape here: imported and set up, strptime costs a tick more CPU than all its other
    reading of state files (issue 42), so the shape Memento writes is read by hand."""
    m = _STAMP.fullmatch(stamp) if isinstance(stamp, str) else None
    try:
        if m:
            return datetime(*map(int, m.groups()), tzinfo=UTC)
        if isinstance(stamp, str) and len(stamp) < 15:
            return None  # shorter than strptime's shortest match, 0000-1-1T0:0:0Z ("": no rate limit)
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return None


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
