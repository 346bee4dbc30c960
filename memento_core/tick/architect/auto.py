"""`[architect] auto = true` (SPEC §16): a tick that finds the pipeline BLOCKED runs the architect.

It runs once per blocked state (the blocked tasks' definitions and the unread
notes: nothing new, no new run) and at most ``max_runs_per_day`` times a UTC
day. When it cannot help (the limit is reached, it changed nothing, its change
was rolled back) the person is alerted through `.memento_alert`
(afterwards.write_alert, ``extra="architect: …"``), which stays while the
blocked state does.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime

from ... import notes
from ...plan.model import Plan
from ...runlog import Outcome, cron_log
from ..afterwards import write_alert, write_checkpoint
from ..context import TickContext
from .changes import definition


def blocked_signature(ctx: TickContext, plan: Plan) -> str:
    """The blocked state: each blocked task's definition and retries, and the unread notes' keys."""
    parts = [f"{t.id}\0{definition(t)}\0{t.retries}" for t in plan.tasks if t.status == "!"]
    parts += failing_checks(ctx)  # a failing check on a phase's pull request counts as blocked (SPEC §19)
    try:
        parts += sorted(n.key for n in notes.parse_notes(ctx.ws.notes_path) if not n.read)
    except Exception:  # noqa: BLE001 - an unreadable notes file: the tasks alone say the state
        pass
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def failing_checks(ctx: TickContext) -> list[str]:
    """Each failing required check of a phase's pull request, with the head it failed on."""
    from ...forge import pulls

    return [f"check\0{r.phase}\0{r.number}\0{r.head}\0{c.name}" for r in pulls.load(ctx.ws).values()
            if r.checks == "failing" and r.state in ("open", "merged") for c in r.failing]


def after_blocked(ctx: TickContext, plan: Plan, outcome: Outcome) -> Outcome:
    """Run the architect for a new blocked state (the tick holds the lock; its housekeeping is done)."""
    state, config = ctx.state, ctx.config
    signature = blocked_signature(ctx, plan)
    if signature == state.architect_signature:
        if state.architect_alert:  # housekeeping rewrote the alert: the architect's word stays in it
            write_alert(ctx, plan, extra=state.architect_alert)
        return outcome
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    limit = config.architect_max_runs_per_day
    if state.architect_runs_today(today) >= limit:
        return _cannot_help(ctx, plan, outcome, signature,
                            f"architect: the daily limit of {limit} automatic run(s) is reached; "
                            "the blocked tasks wait for a person")
    from .run import CHANGED, architect_under_lock

    state.architect_runs = state.architect_runs_today(today) + 1
    state.architect_day = today
    result = architect_under_lock(ctx)
    cron_log(ctx.ws, f"architect ({state.architect_runs}/{limit} today): {result.outcome}: {result.message}")
    if result.outcome != CHANGED:
        return _cannot_help(ctx, plan, outcome, signature, f"architect: {result.message}")
    now = ctx.plan()
    state.architect_signature, state.architect_alert = "", ""
    state.last_event = ""  # the next BLOCKED (if any) is a new state and is written again
    write_alert(ctx, now)
    write_checkpoint(ctx, now)
    state.save(ctx.ws)
    return replace(outcome, message=f"{outcome.message}; architect: {result.message}")


def _cannot_help(ctx: TickContext, plan: Plan, outcome: Outcome, signature: str, said: str) -> Outcome:
    state = ctx.state
    state.architect_signature, state.architect_alert = signature, said
    write_alert(ctx, ctx.plan(), extra=said)
    state.save(ctx.ws)
    return replace(outcome, message=f"{outcome.message}; {said}")
