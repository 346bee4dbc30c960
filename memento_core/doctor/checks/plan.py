"""Checks of the plan and what hangs off it: plan errors, Meta keys, stale claims, unread notes."""

from __future__ import annotations

from datetime import timedelta

from ...errors import MementoError
from ...lines import plural
from ...notes import parse_notes, unread_older_than
from ...state import claim_is_stale, read_claim
from ..context import Context
from ..findings import CRITICAL, INFO, WARNING, CheckResult, Finding
from .fleet import held_elsewhere

NOTE_AGE = timedelta(days=1)


def check_plan(c: Context) -> CheckResult:
    rel = c.rel(c.ws.plan_path)
    if c.plan is None:
        exc = c.plan_problem
        line = getattr(exc, "line", 0) or None
        message = exc.args[0] if exc and exc.args else str(exc)
        return [Finding(CRITICAL, "plan-valid", message, rel, line)]
    from ...scheduler import stopping_errors

    stopping = set(stopping_errors(c.plan))  # they stop every tick, as a plan-level error does
    found = []
    for e in c.plan.errors:
        if e.severity == "error":
            severity = CRITICAL if e.scope == "plan" or e in stopping else WARNING
        else:
            severity = INFO
        who = f"{e.task_id} " if e.task_id else ""
        found.append(Finding(severity, "plan-valid", f"{who}{e.message}", e.path, e.line or None))
    n = len(c.plan.tasks)
    return found or f"{rel}: {plural(n, 'task')} in {plural(len(c.plan.phases), 'phase')}, no problems"


def check_meta_keys(c: Context) -> CheckResult:
    plan = c.plan
    if plan is None:
        return None
    found = [Finding(WARNING, "meta-keys", f"unknown Meta key `{key}` (kept as written; Memento does not use it)",
                     plan.path, plan.meta.lines.get(key) or None) for key in plan.meta.extra]
    return found or "Meta: every key is known"


def check_claims(c: Context) -> CheckResult:
    plan = c.plan
    if plan is None:
        return None
    found = []
    live = 0
    for task in plan.tasks:
        if task.status != "~":
            continue
        claim = read_claim(c.ws, task.id)
        if claim is None and held_elsewhere(c, task.id):
            live += 1  # another host's claim: its heartbeat ref is judged by the ticks (fleet/stale.py)
            continue
        why = claim_is_stale(claim, plan.meta.stale_lock_timeout, now=c.now.timestamp())
        if why is None:
            live += 1
            continue
        found.append(Finding(WARNING, "stale-claims",
                             f"{task.id} is [~] but its worker is gone ({why}); the next tick resets it to [ ]",
                             plan.path, task.line))
    if found:
        return found
    return f"{live} task(s) in progress with a live worker" if live else "no stale [~] claims"


def check_notes(c: Context) -> CheckResult:
    rel = c.rel(c.ws.notes_path)
    try:
        notes = parse_notes(c.ws.notes_path)
    except MementoError as exc:
        return [Finding(WARNING, "unread-notes", f"cannot read the notes: {exc.args[0]}", rel)]
    plan = c.plan
    found = []
    for note in unread_older_than(notes, NOTE_AGE, c.now):
        if note.is_global:
            severity, why = WARNING, "no worker has taken it"
        else:
            task = plan.task(note.target) if plan is not None else None
            if task is None:
                severity, why = WARNING, f"{note.target} is not a task of the plan, so no worker will read it"
            elif task.status in ("x", "-", "!"):
                state = {"x": "done", "-": "skipped", "!": "blocked"}[task.status]
                severity, why = WARNING, f"{note.target} is {state}, so no worker will read it"
            else:
                severity, why = INFO, f"{note.target} has not run yet"
        found.append(Finding(severity, "unread-notes",
                             f"note for {note.target} from {note.timestamp} is unread after more than a day ({why})",
                             rel, note.line))
    return found or "no unread note older than a day"
