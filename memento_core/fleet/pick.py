"""The pick with a remote (SPEC §12 "Across machines"): sync, pick, claim by compare-and-swap;
a lost race fetches and picks again, up to :data:`host.MAX_RACES` times. A task claimed with the
last result's push (or with the task before it, a claim of several) is taken without a sync
or a claim of its own. A remote that cannot be used, or refuses, ends the tick.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from ..errors import EXIT_ATTENTION, EXIT_OK, MementoError
from ..plan.model import Plan, Task
from ..runlog import Outcome, cron_log
from . import claims
from .batch import _batch, _spread
from .host import MAX_RACES, FleetConflict, enabled
from .publish import release_chained
from .remote import PushRefused
from .sync import sync

if TYPE_CHECKING:
    from ..tick.context import TickContext


def pick(ctx: TickContext, pick_task: Callable, afterwards: Callable, room: int) -> tuple[Plan, Task] | Outcome:
    """Sync with the remote, pick, claim by compare-and-swap; a lost race fetches and picks again.
    A remote that cannot be used ends the tick (run.afterwards when tasks ran). ``room``: how
    many more tasks this tick may attempt (a claim may take more than one, :func:`batch._batch`)."""
    if not enabled(ctx):
        return pick_task(ctx)
    chained = _take_chained(ctx)
    if chained is not None:
        return chained
    stop = partial(_stopped, ctx, afterwards=afterwards)
    try:
        for _ in range(MAX_RACES):
            sync(ctx)
            mode = ctx.plan().meta.tick_mode
            if mode != "auto":  # a person paused the fleet by pushing the plan
                cron_log(ctx.ws, f"tick skipped: tick_mode is {mode} on {ctx.config.workers_remote}")
                return stop(f"tick skipped: tick_mode is {mode} (the remote's plan)", code=EXIT_OK)
            picked = pick_task(ctx)
            if isinstance(picked, Outcome):
                return picked
            picked = _spread(ctx, *picked)
            if claims.claim(ctx, picked[1], _batch(ctx, *picked, room)):
                return picked
            cron_log(ctx.ws, f"lost the race for {picked[1].id} to another host: fetching and picking again")
    except FleetConflict as exc:
        return stop(f"{exc}; rebase or merge by hand, then the next tick runs")
    except PushRefused as exc:
        return stop(f"{exc}; nothing was claimed, the next tick tries again")
    except MementoError as exc:
        return stop(f"the remote {ctx.config.workers_remote!r} could not be used: {exc}")
    return stop(f"lost the race to the remote {MAX_RACES} times; the next tick tries again")


def _take_chained(ctx: TickContext) -> tuple[Plan, Task] | None:
    """The task claimed with the last result's push (:func:`publish.publish`) or with the task before it
    (a claim of two, :func:`batch._batch`): no sync, no claim of its own."""
    f = ctx.fleet
    if f is None or not f.chained:
        return None
    task_id = f.chained
    if f.task != task_id:
        return None
    plan = ctx.plan()
    task = None if plan.plan_errors else plan.task(task_id)
    if task is None:  # the work tree's plan cannot be read: the claims go back (finish), a normal pick follows
        release_chained(ctx)
        return None
    f.queued.pop(0)
    return plan, task


def _stopped(ctx: TickContext, message: str, *, afterwards: Callable, code: int = EXIT_ATTENTION) -> Outcome:
    if code != EXIT_OK:
        cron_log(ctx.ws, f"tick stopped: {message}")
    if ctx.results:
        return afterwards(ctx, code, message)
    ctx.state.save(ctx.ws)
    return Outcome(code, message)
