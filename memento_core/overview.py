"""What `memento status` and the dashboard say about a workspace: one set of rules."""

from __future__ import annotations

from collections.abc import Sequence

from . import scheduler
from .config import Config, load_config
from .errors import MementoError
from .plan import Plan
from .state import TickState
from .status_log import TickEntry
from .workspace import Workspace


def summarize(ws: Workspace, plan: Plan, entries: Sequence[TickEntry]) -> dict:
    """Everything `memento status` shows, as plain data (its --json schema), from files already read.

    ``entries`` are the status log's, oldest first. The dashboard calls this with what it
    has read; the CLI through :func:`status_document`.
    """
    verdict = scheduler.pick(plan)
    total = scheduler.plan_progress(plan)
    durations = [e.duration_seconds for e in entries if e.status == "SUCCESS" and e.duration_seconds is not None]
    # Time left means something only while tasks can still be picked.
    can_progress = verdict.kind in (scheduler.TASK, scheduler.WAITING) and not plan.plan_errors
    eta = scheduler.estimate_left(plan, durations) if can_progress else None
    state_file = TickState.load(ws)
    return {
        "project": plan.title,
        "root": str(ws.root),
        "plan": ws.rel(ws.plan_path),
        "state": pipeline_state(plan, verdict),
        "tick_mode": plan.meta.tick_mode,
        "total_ticks": plan.meta.total_ticks,
        "counts": {
            "total": total.total, "done": total.done, "pending": total.pending,
            "blocked": total.blocked, "in_progress": total.in_progress, "skipped": total.skipped,
        },
        "phases": _phases(plan),
        "next": _next_step(plan, verdict),
        "blocked": _blocked(plan, entries),
        "eta_seconds": round(eta, 1) if eta is not None else None,
        "alert": ws.alert_path.exists(),
        "breaker": {"tripped": bool(state_file.breaker_reason), "reason": state_file.breaker_reason or None,
                    "at": state_file.breaker_at or None},
        "config_error": _config_error(ws),
        **_spending(ws, state_file, entries),
        "plan_errors": [str(e) for e in plan.plan_errors],
        "last_tick": entries[-1].timestamp if entries else None,
    }


def pipeline_state(plan: Plan, verdict) -> str:
    """INVALID, PAUSED, STOPPED, BLOCKED, COMPLETE or RUNNING."""
    if plan.plan_errors:
        return "INVALID"
    if plan.meta.tick_mode != "auto":
        return plan.meta.tick_mode.upper()
    if verdict.kind == scheduler.BLOCKED:
        return "BLOCKED"
    if verdict.kind == scheduler.COMPLETE:
        return "COMPLETE"
    return "RUNNING"


def _blocked(plan: Plan, entries: Sequence[TickEntry]) -> list[dict]:
    last_by_task: dict[str, object] = {}
    for entry in entries:
        if entry.task_id and not entry.is_event:
            last_by_task[entry.task_id] = entry
    return [{"id": task.id, "title": task.title, "retries": task.retries, "line": task.line,
             "last_error": getattr(last_by_task.get(task.id), "error", None)}
            for task in plan.tasks if task.status == "!"]


def _phases(plan: Plan) -> list[dict]:
    finished = scheduler.finished_phases(plan)
    return [{
        "id": phase.id, "title": phase.title, "line": phase.line,
        "total": prog.total, "done": prog.done, "blocked": prog.blocked,
        "pending": prog.pending, "in_progress": prog.in_progress, "skipped": prog.skipped,
        "open": all(d in finished for d in phase.depends), "depends": list(phase.depends),
    } for phase, prog in scheduler.phase_progress(plan)]


def _next_step(plan: Plan, verdict) -> dict:
    if plan.plan_errors:
        return {"kind": "invalid", "task": None, "message": "no task runs until the plan is fixed (`memento lint`)"}
    return {"kind": verdict.kind, "task": verdict.task.id if verdict.task else None, "message": verdict.message}


def _spending(ws: Workspace, state: TickState, entries: Sequence[TickEntry]) -> dict:
    """"usage", "rate_limit" and "budget" (SPEC §14) from usage.json, state.json and memento.toml.

    Without usage.json (a project from before it, or a copied one) the usage is
    summed from the status log's Usage fields instead.
    """
    from datetime import UTC, datetime

    from .spending import ledger_path, usage_from_entries, usage_summary

    usage = usage_summary(ws) if ledger_path(ws).exists() else usage_from_entries(entries)
    try:
        config = load_config(ws.config_path)
    except MementoError:
        config = Config()
    until = state.rate_limited_until or None
    if until and until <= datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"):
        until = None  # the wait is over; the next tick clears it
    daily = config.budget_daily_usd
    return {
        "usage": usage,
        "rate_limit": {"until": until, "preset": (state.rate_limited_preset or None) if until else None},
        "budget": {"daily_usd": daily, "task_usd": config.budget_task_usd,
                   "reached": daily > 0 and usage["today"]["cost_usd"] >= daily},
    }


def _config_error(ws: Workspace) -> str | None:
    try:
        load_config(ws.config_path)
    except MementoError as exc:
        return str(exc)
    return None
