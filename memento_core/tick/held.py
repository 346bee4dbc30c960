"""A task whose verify the architect changed does not run until a person acknowledged it (SPEC §13, §16).

The architect repairs a blocked task by editing it, and its verify is what judges the
worker: a weakened one (`true`) would pass a task whose code is still broken. Each verify
command it changes is listed in ``.memento/verify_changes.json`` (verify_changes.py) until
a person runs `memento architect --ack [TASK]` or presses the dashboard's `v`; while its
task is listed, the pick passes over it (run.pick_task, the parallel crew, the fleet's
claims), says so once per tick in logs/cron.log, and the other tasks run. When nothing
else can run, the tick waits for the person: "⏸ WAITING FOR A PERSON" in the status log,
once per change, and exit code 1 (needs attention). After the acknowledgement the task is
picked like any other.
"""

from __future__ import annotations

from ..plan import Plan
from ..runlog import cron_log
from ..scheduler import TASK, Verdict, open_phases, pick, pickable
from ..verify_changes import ACK_COMMAND, pending
from .context import TickContext

HELD = "held"  # a Verdict kind: nothing else to pick, a held task waits for a person
MESSAGE = "⏸ WAITING FOR A PERSON"


def held_tasks(ctx: TickContext, plan: Plan) -> frozenset[str]:
    """The tasks of ``plan`` whose verify change no person acknowledged yet (logged once a tick)."""
    listed = {c.task.upper(): c for c in pending(ctx.ws)}
    if not listed:
        return frozenset()
    found = frozenset(t.id for t in plan.tasks if t.id.upper() in listed and t.status == " ")
    for task_id in sorted(found - ctx.held_said):
        cron_log(ctx.ws, f"{task_id} not picked: the architect changed its verify ({listed[task_id.upper()].describe()}); "
                         f"it runs once a person has checked it: `{ACK_COMMAND} {task_id}`")
    ctx.held_said |= found
    return found


def pick_unheld(ctx: TickContext, plan: Plan) -> Verdict:
    """:func:`scheduler.pick` passing over the held tasks; when only a held task could run, the
    :data:`HELD` verdict naming them."""
    held = held_tasks(ctx, plan)
    verdict = pick(plan, exclude=held)
    if verdict.kind == TASK or not held:
        return verdict
    opened = {p.id for p in open_phases(plan)}
    waiting = tuple(t.id for t in plan.tasks if t.id in held and t.phase in opened
                    and pickable(t, plan.meta.max_retries, plan))
    if not waiting:
        return verdict  # no held task could run anyway (blocked, waiting on its phase): that is what to say
    return Verdict(HELD, phase=plan.task(waiting[0]).phase, tasks=waiting,
                   message=f"{MESSAGE} — the architect changed the verify of {', '.join(waiting)}; it runs once a "
                           f"person has checked it: `{ACK_COMMAND}`")
