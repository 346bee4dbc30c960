"""What the tick calls of the fleet (SPEC §12 "Across machines"): tick/run.py's steps and the
architect name these, each living in the module the package's table says.

Without a remote (``[workers] remote`` unset, :func:`host.enabled` False) each returns here at
once, as the function it stands for would, and the module doing the work is imported only with
a remote: a tick without a fleet, the usual one, loads none of the fleet's modules but host.py
(issue 42: they cost a trivial tick 30 ms of CPU to import and nothing to run). Each function
it calls keeps its own check, so that calling it directly means the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .host import enabled

if TYPE_CHECKING:
    from ..plan.model import Plan, Task
    from ..runlog import Outcome, TaskResult
    from ..tick.context import TickContext

__all__ = ["clean_leftovers", "commit_own_docs", "enabled", "finish", "foreign_claims", "pick", "publish",
           "push_for_architect", "refresh", "sync_for_architect"]


def pick(ctx: TickContext, pick_task: Callable, afterwards: Callable,
         room: int = 1) -> tuple[Plan, Task] | Outcome:
    """pick.pick: the tick's own pick without a remote."""
    if not enabled(ctx):
        return pick_task(ctx)
    from . import pick as picking

    return picking.pick(ctx, pick_task, afterwards, room)


def publish(ctx: TickContext, result: TaskResult, *, chain: bool = False, room: int = 1) -> TaskResult:
    """publish.publish: the result as it is without a remote."""
    if not enabled(ctx):
        return result
    from . import publish as publishing

    return publishing.publish(ctx, result, chain=chain, room=room)


def finish(ctx: TickContext, outcome: Outcome) -> Outcome:
    """sync.finish: the outcome as it is without a remote."""
    if not enabled(ctx):
        return outcome
    from . import sync

    return sync.finish(ctx, outcome)


def refresh(ctx: TickContext, plan: Plan) -> Plan:
    """sync.refresh: the plan as read without a remote."""
    if not enabled(ctx):
        return plan
    from . import sync

    return sync.refresh(ctx, plan)


def sync_for_architect(ctx: TickContext) -> None:
    """sync.sync_for_architect: nothing to sync without a remote."""
    if not enabled(ctx):
        return
    from . import sync

    sync.sync_for_architect(ctx)


def push_for_architect(ctx: TickContext) -> None:
    """sync.push_for_architect: nothing to push without a remote."""
    if not enabled(ctx):
        return
    from . import sync

    sync.push_for_architect(ctx)


def foreign_claims(ctx: TickContext, plan: Plan) -> frozenset[str]:
    """stale.foreign_claims: no other host's claims without a remote."""
    if not enabled(ctx):
        return frozenset()
    from . import stale

    return stale.foreign_claims(ctx, plan)


def clean_leftovers(ctx: TickContext) -> None:
    """integrate.clean_leftovers: no rebase left half done without a remote."""
    if not enabled(ctx):
        return
    from . import integrate

    integrate.clean_leftovers(ctx)


def commit_own_docs(ctx: TickContext, *, plan: bool = True) -> None:
    """docs.commit_own_docs (the tick calls it only with a remote)."""
    from . import docs

    docs.commit_own_docs(ctx, plan=plan)
