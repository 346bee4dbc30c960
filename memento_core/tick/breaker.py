"""The circuit breaker (SPEC §4 step 16): pause the plan when ticking on would only do harm.

It trips on `circuit_breaker_threshold` consecutive ticks that attempted work
and passed nothing, on more than 30% of the tasks blocked, on less than 500 MB
of free disk, or on a git error. Tripping sets `tick_mode: paused` and writes
one "🔴 CIRCUIT BREAKER TRIGGERED" entry; a person resumes by hand.
"""

from __future__ import annotations

import shutil

from ..errors import MementoError
from ..plan.edits import edit_plan
from ..plan.model import Plan
from ..runlog import utc_stamp
from ..workspace import KEPT_DOCS
from .context import TickContext

MIN_FREE_BYTES = 500 * 1024 * 1024
BLOCKED_RATIO = 0.30


def count_this_tick(ctx: TickContext) -> None:
    """A tick that attempted work and passed nothing lengthens the failure streak; a pass ends it."""
    if not ctx.attempted:
        return
    if any(r.passed for r in ctx.results):
        ctx.state.consecutive_failed_ticks = 0
    elif ctx.results and all(r.asked for r in ctx.results):
        return  # a question is no failure: the streak neither grows nor ends (SPEC §18)
    elif not ctx.interrupted and not ctx.rate_limited:
        ctx.state.consecutive_failed_ticks += 1


def breaker_reason(ctx: TickContext, plan: Plan, free_bytes: int) -> str:
    """Why the circuit breaker trips after this tick, or ''."""
    streak = ctx.state.consecutive_failed_ticks
    if streak >= plan.meta.circuit_breaker_threshold:
        return f"{streak} consecutive ticks attempted work and passed nothing"
    counted = [t for t in plan.tasks if t.status != "-"]
    blocked = sum(1 for t in counted if t.status == "!")
    if counted and blocked / len(counted) > BLOCKED_RATIO:
        # Past tense: the reason is kept until a person resumes, the blocked count may be 0 by then.
        return f"{blocked} of {len(counted)} tasks were blocked (more than {int(BLOCKED_RATIO * 100)}%)"
    if free_bytes < MIN_FREE_BYTES:
        return f"only {free_bytes // (1024 * 1024)} MB free on disk (less than 500 MB)"
    if ctx.git_failed:
        return f"git error: {ctx.git_failed}"
    return ""


def check_breaker(ctx: TickContext, plan: Plan) -> Plan:
    """Count this tick, trip the breaker if it must (once), and return the plan as it is now."""
    count_this_tick(ctx)
    reason = breaker_reason(ctx, plan, shutil.disk_usage(ctx.root).free)
    if not reason or ctx.state.breaker_reason:
        return plan
    ctx.state.breaker_reason, ctx.state.breaker_at = reason, utc_stamp()
    try:
        edit_plan(ctx.ws.plan_path, lambda e: e.set_meta("tick_mode", "paused"))
    except MementoError:
        pass
    ctx.event(f"🔴 CIRCUIT BREAKER TRIGGERED — reason: {reason}",
              [("Action", "fix the cause, then `memento resume` (or resume in the dashboard)")])
    if ctx.config is not None and ctx.config.workers_remote:
        ctx.commit(list(KEPT_DOCS), "memento: circuit breaker triggered")
    # else: the tick's one commit takes the entry (housekeeping.fold_into_tick_commit, right after)
    return ctx.plan()
