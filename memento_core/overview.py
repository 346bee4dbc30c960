"""What `memento status` and the dashboard say about a workspace: one set of rules."""

from __future__ import annotations

from collections.abc import Sequence

from . import scheduler
from .config import load_config
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
    last_by_task: dict[str, object] = {}
    for entry in entries:
        if entry.task_id and not entry.is_event:
            last_by_task[entry.task_id] = entry
    blocked = []
    for task in plan.tasks:
        if task.status == "!":
            last = last_by_task.get(task.id)
            blocked.append({
                "id": task.id,
                "title": task.title,
                "retries": task.retries,
                "line": task.line,
                "last_error": getattr(last, "error", None),
            })
    finished = scheduler.finished_phases(plan)
    phases = []
    for phase, prog in scheduler.phase_progress(plan):
        phases.append({
            "id": phase.id, "title": phase.title, "line": phase.line,
            "total": prog.total, "done": prog.done, "blocked": prog.blocked,
            "pending": prog.pending, "in_progress": prog.in_progress, "skipped": prog.skipped,
            "open": all(d in finished for d in phase.depends), "depends": list(phase.depends),
        })
    mode = plan.meta.tick_mode
    if plan.plan_errors:
        state = "INVALID"
    elif mode != "auto":
        state = mode.upper()
    elif verdict.kind == scheduler.BLOCKED:
        state = "BLOCKED"
    elif verdict.kind == scheduler.COMPLETE:
        state = "COMPLETE"
    else:
        state = "RUNNING"
    # Time left means something only while tasks can still be picked.
    can_progress = verdict.kind in (scheduler.TASK, scheduler.WAITING) and not plan.plan_errors
    eta = scheduler.estimate_left(plan, durations) if can_progress else None
    if plan.plan_errors:
        next_step = {"kind": "invalid", "task": None,
                     "message": "no task runs until the plan is fixed (`memento lint`)"}
    else:
        next_step = {"kind": verdict.kind, "task": verdict.task.id if verdict.task else None,
                     "message": verdict.message}
    state_file = TickState.load(ws)
    try:
        load_config(ws.config_path)
        config_error = None
    except MementoError as exc:
        config_error = str(exc)
    return {
        "project": plan.title,
        "root": str(ws.root),
        "plan": ws.rel(ws.plan_path),
        "state": state,
        "tick_mode": mode,
        "total_ticks": plan.meta.total_ticks,
        "counts": {
            "total": total.total, "done": total.done, "pending": total.pending,
            "blocked": total.blocked, "in_progress": total.in_progress, "skipped": total.skipped,
        },
        "phases": phases,
        "next": next_step,
        "blocked": blocked,
        "eta_seconds": round(eta, 1) if eta is not None else None,
        "alert": ws.alert_path.exists(),
        "breaker": {"tripped": bool(state_file.breaker_reason), "reason": state_file.breaker_reason or None,
                    "at": state_file.breaker_at or None},
        "config_error": config_error,
        "plan_errors": [str(e) for e in plan.plan_errors],
        "last_tick": entries[-1].timestamp if entries else None,
    }
