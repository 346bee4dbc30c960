"""Which task a claim takes, and how many (SPEC §12 "Across machines"): in a
``parallel: true`` phase any pickable task at random rather than the first
(:func:`_spread`), and, while this host's pushes lose races, its share of the phase's
unfinished tasks in one claim (:func:`_batch`): a fraction of a push a task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..held import held_tasks
from ..plan.model import Plan, Task
from ..scheduler import overlap, pickable
from . import remote
from .host import fleet
from .remote import _seen

if TYPE_CHECKING:
    from ..tick.context import TickContext


BATCH = 4  # the most tasks one claim takes, once this tick's pushes have lost races (see _batch)


def _batch(ctx: TickContext, plan: Plan, task: Task, room: int, rev: str = "HEAD") -> list[Task]:
    """The tasks one claim takes: ``task``, and, while the remote's branch is contended (the last
    push lost a race, or lost one before it landed) and ``room`` (the tasks this tick may still
    attempt) allows, more free tasks of its `parallel: true` phase, at random: this host's share
    of the phase's unfinished tasks (free or claimed, over the hosts holding claims, this one
    counted), at most BATCH. The host attempts them one after another and pushes their results
    together with its next claim: a task then costs a fraction of a push to the branch, which
    every host's push must take in turn, so the fleet loses fewer races. The share keeps one
    host from queueing tasks that others, finishing sooner, would start; hosts whose pushes
    land at their first try claim one task at a time, so a task never waits on another host's
    queue unless the fleet's pushes contend (a fleet woken in the same minute claims its share
    once, then one by one)."""
    f = fleet(ctx)
    phase = plan.phase(task.phase) if task.phase else None
    if not f.contended or room < 2 or phase is None or not phase.parallel:
        return [task]
    max_retries = plan.meta.max_retries
    held = held_tasks(ctx, plan, rev)  # a task whose verify the architect changed waits for a person
    running = [t.context_files for t in plan.tasks if t.status == "~"]  # other hosts' claims
    others = [t for t in plan.tasks if t.phase == task.phase and t.id != task.id and t.id not in held
              and pickable(t, max_retries, plan) and not any(overlap(t.context_files, r) for r in running)]
    hosts = 1 + len({beat.host for beat in _seen(ctx).values()} - {f.host})
    unfinished = sum(1 for t in plan.tasks if t.phase == task.phase and t.status in (" ", "~"))
    size = min(BATCH, room, max(1, unfinished // hosts))
    return [task, *remote._CHANCE.sample(others, min(len(others), size - 1))]


def _spread(ctx: TickContext, plan: Plan, task: Task, rev: str = "HEAD") -> tuple[Plan, Task]:
    """In a `parallel: true` phase, any of its pickable tasks at random rather than the first:
    hosts that fetched the same plan race for the same task less often (each lost race is a
    fetch and a push more). Other phases keep the first, in file order."""
    phase = plan.phase(task.phase) if task.phase else None
    if phase is None or not phase.parallel:
        return plan, task
    max_retries = plan.meta.max_retries
    held = held_tasks(ctx, plan, rev)
    running = [t.context_files for t in plan.tasks if t.status == "~"]  # other hosts' claims
    candidates = [t for t in plan.tasks if t.phase == task.phase and t.id not in held
                  and pickable(t, max_retries, plan) and not any(overlap(t.context_files, r) for r in running)]
    return plan, (remote._CHANCE.choice(candidates) if candidates else task)
