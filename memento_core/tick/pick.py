"""Step 6 of SPEC §4, the pick, passing over what must wait: a task whose verify the architect
changed until a person acknowledged it (held.py, SPEC §13, §16), a phase waiting for its pull
request (land.py, SPEC §19), and, beside the tasks running now, a task whose context_files overlap
theirs. When only a held task could run, the tick waits for the person: "⏸ WAITING FOR A PERSON"
in the status log, once per change, and exit code 1 (needs attention; run.nothing_to_pick).
Whether the picked task runs beside others (a `parallel: true` phase: workers.py, SPEC §12).
"""

from __future__ import annotations

from ..held import held_tasks
from ..plan.model import Plan, Task
from ..scheduler import TASK, Verdict, open_phases, pick, pickable
from ..verify_changes import ACK_COMMAND
from .context import TickContext

HELD = "held"  # a Verdict kind: nothing else to pick, a held task waits for a person
MESSAGE = "⏸ WAITING FOR A PERSON"


def pick_unheld(ctx: TickContext, plan: Plan, *, beside=()) -> Verdict:
    """:func:`scheduler.pick` passing over the held tasks, the tasks of phases that wait for a pull
    request (land.pick_verdict) and, ``beside`` the tasks running now, those whose context_files
    overlap theirs; when only a held task could run, the :data:`HELD` verdict naming them, when
    only a phase waiting for its pull request, the verdict naming the pull request."""
    from .land import pick_verdict, unlanded

    held = held_tasks(ctx, plan)
    waiting, on_pull = pick_verdict(ctx, plan)  # [forge] land = "pr": phases waiting for a merge
    verdict = pick(plan, exclude=held | waiting, beside=beside)
    if verdict.kind == TASK:
        return verdict
    if on_pull is not None:
        return on_pull
    if not held:
        return unlanded(ctx, verdict)
    opened = {p.id for p in open_phases(plan)}
    waiting = tuple(t.id for t in plan.tasks if t.id in held and t.phase in opened
                    and pickable(t, plan.meta.max_retries, plan))
    if not waiting:
        return verdict  # no held task could run anyway (blocked, waiting on its phase): that is what to say
    return Verdict(HELD, phase=plan.task(waiting[0]).phase, tasks=waiting,
                   message=f"{MESSAGE} — the architect changed the verify of {', '.join(waiting)}; it runs once a "
                           f"person has checked it: `{ACK_COMMAND}`")


def runs_in_parallel(ctx: TickContext, plan: Plan, task: Task) -> bool:
    """``task`` is in a `parallel: true` phase and `[workers] max` is above 1. With a fleet
    (`[workers] remote`) every host runs one task at a time: its claim is the remote's CAS."""
    if ctx.config is None or ctx.config.workers_max < 2 or ctx.config.workers_remote:
        return False
    return any(p.id == task.phase and p.parallel for p in plan.phases)
