"""What `memento status` and the dashboard say about a workspace: one set of rules."""

from __future__ import annotations

from collections.abc import Sequence

from . import scheduler
from .plan import Plan
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
    can_progress = verdict.kind in (scheduler.TASK, scheduler.WAITING)
    eta = scheduler.estimate_left(plan, durations) if can_progress else None
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
        "next": {
            "kind": verdict.kind,
            "task": verdict.task.id if verdict.task else None,
            "message": verdict.message,
        },
        "blocked": blocked,
        "eta_seconds": eta,
        "alert": ws.alert_path.exists(),
        "plan_errors": [str(e) for e in plan.plan_errors],
        "last_tick": entries[-1].timestamp if entries else None,
    }
